"""Formats a site adds without changing gpuledger (docs/landing.md#adding-a-bill-format): the variable
that names their modules, and the error a module that cannot serve gives. Light on purpose: the CLI
imports it before any command runs, to say such an error in one sentence."""

# Python modules (importable, comma-separated), each declaring its `SOURCES`
FORMATS_ENV = "GPULEDGER_FORMATS"


class FormatsError(RuntimeError):
    """$GPULEDGER_FORMATS names a module that cannot be imported, declares no sources, or reuses a name."""
