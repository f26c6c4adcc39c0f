"""The notebook the browser test opens: point the kernel at a sandbox, then show the panel.

The sandbox's variables are read from a 0600 file beside the notebook, so no key (not even a
throw-away sandbox one) is written into the notebook or shown on the page.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

ENV_FILE = "sandbox-env.json"

SET_ENV = f"""import json, os
with open({ENV_FILE!r}) as f:
    os.environ.update(json.load(f))"""

PANEL_CELLS = ["%load_ext dict_magics", "%dict_panel"]


def write_panel_notebook(directory: Path, env: dict[str, str], name: str = "panel.ipynb") -> None:
    """Write the notebook (and the env file its first cell reads)."""
    env_file = directory / ENV_FILE
    env_file.touch(mode=0o600)
    env_file.write_text(json.dumps(env))
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in [SET_ENV, *PANEL_CELLS]]
    nbformat.write(notebook, directory / name)
