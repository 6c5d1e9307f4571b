"""Sphinx configuration: `make docs` builds build/docs/html from these pages and gpuprim's docstrings."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
project = "gpuprim"
author = "gpuprim contributors"
copyright = "gpuprim contributors, BSD-3-Clause"  # noqa: A001
release = re.search(r'__version__ = "([^"]+)"', (ROOT / "torch_ops/gpuprim/_version.py").read_text()).group(1)
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
# Run logs stay out of the reference; the pages below include what they need from the repository's root files.
exclude_patterns = ["_build", "experiments/**", "requirements.txt"]
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing", "myst.header"]

autodoc_member_order = "alphabetical"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "alabaster"
html_title = f"gpuprim {release}"
html_theme_options = {"description": "CUDA primitives and training operators for PyTorch", "fixed_sidebar": True}
