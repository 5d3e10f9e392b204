"""Who may talk to `acpkit serve`: bearer tokens (each naming a principal) and allowed browser origins.

A token file (or the `ACPKIT_SERVE_TOKENS` environment variable) holds one token per line, either
`principal:token` or a bare `token` (its principal is then `token-` and the first 8 hex digits of
its SHA-256, stable across restarts). Blank lines and lines starting with `#` are skipped.

Tokens are compared in constant time (`hmac.compare_digest` over SHA-256 digests, against every
known token, so neither the length nor the position of a match shows in the timing). A refusal is
always the same `401` whatever failed: no header, a malformed one, or an unknown token.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..errors import UserError

__all__ = ["TOKENS_ENV", "Tokens", "is_loopback", "origin_allowed"]

TOKENS_ENV: Final = "ACPKIT_SERVE_TOKENS"
"""The environment variable read for tokens when no token file is given (same format, lines or commas)."""

MIN_TOKEN_CHARS: Final = 16
"""A shorter token is refused when loading: it could be guessed."""


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _principal_of_bare(token: str) -> str:
    return "token-" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True, slots=True)
class Tokens:
    """The bearer tokens `acpkit serve` accepts, each mapped to the principal it authenticates."""

    _entries: tuple[tuple[bytes, str], ...] = field(default=())

    @classmethod
    def parse(cls, text: str, *, source: str) -> Tokens:
        """Tokens from the file format (`principal:token` or `token` per line; commas also separate).

        Raises [`UserError`][acpkit_core.errors.UserError] naming `source` and the line for a token
        that is too short or a principal given twice.
        """
        entries: list[tuple[bytes, str]] = []
        seen: set[str] = set()
        for number, raw in enumerate(text.replace(",", "\n").splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            principal, sep, token = line.partition(":")
            if not sep:
                principal, token = _principal_of_bare(line), line
            principal, token = principal.strip(), token.strip()
            if len(token) < MIN_TOKEN_CHARS:
                raise UserError(
                    f"{source}, entry {number}: a token must have at least {MIN_TOKEN_CHARS} characters "
                    "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
                )
            if not principal:
                raise UserError(f"{source}, entry {number}: the principal before ':' is empty")
            if principal in seen:
                raise UserError(f"{source}, entry {number}: principal {principal!r} is given twice")
            seen.add(principal)
            entries.append((_digest(token), principal))
        return cls(tuple(entries))

    @classmethod
    def load(cls, token_file: str | Path | None = None, env: Mapping[str, str] | None = None) -> Tokens:
        """The tokens of `token_file`, else of `$ACPKIT_SERVE_TOKENS`, else none.

        Raises [`UserError`][acpkit_core.errors.UserError] for an unreadable file.
        """
        if token_file is not None:
            try:
                text = Path(token_file).read_text(encoding="utf-8")
            except OSError as exc:
                raise UserError(f"cannot read the token file {str(token_file)!r}: {exc.strerror}") from None
            tokens = cls.parse(text, source=f"token file {str(token_file)!r}")
            if not tokens:
                raise UserError(f"the token file {str(token_file)!r} holds no token")
            return tokens
        environ = os.environ if env is None else env
        return cls.parse(environ.get(TOKENS_ENV, ""), source=TOKENS_ENV)

    def __bool__(self) -> bool:
        return bool(self._entries)

    @property
    def principals(self) -> list[str]:
        """The principals, in file order."""
        return [principal for _, principal in self._entries]

    def principal(self, authorization: str | None) -> str | None:
        """The principal an `Authorization: Bearer <token>` header authenticates, `None` if it does not.

        Every known token is compared (in constant time) whatever the header holds.
        """
        scheme, _, token = (authorization or "").partition(" ")
        given = _digest(token.strip())
        found: str | None = None
        for digest, principal in self._entries:
            if hmac.compare_digest(digest, given) and found is None:
                found = principal
        return found if scheme.lower() == "bearer" else None


def is_loopback(host: str) -> bool:
    """True for a host name or address that only this machine can reach (`127.0.0.1`, `::1`, `localhost`)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def origin_allowed(origin: str | None, allowed: Iterable[str]) -> bool:
    """True when a request may go on: it has no `Origin` (not a browser), or its origin is allowed.

    `allowed` holds exact origins (`https://ide.example.com`) or `*` for any.
    """
    if origin is None:
        return True
    allowed = set(allowed)
    return "*" in allowed or origin.rstrip("/") in {a.rstrip("/") for a in allowed}
