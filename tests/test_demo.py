"""The README's first command: ``python -m mondrian_learn demo``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def test_demo_prints_table_and_saves_partition_plot(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mondrian_learn", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rmse = {
        m.group(1).strip(): float(m.group(2))
        for m in re.finditer(r"^(.+?)\s+(\d+\.\d+)(?:\s+\d+\.\d+)?$", result.stdout, re.M)
    }
    baseline = rmse["predicting the training mean"]
    assert rmse["Mondrian forest (batch)"] < 0.9 * baseline
    assert rmse["Mondrian forest (online, 10 chunks)"] < 0.9 * baseline
    # The flight-delay table (AISTATS 2016, Tables 1–2): MF has the best NLPD, as in the paper.
    nlpd = {
        m.group(1): float(m.group(2))
        for m in re.finditer(
            r"^(Mondrian forest|RandomForest \(tree std\)|ExtraTrees \(tree std\))"
            r"\s+[\d.]+\s+[\d.]+\s+([\d.]+|inf)\s",
            result.stdout,
            re.M,
        )
    }
    assert len(nlpd) == 3, result.stdout
    assert nlpd["Mondrian forest"] < min(
        nlpd["RandomForest (tree std)"], nlpd["ExtraTrees (tree std)"]
    )
    for name in ("tree_partition.png", "uncertainty.png"):
        png = tmp_path / name
        assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
