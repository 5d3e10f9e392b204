"""The ACME authentication of both adapters' stdio test apps: a key in the environment, or a terminal login.

The terminal login asks for the key on the terminal and stores it in `$ACME_KEY_FILE`; its check
reads that file, and `logout` deletes it.
"""

from __future__ import annotations

import os
from pathlib import Path

from acpkit_core.auth import Authentication, AuthRequest, EnvVarMethod, TerminalMethod
from acpkit_core.errors import AuthRequiredError


def _key_file() -> Path:
    where = os.environ.get("ACME_KEY_FILE")
    if not where:
        raise AuthRequiredError("not logged in to ACME (no ACME_KEY_FILE to keep a key in)")
    return Path(where)


async def login(request: AuthRequest) -> None:
    key = input("ACME API key: ").strip()
    if not key.startswith("k-"):
        raise AuthRequiredError("that is not an ACME key (they start with k-)")
    _key_file().write_text(key)


async def check(request: AuthRequest) -> None:
    path = _key_file()
    if not path.is_file() or not path.read_text().startswith("k-"):
        raise AuthRequiredError(f"not logged in to ACME (no key in {path})")


async def forget(request: AuthRequest) -> None:
    _key_file().unlink(missing_ok=True)


def acme_auth() -> Authentication:
    key = EnvVarMethod(id="acme-key", name="ACME API key", vars=["ACME_API_KEY"], implicit=False)
    terminal = TerminalMethod(id="acme-login", name="Log in to ACME", login=login, check=check)
    return Authentication(methods=[key, terminal], logout=forget)
