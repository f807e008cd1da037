"""Secrets out of everything gpuledger stores, logs or prints (docs/plans.md#delivery).

A URL can be a credential: a password in its userinfo (`https://user:secret@host/`), a token in its
path (Slack's `https://hooks.slack.com/services/T000/B000/XXXXXXXX`) or in its query (`?token=`). Shown
anywhere — `ops.alert_deliveries.last_error`, the published file, the console, Dagster's logs — a URL
keeps its scheme, host, port and first path segment only: `https://hooks.slack.com/services/…(redacted)`.

Error texts of urllib, http.client and smtplib echo URLs, bare paths ("URL can't contain control
characters. '/services/T000/B000/XX X'") or credentials; `redact` takes every URL out of a text, and
every piece of the secrets it is given (those of the URL or SMTP login that failed) wherever it stands.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote, unquote_plus, urlsplit

MARK = "…(redacted)"
# a URL inside a text: scheme:// up to a space or a quote; trailing punctuation is the sentence's
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s'\"<>`]+")
TRAILING = ".,;:!?)]}"
# the first path segment is kept when it reads as a name (`services`, `api`, `hooks`, `v1`), not when it
# may be a token itself: Telegram's `/bot123456:AAH…/`, a long run of digits or hex, a long mix of
# letters and digits (`/abcdefgh1234ijkl`, as some webhook services put their token first), anything long
NAME_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,23}$")
TOKEN_LIKE = re.compile(r"\d{6,}|[0-9a-fA-F]{16,}|^(?=.*\d)(?=.*[A-Za-z]).{12,}$")
MIN_PIECE = 3  # shorter pieces are not hunted through a text: they would garble its words, and guard nothing


def redact_url(url: str) -> str:
    """`url` with its userinfo, and its query, fragment and path after the first segment, taken out;
    unchanged when it has none of them."""
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:  # not a URL: nothing in it is known to be safe
        return MARK if text else text
    authority, tail = re.match(r"([^/?#]*)(.*)", rest, re.S).groups()
    userinfo, at, hostport = authority.rpartition("@")
    path = re.match(r"/([^/?#]*)(.*)", tail, re.S)
    first, after = path.groups() if path else ("", tail)
    if first and NAME_SEGMENT.match(first) and not TOKEN_LIKE.search(first):
        shown, secret = f"{scheme}://{hostport}/{first}", after
    else:
        shown, secret = f"{scheme}://{hostport}", tail
    if at:
        shown = shown.replace("://", f"://{MARK}@", 1)
    # nothing after the kept part but separators, or marks a redaction before put there (a text is
    # redacted at each layer it passes, and twice must read as once)
    if secret.replace(MARK, "").strip("/?#&;="):
        return f"{shown}{secret[0]}{MARK}"
    return shown + secret


def url_secrets(url: str | None) -> list[str]:
    """The pieces of `url` that `redact_url` takes out, as they may appear alone in an error text: the
    userinfo and password, the path after the first segment and each of its segments, the query and
    each of its values, the fragment — raw and percent-decoded."""
    if not url:
        return []
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:  # an unparsable authority: its whole text after the scheme is the secret
        return _pieces([text.partition("://")[2]], minimum=MIN_PIECE)
    kept = redact_url(text).split(MARK)
    pieces: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0]
    if userinfo:
        pieces += [userinfo, userinfo.partition(":")[2]]
    segments = parts.path.split("/")[1:]
    rest = segments[1:] if segments and segments[0] and f"/{segments[0]}" in kept[0] else segments
    pieces += ["/".join(rest), *rest]
    if parts.query:
        pieces.append(parts.query)
        for pair in re.split(r"[&;]", parts.query):
            name, _, value = pair.partition("=")
            pieces.append(value or name)
    pieces.append(parts.fragment)
    # a piece that is part of what is kept (a segment equal to the host's name) is not a secret
    return [p for p in _pieces(pieces, minimum=MIN_PIECE) if not any(p in part for part in kept)]


def login_secrets(username: str | None, password: str | None) -> list[str]:
    """A password as an SMTP exchange may echo it: plain, and base64 as AUTH PLAIN and LOGIN send it."""
    if not password:
        return []
    user = username or ""
    encoded = [base64.b64encode(raw.encode()).decode() for raw in
               (password, f"\0{user}\0{password}", f"{user}\0{user}\0{password}")]
    return _pieces([password, *encoded], minimum=MIN_PIECE)


def redact(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` with every URL in it redacted (`redact_url`) and every one of `secrets` replaced by the
    mark, longest first, so a secret never survives in part."""
    out = URL_IN_TEXT.sub(_redact_match, text)
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        out = out.replace(secret, MARK)
    return out


def _redact_match(match: re.Match) -> str:
    found = match.group(0)
    core = found.rstrip(TRAILING)
    if found.startswith(MARK, len(core) - len(MARK) + 1):  # a URL redacted before ends in the mark's ")"
        core = found[:len(core) + 1]
    return redact_url(core) + found[len(core):]


def _pieces(raw: list[str], minimum: int) -> list[str]:
    """Each piece, its decoded forms, and its parts around whitespace (an error may cut a path at a space)."""
    out: set[str] = set()
    for piece in raw:
        for form in (piece, unquote(piece), unquote_plus(piece), repr(piece)[1:-1]):
            out.add(form)
            out.update(form.split())
    return [p for p in out if len(p) >= minimum]
