"""Re-exports for ``render/panel.py`` until it moves (see ``render/__init__.py``)."""

from ..models import RestoreResult


def restore_html(result: RestoreResult) -> str:
    return result._repr_html_()
