"""`gpuledger ui`: the Dagster UI (webserver and daemon, `dagster dev`) over one landing zone, config and
warehouse, the same three `gpuledger run` reads (docs/operations.md#the-dagster-ui).

It checks what the definitions will read before Dagster starts — a landing zone that is missing or
empty would otherwise look to the sensors like every file deleted — and then becomes `dagster dev`
with GPULEDGER_LANDING, GPULEDGER_CONFIG, GPULEDGER_WAREHOUSE and DAGSTER_HOME set."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from pathlib import Path

from pipelines.lib.warehouse import PROJECT_ROOT


def add_parser(sub: argparse._SubParsersAction) -> None:
    ui = sub.add_parser("ui", help="open the Dagster UI (webserver and daemon) over a landing zone and warehouse")
    ui.add_argument("--landing", type=Path, help="the landing zone (default: $GPULEDGER_LANDING)")
    ui.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")
    ui.add_argument("--warehouse", type=Path, help="the live warehouse (default: $GPULEDGER_WAREHOUSE, "
                                                   "else data/warehouse.duckdb)")
    ui.add_argument("--host", default="127.0.0.1", help="address the webserver binds to (default: 127.0.0.1)")
    ui.add_argument("--port", type=int, default=3000, help="the webserver's port (default: 3000)")


def run(args: argparse.Namespace) -> int:
    from pipelines.cli.preflight import valid_config
    from pipelines.landing.source import LandingUnusable, check_landing_root
    from pipelines.lib.warehouse import warehouse_path

    landing = args.landing or (Path(os.environ["GPULEDGER_LANDING"]) if os.environ.get("GPULEDGER_LANDING") else None)
    if landing is None:
        print("no landing zone given: pass --landing DIR or set GPULEDGER_LANDING "
              "(`make ui` opens the demo's, data/demo/landing)", file=sys.stderr)
        return 2
    try:
        check_landing_root(landing)
    except LandingUnusable as err:
        print(err, file=sys.stderr)
        return 2
    config = args.config
    if not valid_config(config):
        return 2
    os.environ["GPULEDGER_LANDING"] = str(landing.resolve())
    os.environ["GPULEDGER_CONFIG"] = str(config.resolve()) if config else ""
    if args.warehouse:
        os.environ["GPULEDGER_WAREHOUSE"] = str(args.warehouse.resolve())
    os.environ["DAGSTER_HOME"] = str(Path(os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / "dagster_home").resolve())
    dagster = shutil.which("dagster", path=str(Path(sys.executable).parent)) or shutil.which("dagster")
    if dagster is None:
        print("the `dagster` command is not installed beside this Python: pip install -e .", file=sys.stderr)
        return 2
    print(f"Dagster UI on http://{args.host}:{args.port} (Ctrl-C stops it)\n"
          f"  landing    {os.environ['GPULEDGER_LANDING']}\n"
          f"  config     {os.environ['GPULEDGER_CONFIG'] or '(defaults)'}\n"
          f"  warehouse  {warehouse_path()}\n"
          f"  DAGSTER_HOME {os.environ['DAGSTER_HOME']}", flush=True)
    # A shell that starts a command in the background hands it SIGINT ignored, and Python keeps an
    # ignored SIGINT ignored: dagster dev would then never hear Ctrl-C or a kill -INT.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # From the project's folder, dagster dev finds the code location in pyproject.toml, named `gpuledger`.
    os.chdir(PROJECT_ROOT)
    os.execv(dagster, [dagster, "dev", "--host", args.host, "--port", str(args.port)])
    return 0  # not reached
