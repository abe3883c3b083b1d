"""The demo behind ``python -m mondrian_learn demo``: real data, tables and pictures, one module
per part (forest, classification, flights, kernel, partition, density)."""

from __future__ import annotations

from pathlib import Path

from mondrian_learn._demo import classification, density, flights, forest, kernel, partition


def run_demo(out: str, seed: int = 0) -> None:
    """Print the tables and save the plots into the folder ``out``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    forest.table(seed)
    classification.table(seed)
    flights.run(seed)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: pip install 'mondrian-learn[demo]' for the plots")
        return
    forest.plots(folder, seed)
    classification.confidence_plot(folder / "confidence.png", seed)
    print(f"saved {folder / 'confidence.png'}")
    partition.run(folder, seed)
    kernel.run(folder, seed)
    density.run(folder, seed)
