"""``view`` for ``render/panel.py`` until it moves (see ``render/__init__.py``)."""

from __future__ import annotations


def view(obj: object, kind: str) -> str:
    """``obj`` as HTML (``""`` when it has none) or as text."""
    if kind == "html":
        return getattr(obj, "_repr_html_", lambda: "")() or ""
    return str(obj)
