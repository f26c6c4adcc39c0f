"""The layer rule, read from the source: every ``import`` (at any depth, inside functions and
``TYPE_CHECKING`` blocks too) must go down the layers, and no chain of imports may come back to
where it started.

Reading the source rather than ``sys.modules`` after an import is what sees the imports a
function makes when it runs: those are the ones that hid the cycles of version 2.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "dict_magics"

BASE = frozenset({"errors", "settings", "localdata"})
"""Top-level modules everything may use: they import nothing of ours above them."""
TOP = frozenset({"__init__", "__main__"})
"""The package's wiring and entry point: they may import anything."""
FRONT = frozenset({"demo"})
"""Top-level modules that are front ends (``dict-magics demo`` runs a notebook)."""

# What each layer may import (besides its own modules). Bottom to top.
ALLOWED: dict[str, frozenset[str]] = {
    "base": frozenset({"base"}),
    "models": frozenset({"base"}),
    "service": frozenset({"base", "models"}),
    "profiles": frozenset({"base", "models", "service"}),
    "formats": frozenset({"base", "models"}),
    "operations": frozenset({"base", "models", "service", "profiles", "formats"}),
    "sandbox": frozenset({"base", "models"}),  # not the client: it stands in for the vendor
    "notebooks": frozenset(),  # data: the shipped notebooks
    "frontends": frozenset(
        {"base", "models", "service", "profiles", "formats", "operations", "sandbox"}
    ),
    "top": frozenset(
        {
            "base",
            "models",
            "service",
            "profiles",
            "formats",
            "operations",
            "sandbox",
            "frontends",
        }
    ),
}


def module_name(root: Path, path: Path) -> str:
    """``dict_magics.service.client`` for ``<root>/service/client.py`` (root = the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def layer_of(module: str) -> str:
    """The layer a module of ours belongs to."""
    parts = module.split(".")
    if len(parts) == 1:
        return "top"  # the package itself (__init__)
    first = parts[1]
    if len(parts) == 2 and first in BASE:
        return "base"
    if len(parts) == 2 and first in TOP:
        return "top"
    if len(parts) == 2 and first in FRONT:
        return "frontends"
    if first in ALLOWED:
        return first
    raise KeyError(f"{module} is in no layer: add it to tests/layering.py")


def _is_package(root: Path, module: str) -> bool:
    rel = module.split(".")[1:]
    return (root.joinpath(*rel) / "__init__.py").is_file()


def _resolve(root: Path, module: str, node: ast.ImportFrom) -> Iterator[str]:
    """The modules of ours an ``ImportFrom`` reaches (``from . import x`` may name modules)."""
    if node.level:
        base = module.split(".")
        if not _is_package(root, module):
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target != PACKAGE and not target.startswith(PACKAGE + "."):
        return
    names = [alias.name for alias in node.names]
    submodules = [f"{target}.{n}" for n in names if _exists(root, f"{target}.{n}")]
    if submodules and len(submodules) == len(names):
        yield from submodules
    else:
        yield from submodules
        yield target


def _exists(root: Path, module: str) -> bool:
    rel = module.split(".")[1:]
    if not rel:
        return True
    return root.joinpath(*rel).with_suffix(".py").is_file() or _is_package(root, module)


def imports(root: Path) -> dict[str, set[str]]:
    """Every module of ours -> the modules of ours it imports anywhere in its source."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = module_name(root, path)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found.update(
                    a.name
                    for a in node.names
                    if a.name == PACKAGE or a.name.startswith(PACKAGE + ".")
                )
            elif isinstance(node, ast.ImportFrom):
                found.update(_resolve(root, module, node))
        found.discard(module)
        graph[module] = found
    return graph


def upward(graph: dict[str, set[str]]) -> list[str]:
    """``a -> b (layer x may not import layer y)`` for every import that breaks the order."""
    bad = []
    for module, targets in sorted(graph.items()):
        here = layer_of(module)
        for target in sorted(targets):
            if target == PACKAGE and here != "top":
                bad.append(f"{module} -> {target} (only the top may import the package itself)")
                continue
            there = layer_of(target)
            if there != here and there not in ALLOWED[here]:
                bad.append(f"{module} -> {target} (layer {here} may not import {there})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a chain (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found
