"""Exports of the ledger in standard formats (DESIGN §6 `gpuledger export`)."""

from pipelines.exports.focus import FOCUS_COLUMNS, export_focus

__all__ = ["FOCUS_COLUMNS", "export_focus"]
