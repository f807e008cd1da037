"""The command an alert of one kind runs (config `alerts.actions`, docs/plans.md#actions).

A command is a list of arguments, run without a shell; its `{placeholders}` (checked when the config
loads) are filled from the alert. A value that would read as an option (a leading '-') or a
placeholder the alert has no value for refuses the action instead of running something else."""

from __future__ import annotations

import json
import subprocess

from pipelines.lib.config.alert_channels import PLACEHOLDERS, AlertAction, placeholders

OUTPUT_CHARS = 4000


class ActionRefused(Exception):
    """The alert cannot fill the command safely; the reason is recorded instead of an exit code."""


def alert_fields(alert: dict) -> dict[str, str | None]:
    """What placeholders stand for: the alert's fields as text, and job_id for an alert about a job —
    the JobID as scancel/kubectl take it, from its details (its subject is `cluster/JobID`, unique per
    allocation; an alert raised before episodes has the bare JobID as its subject)."""
    fields = {k: (None if alert.get(k) is None else str(alert[k])) for k in PLACEHOLDERS if k != "job_id"}
    fields["job_id"] = None
    if alert.get("subject_type") == "job":
        try:
            details = json.loads(alert.get("details") or "{}")
        except ValueError:
            details = {}
        job_id = details.get("job_id") if isinstance(details, dict) else None
        fields["job_id"] = str(job_id) if job_id is not None else fields["subject"]
    return fields


def command_for(action: AlertAction, alert: dict) -> list[str]:
    """The action's arguments with the alert's values filled in; raises ActionRefused."""
    fields = alert_fields(alert)
    out = [action.command[0]]
    for argument in action.command[1:]:
        for name in placeholders(argument):
            value = fields[name]
            if value is None or value == "":
                raise ActionRefused(f"{{{name}}} has no value for this alert (subject_type {alert.get('subject_type')})")
            if value.startswith("-"):
                raise ActionRefused(f"{{{name}}} is {value!r}, which the program would read as an option")
        # names are checked above: format_map fills bare names only, no attribute or index access
        out.append(argument.format_map(fields))
    return out


def run_command(command: list[str], timeout_seconds: float) -> tuple[int | None, str]:
    """Runs the command (no shell, no stdin); its exit code and output, or None and why it did not end."""
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout_seconds, check=False)
    except subprocess.TimeoutExpired as err:
        return None, f"killed after {timeout_seconds:g} s: " + _text(err.output)
    except OSError as err:  # not found, not executable
        return None, f"could not start {command[0]!r}: {err.strerror or err}"
    return done.returncode, _text(done.stdout)


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode(errors="replace")[:OUTPUT_CHARS]
