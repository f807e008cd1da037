"""Every command and flag of `gpuledger` explains itself in `--help`, and names its default.

The parser is built without running anything (pipelines/cli/main.py `build_parser`) and walked:
each subcommand, and each of its arguments, must have help; an optional argument that has a default
must say it (`default: …`), with the very value argparse uses when it has one.
"""

from __future__ import annotations

import argparse

import pytest

from pipelines.cli.main import build_parser
from pipelines.lib.dates import parse_time


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("gpuledger",)):
    """(command path, its parser, the help its parent gives it) for every command and subcommand."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*path, name))


def subcommand_helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            out.update({choice.dest: choice.help for choice in action._choices_actions})
    return out


def in_required_group(parser: argparse.ArgumentParser, action: argparse.Action) -> bool:
    """One of a required either-or (report --day | --month): it has no default of its own."""
    return any(group.required and action in group._group_actions for group in parser._mutually_exclusive_groups)


def arguments_without_help() -> list[str]:
    missing = []
    for path, parser in commands(build_parser()):
        command = " ".join(path)
        missing += [f"{command} {name}" for name, text in subcommand_helps(parser).items() if not text]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            name = "/".join(action.option_strings) or action.dest
            if not action.help:
                missing.append(f"{command} {name}: no help")
                continue
            takes_value = action.nargs != 0  # store_true and the like take none: they are off unless given
            optional = action.option_strings and not action.required and not in_required_group(parser, action)
            if takes_value and optional and "default" not in action.help:
                missing.append(f"{command} {name}: help names no default")
            if action.default not in (None, False) and str(action.default) not in action.help:
                missing.append(f"{command} {name}: help does not say its default {action.default!r}")
    return missing


def test_every_command_and_flag_has_help_that_names_its_default():
    assert arguments_without_help() == []


def test_the_walk_sees_every_command_and_would_catch_a_flag_without_help(monkeypatch):
    seen = {" ".join(path) for path, _ in commands(build_parser())}
    assert {"gpuledger simulate", "gpuledger run", "gpuledger export focus", "gpuledger config check",
            "gpuledger collect dcgm", "gpuledger collect slurm", "gpuledger ui", "gpuledger plan"} <= seen
    real = argparse._ActionsContainer.add_argument

    def helpless(self, *args, **kwargs):
        if args == ("--nodes",):
            kwargs.pop("help", None)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(argparse._ActionsContainer, "add_argument", helpless)
    assert arguments_without_help() == ["gpuledger simulate --nodes: no help"]


@pytest.mark.parametrize("typed", ["11/02/2026", "2026-11-02 1pm", "yesterday"])
def test_alerts_as_of_words_a_bad_time_as_every_command_words_a_bad_day(typed, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["alerts", "--live", "--as-of", typed])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --as-of: time {typed!r} is not a time written YYYY-MM-DDTHH:MM:SS, e.g. " in err
    assert "fromisoformat" not in err


def test_a_time_names_its_offset_or_is_taken_as_written():
    from datetime import datetime, timedelta, timezone

    assert build_parser().parse_args(["alerts", "--as-of", "2026-11-02T13:05"]).as_of == datetime(2026, 11, 2, 13, 5)
    assert parse_time("2026-11-02T13:05:00+01:00") == datetime(2026, 11, 2, 12, 5, tzinfo=timezone.utc)
    assert parse_time("2026-11-02T13:05:00Z").utcoffset() == timedelta(0)
    with pytest.raises(ValueError, match=r"time '2026-11-02T25:00' is not a calendar time \(hour must be"):
        parse_time("2026-11-02T25:00")
