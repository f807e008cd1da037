"""The `gpuledger` command: `main` parses the arguments; the helpers beside it (inspect, materialize,
console) do what each subcommand needs."""

from pipelines.cli.main import EXAMPLE_QUERIES, main

__all__ = ["EXAMPLE_QUERIES", "main"]
