"""Text and HTML of every model; reads models and nothing else."""

from __future__ import annotations

from .results import batch_html, batch_text, kind_of, result_html, result_text

__all__ = ["batch_html", "batch_text", "kind_of", "result_html", "result_text"]
# The views of entries, snapshots, the audit log and restores load with their models, on use.
