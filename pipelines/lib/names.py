"""Names made from input text — a team called `R&D`, `ML Infra`, `é`×128 or `../x` — for the places
that only take some characters: file and folder names, Dagster asset keys.

A name that is already safe stays as it is, so `pretrain` is the folder `pretrain` and the asset
`waste_pretrain`. Any other name keeps its safe characters and gains a short hash of the whole text,
so two teams never share a folder or an asset, the result is the same on every run, and it always fits
(file names are at most 255 bytes; asset names take only letters, digits and `_`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_FILE_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\- ]{0,79}")
_ASSET_SAFE = re.compile(r"[A-Za-z0-9_]{1,80}")


def _hashed(text: str, keep: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    stem = re.sub(f"[^{keep}]+", "_", ascii_text).strip("_.- ")[:48] or "name"
    return f"{stem}_{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:10]}"


def file_name(text: str) -> str:
    """A file or folder name for `text`: itself when it is plain, else its safe part and a hash."""
    if _FILE_SAFE.fullmatch(text) and ".." not in text and not text.endswith((" ", ".")):
        return text
    return _hashed(text, "A-Za-z0-9_.-")


def asset_name(text: str) -> str:
    """A Dagster asset name part for `text`: itself when it is plain, else its safe part and a hash."""
    return text if _ASSET_SAFE.fullmatch(text) else _hashed(text, "A-Za-z0-9_")


def unknown_name(kind: str, typed: str, known: list[str], where: str) -> str:
    """The sentence for a name a person typed that is not there: the closest known one, else them all
    (or the first twenty), e.g. "no team 'pretrian' in the ledger — did you mean 'pretrain'?"."""
    import difflib

    close = difflib.get_close_matches(typed, known, n=1, cutoff=0.6)
    if close:
        return f"no {kind} {typed!r} in {where} — did you mean {close[0]!r}?"
    if not known:
        return f"no {kind} {typed!r} in {where}: it has none yet"
    shown = ", ".join(sorted(known)[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    return f"no {kind} {typed!r} in {where}; it has: {shown}"
