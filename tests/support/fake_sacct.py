"""A stand-in for sacct that prints recorded output, for the collect tests that need no cluster (the kill
test, error paths). The real thing is tests/e2e/test_collect_slurm.py.

`install(folder)` writes `folder/sacct`, a shell script: `--helpformat` prints the field names; otherwise
it prints `folder/<day>.psv` for the UTC day of `--starttime=<day>T…` (a header only when there is none),
logs its arguments to `folder/calls`, and, when `folder/sleep-<day>` exists, first touches
`folder/started-<day>` and sleeps that many seconds (a collect to kill mid-way)."""

from __future__ import annotations

from pathlib import Path

FIELDS_22_05 = ("JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "State", "ExitCode", "Submit",
                "Start", "End", "AllocTRES", "NodeList", "Comment", "QOS")

SCRIPT = """#!/bin/sh
dir=$(dirname "$0")
echo "$@" >> "$dir/calls"
day=""
for arg in "$@"; do
  case "$arg" in
    --helpformat) echo "{fields}"; exit 0 ;;
    --starttime=*) day=${{arg#--starttime=}}; day=${{day%%T*}} ;;
  esac
done
if [ -f "$dir/sleep-$day" ]; then
  touch "$dir/started-$day"
  sleep "$(cat "$dir/sleep-$day")"
fi
if [ -f "$dir/$day.psv" ]; then cat "$dir/$day.psv"; else echo "{header}"; fi
"""


def install(folder: Path, fields: tuple[str, ...] = FIELDS_22_05) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "sacct"
    script.write_text(SCRIPT.format(fields=" ".join(fields), header="|".join(fields)))
    script.chmod(0o755)
    return script


def record(folder: Path, day: str, rows: list[dict], fields: tuple[str, ...] = FIELDS_22_05) -> None:
    """What sacct prints for `day`: a header and one line per row (missing fields empty)."""
    lines = ["|".join(fields)] + ["|".join(str(r.get(f, "")) for f in fields) for r in rows]
    (folder / f"{day}.psv").write_text("\n".join(lines) + "\n")
