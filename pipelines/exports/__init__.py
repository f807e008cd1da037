"""Exports of the ledger in standard formats (`gpuledger export`, docs/operations.md#the-focus-export)."""

from pipelines.exports.focus import FOCUS_COLUMNS, export_focus

__all__ = ["FOCUS_COLUMNS", "export_focus"]
