"""Delete one entry or several: every id checked first, then one request or a parallel batch.

One id gives a ``DeleteResult``, several a ``BatchResult`` in the order given (an id repeated is
sent once). A batch stopped by Ctrl-C or ``cancel`` comes back ``interrupted``; the front end
shows ``interruption(batch)`` and what was done.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import UsageProblem
from ..service.paths import check_id
from . import session
from .context import OperationSettings, ProgressSink, finish

if TYPE_CHECKING:
    from ..service.client import DictionaryClient
    from ..service.models import BatchResult, DeleteResult

__all__ = ["count", "delete", "interruption"]


def count(number: int, one: str, many: str) -> str:
    """``1 entry``, ``2 entries``."""
    return f"{number} {one if number == 1 else many}"


def delete(
    settings: OperationSettings,
    ids: Iterable[object],
    *,
    progress: ProgressSink | None = None,
    cancel: threading.Event | None = None,
    client: DictionaryClient | None = None,
) -> DeleteResult | BatchResult:
    """Delete ``ids``; raises ``DictMagicsError`` (a bad id, no id, no credentials) before any
    request, and ``DeletionFailedError`` for a failure only if ``settings.raise_on_failure``."""
    checked = [check_id(i) for i in ids]
    if not checked:
        raise UsageProblem("no entry ids given; nothing was sent.")
    with session.connect(settings, client) as (client, _):
        if len(checked) == 1:
            result: DeleteResult | BatchResult = client.delete_entry(checked[0])
        else:
            result = _batch(client, checked, settings.workers, progress, cancel)
    return finish(result, settings)


def _batch(
    client: DictionaryClient,
    ids: list[str],
    workers: int,
    progress: ProgressSink | None,
    cancel: threading.Event | None,
) -> BatchResult:
    if progress is None:
        return client.delete_entries(ids, workers=workers, cancel=cancel)
    total = len(dict.fromkeys(ids))
    progress.start(total, f"Deleting {count(total, 'entry', 'entries')} at {client.host}")
    try:
        return client.delete_entries(ids, workers=workers, progress=progress, cancel=cancel)
    finally:
        progress.stop()


def interruption(result: DeleteResult | BatchResult) -> str | None:
    """``interrupted: N not attempted`` for a batch that was stopped, else ``None``."""
    if not getattr(result, "interrupted", False):
        return None
    never_sent = {r.entry_id for r in result.results if r.attempts == 0}
    return f"interrupted: {len(never_sent)} not attempted"
