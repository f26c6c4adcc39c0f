"""How a model shows itself without importing ``render``: views are looked up by type.

Models sit below ``render`` (render reads models), so a model cannot import its own view. Each
displayable model inherits ``Displayed``; ``render/views.py`` registers a text and an HTML view
per type. The registry is filled on first display by the loader the top package wires in
(``dict_magics/__init__.py``), so ``import dict_magics.models`` stays light and the layers stay
one-way.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Displayed", "register", "set_loader", "view"]

View = Callable[[Any], str]
_views: dict[type, dict[str, View]] = {}
_loader: Callable[[], None] | None = None
_loaded = False
_lock = threading.Lock()


def set_loader(loader: Callable[[], None]) -> None:
    """Give the function that registers every view (called once, on first display)."""
    global _loader
    _loader = loader


def register(cls: type, **views: View) -> None:
    """Register views of ``cls`` by kind: ``text``, ``html``, and optionally ``pretty`` (what
    IPython prints; the text view when not given)."""
    _views.setdefault(cls, {}).update(views)


def view(obj: object, kind: str) -> str:
    """``obj`` as ``kind`` (``text``, ``pretty`` or ``html``), by the nearest registered type."""
    global _loaded
    if not _loaded:
        with _lock:
            if not _loaded and _loader is not None:
                _loader()
            _loaded = True
    for cls in type(obj).__mro__:
        views = _views.get(cls)
        if views is not None:
            found = views.get(kind) or (views.get("text") if kind == "pretty" else None)
            if found is not None:
                return found(obj)
    return object.__repr__(obj) if kind != "html" else ""


class Displayed:
    """A model that renders itself through the registered views (text, IPython, HTML)."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # IPython's printer stops at the first class in the MRO that defines ``__repr__`` (a
        # dataclass does): the subclass itself must hold ``_repr_pretty_``.
        super().__init_subclass__(**kwargs)
        if "_repr_pretty_" not in cls.__dict__:
            cls._repr_pretty_ = Displayed._repr_pretty_  # type: ignore[method-assign]

    def __str__(self) -> str:
        return view(self, "text")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(view(self, "pretty"))

    def _repr_html_(self) -> str | None:
        return view(self, "html") or None
