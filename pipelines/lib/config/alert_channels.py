"""The `alerts.channels`, `alerts.retry` and `alerts.actions` keys of the config: where alerts are
delivered, how a failing channel is retried, and what an alert may run (docs/plans.md#delivery).

Secrets never sit in the file: an SMTP password, and a webhook URL that is itself a credential (a
Slack incoming webhook), are read at send time from the environment variable the config names.
An action's command is a list of arguments, never a shell string; its `{placeholders}` are checked
here, when the config loads, so a typo fails `gpuledger config check` rather than a 3 a.m. alert.
"""

from __future__ import annotations

import re
import string
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, ConfigDict, Field, field_serializer, field_validator, model_validator

from pipelines.lib.config.section import Section
from pipelines.lib.redact import redact_url

SEVERITIES = ("info", "warning", "critical")  # in rising order: a channel's min_severity takes it and those above
ALERT_KINDS = ("budget_threshold", "cost_anomaly", "hung_job", "idle_session", "step_time_regression")
# what an action's arguments may name: an alert's own fields, and `job_id`, the subject of an alert about a job
PLACEHOLDERS = ("alert_id", "kind", "severity", "subject_type", "subject", "threshold", "team", "day", "job_id")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# ops.alerts.channel lists the channels an alert went to, comma-separated: a name has no comma
CHANNEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _env_name(value: str | None) -> str | None:
    if value is not None and not ENV_NAME.match(value):
        raise ValueError(f"{value!r} is not an environment variable name (letters, digits, _)")
    return value


def unusable_in_url(url: str) -> bool:
    """Whether `url` holds a space or control character, which no HTTP request line can carry."""
    return any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url)


def _http_url(value: str | None) -> str | None:
    if value is not None:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{redact_url(value)!r} is not an http(s) URL")
        if unusable_in_url(value):
            raise ValueError(f"{redact_url(value)!r} has a space or control character: percent-encode it (%20)")
    return value


class SmtpServer(Section):
    host: str = Field(min_length=1)
    port: int = Field(587, ge=1, le=65535)
    starttls: bool = True   # upgrade the connection with STARTTLS before logging in
    ssl: bool = False       # SMTPS: TLS from the first byte (port 465); excludes starttls
    username: str | None = None
    password_env: str | None = None  # the environment variable holding the password

    _check_env = field_validator("password_env")(lambda cls, v: _env_name(v))

    @model_validator(mode="after")
    def _consistent(self) -> SmtpServer:
        if self.ssl and self.starttls:
            raise ValueError("ssl and starttls exclude each other: ssl is TLS from the start, set starttls: false")
        if self.password_env and not self.username:
            raise ValueError("password_env needs a username")
        return self


class Channel(Section):
    """One place alerts go: a Slack-compatible webhook, a plain JSON webhook, or e-mail."""

    # `from` is a Python keyword: the field is from_, the key in the file (and in `config check`) is `from`
    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    name: str
    type: Literal["slack", "webhook", "email"]
    url: str | None = None       # slack, webhook: where to POST
    url_env: str | None = None   # … or the environment variable holding it (a Slack URL is a secret)
    smtp: SmtpServer | None = None
    from_: str | None = Field(None, alias="from")
    to: list[str] = Field(default_factory=list)
    teams: list[str] | None = None  # only these teams' alerts; none: every team's
    min_severity: Literal["info", "warning", "critical"] = "info"
    timeout_seconds: float = Field(10, gt=0, le=300)  # each network call's

    _check_url = field_validator("url")(lambda cls, v: _http_url(v))
    _check_env = field_validator("url_env")(lambda cls, v: _env_name(v))

    @field_serializer("url")
    def _shown(self, url: str | None) -> str | None:
        # a dump is for people (`gpuledger config check` prints it): never the URL's userinfo, path
        # tokens or query; a URL without any prints (and loads back) as written
        return None if url is None else redact_url(url)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not CHANNEL_NAME.match(value):
            raise ValueError(f"{value!r}: a channel name is letters, digits, '.', '_' and '-'")
        return value

    @model_validator(mode="after")
    def _what_the_type_needs(self) -> Channel:
        if self.type in ("slack", "webhook"):
            if bool(self.url) == bool(self.url_env):
                raise ValueError(f"a {self.type} channel needs one of url, url_env")
            if self.smtp or self.from_ or self.to:
                raise ValueError(f"smtp, from and to are for email channels, not {self.type}")
        else:
            if not (self.smtp and self.from_ and self.to):
                raise ValueError("an email channel needs smtp, from and to")
            if self.url or self.url_env:
                raise ValueError("url and url_env are for slack and webhook channels, not email")
        return self

    def routes(self, team: str | None, severity: str) -> bool:
        """Whether an alert of this team and severity goes to this channel."""
        if self.teams is not None and team not in self.teams:
            return False
        return SEVERITIES.index(severity) >= SEVERITIES.index(self.min_severity) if severity in SEVERITIES else True


def _unique_names(channels: list[Channel]) -> list[Channel]:
    names = [c.name for c in channels]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"channel names must be unique: {twice} given twice")
    return channels


AlertChannels = Annotated[list[Channel], AfterValidator(_unique_names)]


class RetryConfig(Section):
    """Backoff of a channel that fails: the n-th retry waits initial · 2^(n-1) seconds, at most max."""

    initial_seconds: int = Field(60, ge=1)
    max_seconds: int = Field(3600, ge=1)
    max_attempts: int | None = Field(None, ge=1)  # none: a failing channel is retried for ever, nothing is lost

    @model_validator(mode="after")
    def _ordered(self) -> RetryConfig:
        if self.max_seconds < self.initial_seconds:
            raise ValueError(f"max_seconds {self.max_seconds} is below initial_seconds {self.initial_seconds}")
        return self

    def delay_seconds(self, attempts: int) -> int:
        """How long after its `attempts`-th attempt a delivery is tried again."""
        return min(self.initial_seconds * 2 ** min(max(attempts - 1, 0), 40), self.max_seconds)


def placeholders(argument: str) -> list[str]:
    """The `{name}` fields of one argument; raises ValueError for a conversion, format spec or an
    unknown name, which the config refuses."""
    names = []
    try:
        parsed = list(string.Formatter().parse(argument))
    except ValueError as err:
        raise ValueError(f"{argument!r}: {err} (write a literal brace as {{{{ or }}}})") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            raise ValueError(f"{argument!r}: unknown placeholder {{{name}}}; known are {', '.join(PLACEHOLDERS)}")
        if spec or conversion:
            raise ValueError(f"{argument!r}: a placeholder is a bare {{name}}, without !conversion or :format")
        names.append(name)
    return names


class AlertAction(Section):
    """A command an alert of one kind runs, once per alert: off unless enabled, a dry run unless told."""

    command: list[str] = Field(min_length=1)
    enabled: bool = False
    dry_run: bool = True
    timeout_seconds: float = Field(60, gt=0, le=3600)
    # an alert raised longer ago runs nothing: enabling an action never acts on last week's hung job
    max_age_hours: float = Field(24, gt=0)

    @field_validator("command")
    @classmethod
    def _arguments(cls, command: list[str]) -> list[str]:
        if placeholders(command[0]):
            raise ValueError("the program (first argument) is fixed: placeholders go in its arguments")
        for argument in command[1:]:
            placeholders(argument)
        return command


def _refuse_unknown(what: str, given: list[str], known: tuple[str, ...]) -> None:
    """A ValueError naming the first name not in `known`, and the closest known one."""
    import difflib

    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
            hint = f" — did you mean {close[0]!r}?" if close else f"; known are {', '.join(known)}"
            raise ValueError(f"unknown {what} {name!r}{hint}")


def _known_kinds(actions: dict) -> dict:
    _refuse_unknown("alert kind", sorted(actions), ALERT_KINDS)
    return actions


def _kind_severities(severities: dict[str, str]) -> dict[str, str]:
    _refuse_unknown("alert kind", sorted(severities), ALERT_KINDS)
    _refuse_unknown("severity", [severities[k] for k in sorted(severities)], SEVERITIES)
    return severities


def _kind_list(kinds: list[str]) -> list[str]:
    _refuse_unknown("alert kind", kinds, ALERT_KINDS)
    return sorted(set(kinds))


AlertActions = Annotated[dict[str, AlertAction], AfterValidator(_known_kinds)]
# alerts.severity: kind -> info | warning | critical, over the query's own severity
KindSeverities = Annotated[dict[str, str], AfterValidator(_kind_severities)]
# alerts.immediate: the kinds delivered one message per alert at once, not in the team's digest
AlertKinds = Annotated[list[str], AfterValidator(_kind_list)]
