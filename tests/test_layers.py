"""Data flows one way: front ends -> operations -> service -> models (see tests/layering.py).

The rule is read from the source (every ``import``, in functions and ``TYPE_CHECKING`` blocks
too), so an import made only when a function runs cannot hide a cycle. The checker itself is
tested on a planted copy of the package: a rule that can never fail proves nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import layering
import pytest

import dict_magics

ROOT = Path(dict_magics.__file__).parent


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return layering.imports(ROOT)


def test_no_import_runs_up_the_layers(graph: dict[str, set[str]]) -> None:
    assert layering.upward(graph) == []


def test_no_module_imports_itself_round_a_chain(graph: dict[str, set[str]]) -> None:
    assert layering.cycles(graph) == []


def test_every_module_has_a_layer(graph: dict[str, set[str]]) -> None:
    layers = {layering.layer_of(m) for m in graph}
    assert layers <= set(layering.ALLOWED)
    assert {"models", "service", "operations", "frontends"} <= layers


def test_models_import_nothing_but_the_base(graph: dict[str, set[str]]) -> None:
    above = {
        target
        for module, targets in graph.items()
        if layering.layer_of(module) == "models"
        for target in targets
        if layering.layer_of(target) not in ("models", "base")
    }
    assert above == set()


def _planted(tmp_path: Path, where: str, source: str) -> dict[str, set[str]]:
    copy = tmp_path / "dict_magics"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / where).write_text(source, encoding="utf-8")
    return layering.imports(copy)


def test_the_check_sees_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    source = "def show(x):\n    from ..operations.delete import delete\n    return x\n"
    found = layering.upward(_planted(tmp_path, "models/planted.py", source))
    assert found == [
        "dict_magics.models.planted -> dict_magics.operations.delete "
        "(layer models may not import operations)"
    ]


def test_the_check_sees_a_cycle_made_by_a_lazy_import(tmp_path: Path) -> None:
    copy = tmp_path / "dict_magics"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "service" / "planted_a.py").write_text("from . import planted_b\n")
    (copy / "service" / "planted_b.py").write_text(
        "def later():\n    from .planted_a import x\n    return x\n"
    )
    assert [
        "dict_magics.service.planted_a",
        "dict_magics.service.planted_b",
    ] in layering.cycles(layering.imports(copy))


def test_the_check_resolves_relative_and_absolute_imports(tmp_path: Path) -> None:
    source = (
        "import dict_magics.frontends.magics\n"
        "from dict_magics.operations import delete\n"
        "from .. import frontends\n"
    )
    found = layering.upward(_planted(tmp_path, "service/planted.py", source))
    assert len(found) == 3 and all(line.startswith("dict_magics.service.planted") for line in found)
