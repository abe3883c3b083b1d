"""Every Python snippet in README.md, then in the user guide's pages (in the order of the
guide's table of contents), runs as written, in order, as one session would: the pages start
from the README's example data."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "user_guide"


def guide_pages() -> list[Path]:
    """The user guide's pages in the order of its toctree (each written in .md or .rst)."""
    toctree = re.search(r"```\{toctree\}\n(.*?)```", (GUIDE / "index.md").read_text(), re.S)
    assert toctree is not None, "docs/user_guide/index.md has no toctree"
    names = [line.strip() for line in toctree.group(1).splitlines()]
    pages = []
    for name in names:
        if name and not name.startswith(":"):
            found = [GUIDE / f"{name}{suffix}" for suffix in (".md", ".rst")]
            pages.append(next(page for page in found if page.exists()))
    return pages


def python_snippets(page: Path) -> list[str]:
    """Markdown's ```python fences, or reStructuredText's ``.. code-block:: python`` blocks."""
    text = page.read_text()
    if page.suffix == ".rst":
        blocks = re.findall(r"^\.\. code-block:: python\n\n((?:(?:   .*)?\n)+)", text, re.M)
        return [textwrap.dedent(block) for block in blocks]
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def test_every_guide_page_is_in_the_toctree() -> None:
    listed = {page.name for page in guide_pages()}
    on_disk = {page.name for page in GUIDE.iterdir() if page.suffix in (".md", ".rst")}
    assert on_disk - {"index.md"} == listed


def test_readme_and_guide_snippets_run_in_order() -> None:
    plt = pytest.importorskip("matplotlib.pyplot")
    namespace: dict = {"__name__": "readme"}
    pages = [ROOT / "README.md", *guide_pages()]
    for page in pages:
        for i, code in enumerate(python_snippets(page)):
            exec(compile(code, f"{page.name} snippet {i}", "exec"), namespace)
    plt.close("all")  # the calibration page draws a display
    assert len(python_snippets(pages[0])) >= 1
    assert sum(len(python_snippets(page)) for page in pages[1:]) >= 10
    clf = namespace["clf"]
    far = clf.predict_proba([[30.0, -30.0, 0.5, 0.5, 0.5]])[0]
    assert abs(far[0] - 0.5) < 0.05  # the classification page's "far: ≈ 1/2"
    grid = namespace["grid"]
    assert grid.selected_features_.tolist() == [0, 1]  # the kernel page's "x₂ is noise"
