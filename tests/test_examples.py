"""Every gallery example (examples/plot_*.py) runs as a script and draws its figure; the
documentation build runs them again through sphinx-gallery."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("plot_*.py"))


def test_the_gallery_has_its_examples() -> None:
    assert len(EXAMPLES) >= 10, [e.name for e in EXAMPLES]


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.stem for e in EXAMPLES])
def test_example_runs_and_draws(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if "from river import" in example.read_text(encoding="utf-8"):
        pytest.importorskip("river")
    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: None)
    plt.close("all")
    runpy.run_path(str(example), run_name="__main__")
    figures = [plt.figure(n) for n in plt.get_fignums()]
    try:
        # Each example draws a figure whose every panel holds something, and prints what
        # the picture says in numbers.
        assert figures, example.name
        for figure in figures:
            for ax in figure.axes:
                drawn = ax.lines or ax.collections or ax.images or ax.patches
                assert drawn, f"{example.name}: an empty panel {ax.get_title()!r}"
        assert capsys.readouterr().out.strip(), f"{example.name} printed nothing"
    finally:
        plt.close("all")
