"""dict-magics: curate the user dictionary of a translation service from notebooks.

``%load_ext dict_magics`` registers the magics. Importing this package is deliberately light:
requests, ipywidgets and keyring load on first use, not here.
"""

from __future__ import annotations

from typing import Any

from .settings import VERSION as __version__

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register ``DictMagics`` with the shell (called by ``%load_ext dict_magics``)."""
    from .frontends.magics import DictMagics

    ipython.register_magics(DictMagics(shell=ipython))


def unload_ipython_extension(ipython: Any) -> None:
    """Close the kept-alive connections of the clients kept between cells."""
    from .operations.context import close_all

    close_all()
