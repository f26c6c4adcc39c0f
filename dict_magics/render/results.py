"""Re-exports for ``render/panel.py`` until it moves (see ``render/__init__.py``)."""

from ..models import BatchResult, DeleteResult


def batch_html(batch: BatchResult) -> str:
    return batch._repr_html_()


def result_html(result: DeleteResult) -> str:
    return result._repr_html_()
