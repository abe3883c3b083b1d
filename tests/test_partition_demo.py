"""The demo's kernel-PCA picture (``python -m mondrian_learn demo`` calls it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mondrian_learn._demo.partition import run


def test_kernel_pca_demo_prints_table_and_saves_picture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(tmp_path, seed=0)
    out = capsys.readouterr().out
    accuracy = {
        m.group(1).strip(): float(m.group(2))
        for m in re.finditer(r"^(.+?)\s+(\d\.\d{3})\s+\d+\.\d+$", out, re.M)
    }
    assert len(accuracy) == 3
    # Ten classes: chance is 0.1; every 2-D projection separates digits far better.
    assert min(accuracy.values()) > 0.4
    # The supervised Random Forest kernel separates classes better than linear PCA.
    assert accuracy["partition kernel PCA, Random Forest"] > accuracy["PCA (linear)"]
    png = tmp_path / "kernel_pca_digits.png"
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
