"""Sphinx configuration: ``python -m sphinx -W -b html docs docs/_build/html``.

The build needs no network (no intersphinx) and imports the package from ``python/`` when it
is not installed, so a source tree with its compiled core builds the site.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
try:
    import mondrian_learn
except ImportError:  # a checkout whose package is not installed: the tree's own copy
    sys.path.insert(0, str(ROOT / "python"))
    import mondrian_learn

project = "mondrian-learn"
author = "The mondrian-learn developers"
copyright = "the mondrian-learn developers (MIT licence)"
release = mondrian_learn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "matplotlib.sphinxext.plot_directive",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [
    "_build",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "**.codeobj.json",
]
templates_path = ["_templates"]

# MyST: $…$ maths, ::: fences, heading anchors for links inside the guide.
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# API reference: one generated page per public name; numpydoc renders the docstrings, and the
# class template lists the members (numpydoc's own member tables would list them twice).
autosummary_generate = True
autosummary_imported_members = True
# Members inherited from scikit-learn's mixins (score, set_output, metadata routing) are
# scikit-learn's to document; their docstrings point into scikit-learn's own site.
# The river adapters' members inherited from river's Base (clone, mutate) and mini-batch
# mixins (predict_many) are river's likewise, and a Sequence's count and index are
# collections.abc's.
SKLEARN_MIXINS = (
    "BaseEstimator, _MetadataRequester, _SetOutputMixin, RegressorMixin, ClassifierMixin, "
    "TransformerMixin, DensityMixin, Base, MiniBatchClassifier, MiniBatchRegressor, Sequence"
)
ROUTING = "set_fit_request, set_partial_fit_request, set_predict_request, set_score_request"
autodoc_default_options = {
    "members": True,
    "inherited-members": SKLEARN_MIXINS,
    "exclude-members": ROUTING,
}
autodoc_typehints = "none"
# "fit()", not "MondrianForestRegressor.fit()", in a page's table of contents: the long form
# runs out of the narrow right-hand sidebar.
toc_object_entries_show_parents = "hide"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Gallery: every example runs at build time and its figures become the thumbnails.
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("mondrian_learn",),
    "backreferences_dir": "api/generated/backreferences",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "default_thumb_file": None,
    "show_memory": False,
    # A cell ending in a matplotlib call would print its return value ("<Colorbar object>").
    "ignore_repr_types": r"matplotlib[\w.]*",
}

# Pictures drawn by ``{plot}`` blocks inside the guide (the partition figure).
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]

html_theme = "pydata_sphinx_theme"
html_title = "mondrian-learn"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
# Single pages with no section below them: no empty "Section Navigation" column.
html_sidebars = {"benchmarks": [], "development": [], "changelog": []}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
