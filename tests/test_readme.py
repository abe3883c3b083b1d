"""Every Python snippet in README.md, then in docs/guide.md, runs as written, in order, as one
session would."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "guide.md"]


def test_readme_and_guide_snippets_run_in_order() -> None:
    namespace: dict = {"__name__": "readme"}
    for page in PAGES:
        snippets = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
        assert len(snippets) >= 1 if page.name == "README.md" else len(snippets) >= 4
        for i, code in enumerate(snippets):
            exec(compile(code, f"{page.name} snippet {i}", "exec"), namespace)
    clf = namespace["clf"]
    far = clf.predict_proba([[30.0, -30.0, 0.5, 0.5, 0.5]])[0]
    assert abs(far[0] - 0.5) < 0.05  # the guide's "far: ≈ 1/2"
    grid = namespace["grid"]
    assert grid.selected_features_.tolist() == [0, 1]  # the guide's "x₂ is noise"
