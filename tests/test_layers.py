"""Data flows one way: front ends -> operations -> client -> transport/signing.

Each module is imported in a fresh interpreter, and what it pulled in is compared with what its
layer may use. A module that reaches back up the layers fails here.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

import dict_magics

LAYERS = ["service", "profiles", "render", "operations", "sandbox", "frontends"]
# What each layer must never import (directly or through anything it imports).
FORBIDDEN = {
    "service": ("operations", "render", "frontends", "sandbox"),
    "profiles": ("operations", "render", "frontends", "sandbox", "service.client"),
    "render": ("operations", "frontends", "sandbox", "service.client", "profiles.credentials"),
    "operations": ("frontends", "sandbox"),
    "sandbox": ("operations", "frontends", "render", "service.client"),
}


def _modules(layer: str) -> list[str]:
    package = f"dict_magics.{layer}"
    path = [str(__import__("pathlib").Path(dict_magics.__file__).parent / layer)]
    names = [package] + [f"{package}.{m.name}" for m in pkgutil.iter_modules(path)]
    return [n for n in names if not n.endswith("__main__")]


def _imported_by(module: str) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"importlib.import_module({module!r})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('dict_magics'))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(proc.stdout)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_layer_imports_upwards(layer: str) -> None:
    for module in _modules(layer):
        loaded = _imported_by(module)
        bad = [
            m
            for m in loaded
            for f in FORBIDDEN[layer]
            if m == f"dict_magics.{f}" or m.startswith(f"dict_magics.{f}.")
        ]
        assert not bad, f"{module} imports {bad} (layer {layer} must not)"


def test_every_layer_is_checked() -> None:
    assert set(FORBIDDEN) | {"frontends"} == set(LAYERS)
