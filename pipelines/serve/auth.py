"""Who sees what: tokens are kept as sha256 hashes; each names the teams it may see, or `*` (finance, admins).
Compared with hmac.compare_digest so a guess's timing says nothing about the stored hashes."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass


@dataclass(frozen=True)
class Grant:
    name: str
    teams: tuple[str, ...] | None  # None: every team

    def sees(self, team: str) -> bool:
        return self.teams is None or team in self.teams


EVERYONE = Grant("loopback", None)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Tokens:
    entries: tuple[tuple[str, Grant], ...]  # (sha256 hex, grant)

    @classmethod
    def from_config(cls, serve) -> "Tokens":
        """From the config's `serve.tokens` (pipelines/lib/config/serve.py has checked them)."""
        return cls(tuple((t.sha256.lower(), Grant(t.name or f"token {i + 1}", None if t.teams == "*" else tuple(t.teams)))
                         for i, t in enumerate(serve.tokens)))

    def grant_for(self, authorization: str | None) -> Grant | None:
        """The grant of a `Bearer <token>` header, or None (refused)."""
        if not self.entries:
            return EVERYONE
        if not authorization or not authorization.startswith("Bearer "):
            return None
        digest = hash_token(authorization[len("Bearer "):].strip())
        found = None
        for stored, grant in self.entries:  # every entry compared: no early exit on a match
            if hmac.compare_digest(stored, digest):
                found = grant
        return found
