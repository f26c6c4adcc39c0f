"""The notebook the browser test opens: point the kernel at a sandbox, then show the panel.

The sandbox's variables are read from a 0600 file beside the notebook, so no key (not even a
throw-away sandbox one) is written into the notebook or shown on the page.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import nbformat

ENV_FILE = "sandbox-env.json"

SET_ENV = f"""import json, os
with open({ENV_FILE!r}) as f:
    os.environ.update(json.load(f))"""

PANEL_BY_MAGIC = "%dict_panel"
PANEL_BY_CONSTRUCTOR = "from dict_magics.panel import DictPanel\nDictPanel.from_profile()"


def panel_cells() -> tuple[list[str], str]:
    """The cells that show the panel: ``%dict_panel`` once the magics register it.

    Until then, ``%load_ext`` only if the magics module exists, and the Python constructor.
    """
    try:
        magics = importlib.import_module("dict_magics.magics")
    except ImportError:
        return [PANEL_BY_CONSTRUCTOR], "DictPanel.from_profile() (no dict_magics.magics yet)"
    if hasattr(magics.DictMagics, "dict_panel"):
        return ["%load_ext dict_magics", PANEL_BY_MAGIC], "%dict_panel"
    return (
        ["%load_ext dict_magics", PANEL_BY_CONSTRUCTOR],
        "DictPanel.from_profile() (%dict_panel not registered yet)",
    )


def write_panel_notebook(directory: Path, env: dict[str, str], name: str = "panel.ipynb") -> str:
    """Write the notebook and its env file; return how the panel is shown."""
    env_file = directory / ENV_FILE
    env_file.touch(mode=0o600)
    env_file.write_text(json.dumps(env))
    cells, how = panel_cells()
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in [SET_ENV, *cells]]
    nbformat.write(notebook, directory / name)
    return how
