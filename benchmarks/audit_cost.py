"""What the write-ahead audit costs per request: a "sending" line before, an outcome line after.

Run ``python benchmarks/audit_cost.py``. For 20,000 requests (in interleaved rounds, medians):
the results built alone, and built with ``AuditLog.sending`` + ``AuditLog.ended`` on a log held
open (one ``write`` each on an ``O_APPEND`` descriptor, no lock, no fsync). The difference per
request is the audit's cost (issue 30: at most 20 us).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from dict_magics.models import DeleteResult, Entry
from dict_magics.operations.audit import AuditLog

N = 20_000
ROUNDS = 5
ENTRY = Entry("17", "ja", "金曜日", "en", "FRI")


def results_only() -> None:
    for i in range(N):
        DeleteResult("success", str(i), http_status=200, entry=ENTRY)


def audited(home: str) -> None:
    """Into ``<home>/audit.jsonl``: the log is always the data folder's."""
    os.environ["DICT_MAGICS_HOME"] = home
    with AuditLog(profile="default", host="api.example", operation="delete") as log:
        for i in range(N):
            key = log.sending("DELETE", str(i))
            log.ended(key, [DeleteResult("success", str(i), http_status=200, entry=ENTRY)])


def main() -> None:
    folder = tempfile.mkdtemp(prefix="dict-magics-audit-cost-")
    times: dict[str, list[float]] = {"results": [], "audited": []}
    for round_ in range(ROUNDS):
        home = os.path.join(folder, f"round-{round_}")  # a fresh log each round
        for name in ("results", "audited") if round_ % 2 else ("audited", "results"):
            started = time.perf_counter()
            results_only() if name == "results" else audited(home)
            times[name].append((time.perf_counter() - started) / N)
    base, with_log = statistics.median(times["results"]), statistics.median(times["audited"])
    print(f"results alone:        {base * 1e6:6.2f} us per request")
    print(f"results + audit:      {with_log * 1e6:6.2f} us per request")
    print(f"the audit's own cost: {(with_log - base) * 1e6:6.2f} us per request (target <= 20)")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
