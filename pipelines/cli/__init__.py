"""The `gpuledger` command: `main` parses the arguments and hands them to the command's module under
commands/; the modules beside main do the work the commands share (materialize, console, preflight,
inspect, query, plan)."""

from pipelines.cli.commands.run import EXAMPLE_QUERIES
from pipelines.cli.main import main

__all__ = ["EXAMPLE_QUERIES", "main"]
