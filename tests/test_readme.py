"""Every Python snippet in README.md runs as written, in order, as one session would."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_snippets_run_in_order() -> None:
    snippets = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(snippets) >= 4
    namespace: dict = {"__name__": "readme"}
    for i, code in enumerate(snippets):
        exec(compile(code, f"README.md snippet {i}", "exec"), namespace)
    clf = namespace["clf"]
    far = clf.predict_proba([[30.0, -30.0, 0.5, 0.5, 0.5]])[0]
    assert abs(far[0] - 0.5) < 0.05  # the README's "far: ≈ 1/2"
    grid = namespace["grid"]
    assert grid.selected_features_.tolist() == [0, 1]  # the README's "x₂ is noise"
