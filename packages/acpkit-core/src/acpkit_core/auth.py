"""Authentication: the methods advertised in `initialize`, and the gate keeping sessions shut until one succeeds.

```python
from acpkit_core.auth import Authentication, EnvVar, EnvVarMethod

auth = Authentication(
    methods=[
        EnvVarMethod(
            id="acme-key",
            name="ACME API key",
            vars=[EnvVar(name="ACME_API_KEY", label="API key")],
            link="https://acme.example/keys",
        )
    ]
)
create_acp_agent(agent, auth=auth)  # either adapter; or AgentOptions(auth=auth)
```

`initialize` lists the methods in `authMethods`. Until one of them succeeds on the connection,
every `session/*` request answers -32000 `Authentication required: ...`, naming the methods and
what each needs. Three kinds of method:

- [`EnvVarMethod`][acpkit_core.auth.EnvVarMethod]: the user sets a key in the agent's
  environment (in the editor's agent settings, or by hand) and the client calls `authenticate`.
  The method succeeds when its variables are set (and the optional `check` accepts them). When they
  are already set as the agent starts, it counts as succeeded without an `authenticate` call, so
  clients that never authenticate work too (`implicit=False` turns that off). ACP 1.21 has no
  method type for environment variables (an early draft's `env_var` was dropped), so it is
  advertised as an `agent` method whose `_meta["acpkit.envVars"]` lists the variables (`name`,
  `label`, `secret`, `optional`) and the `link` where to get them: `acpkit chat` reads it to say
  what to set.
- [`AgentMethod`][acpkit_core.auth.AgentMethod] (ACP's default type, `agent`): the agent logs in
  by itself (a browser sign-in, a key file, a key passed in `_meta`); its `login` function runs on
  `authenticate`.
- [`TerminalMethod`][acpkit_core.auth.TerminalMethod] (`type: "terminal"`, ACP 1.21): the editor
  starts the agent's own program again in a terminal, with `ACPKIT_TERMINAL_LOGIN=<method id>` in
  its environment; that process runs the method's `login` there (asking for a key, a browser
  sign-in, ...) instead of serving ACP, and exits 0 on success. The editor then reconnects; the
  method's `check` tells whether the login is in effect. Offered only to clients that advertised
  `clientCapabilities.auth.terminal`, and never passed to `authenticate`.

`logout` (advertised as `agentCapabilities.auth.logout`) ends the connection's authenticated
state: session requests answer -32000 again, a method already satisfied (variables set, a login
on disk) no longer counts on this connection until `authenticate` succeeds or the client
reconnects, and the optional `Authentication.logout` function runs (to forget stored credentials).

A `check` or `login` refuses by raising [`AuthRequiredError`][acpkit_core.errors.AuthRequiredError]
with the reason the user should read. State is per connection:
[`ConnectionAuth`][acpkit_core.auth.ConnectionAuth] (`AcpAgent.auth`); a transport that has
authenticated the connection itself (a bearer token on a remote connection) calls its
[`grant`][acpkit_core.auth.ConnectionAuth.grant].
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

from acp.schema import AuthEnvVar, AuthMethodAgent, TerminalAuthMethod

from .errors import AuthRequiredError, UserError

__all__ = [
    "ENV_VARS_META_KEY",
    "TERMINAL_LOGIN_ENV",
    "AgentMethod",
    "AuthMethod",
    "AuthRequest",
    "AuthRequiredError",
    "Authentication",
    "ConnectionAuth",
    "EnvVar",
    "EnvVarMethod",
    "TerminalMethod",
    "WireAuthMethod",
    "terminal_login",
]

WireAuthMethod: TypeAlias = AuthMethodAgent | TerminalAuthMethod
"""An entry of `authMethods` on the wire."""

ENV_VARS_META_KEY: Final = "acpkit.envVars"
"""`_meta` key of an env-var method's entry in `authMethods`: `{"vars": [...], "link": ...}`."""

TERMINAL_LOGIN_ENV: Final = "ACPKIT_TERMINAL_LOGIN"
"""Set (to the method id) in the environment of the process a client starts for a terminal login."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvVar:
    """One environment variable an [`EnvVarMethod`][acpkit_core.auth.EnvVarMethod] needs."""

    name: str
    """The variable (`ACME_API_KEY`)."""
    label: str | None = None
    """Shown next to the input in the editor."""
    secret: bool = True
    """The editor uses a password-style input."""
    optional: bool = False
    """The method succeeds without it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AuthRequest:
    """What a `check` or `login` function is given."""

    method_id: str
    """The method being tried."""
    values: Mapping[str, str] = field(default_factory=dict[str, str])
    """The variables of an env-var method that are set (name to value); empty for an agent method."""
    meta: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The `_meta` of the `authenticate` request (empty for an implicit env-var check)."""
    client: str | None = None
    """The client's `clientInfo.name`, when it sent one."""


AuthFunction: TypeAlias = Callable[[AuthRequest], Awaitable[None]]
"""Accepts by returning; refuses by raising `AuthRequiredError` with the reason."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvVarMethod:
    """The user provides credentials that the editor passes to the agent as environment variables."""

    id: str
    """Method id the client sends in `authenticate`."""
    name: str
    """Name shown to the user."""
    vars: Sequence[EnvVar | str]
    """The variables (a plain name is a secret, required variable)."""
    description: str | None = None
    """One line shown to the user."""
    link: str | None = None
    """Where the user gets the credentials."""
    check: AuthFunction | None = None
    """Validates the values (for example one cheap call to the provider); `None` accepts any value."""
    implicit: bool = True
    """Variables already set when a session is first asked for count as a success without `authenticate`."""

    @property
    def env_vars(self) -> tuple[EnvVar, ...]:
        """The variables, as `EnvVar`s."""
        return tuple(EnvVar(name=v) if isinstance(v, str) else v for v in self.vars)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentMethod:
    """The agent authenticates by itself when the client calls `authenticate` with this method."""

    id: str
    """Method id the client sends in `authenticate`."""
    name: str
    """Name shown to the user."""
    login: AuthFunction
    """Runs the login; returns on success, raises `AuthRequiredError` with the reason otherwise."""
    description: str | None = None
    """One line shown to the user."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalMethod:
    """The user logs in in a terminal: the client runs the agent's program for `login`, then reconnects."""

    id: str
    """Method id (the terminal process finds its method by it)."""
    name: str
    """Name shown to the user."""
    login: AuthFunction
    """Runs in the terminal process: asks the user (`input()`, `getpass`), stores what the agent
    needs (a key file, a token), returns on success or raises `AuthRequiredError` with the reason."""
    check: AuthFunction
    """Runs on the ACP connection before the first session request: returns when the login is in
    effect (the key file exists), raises `AuthRequiredError` otherwise."""
    description: str | None = None
    """One line shown to the user."""
    args: Sequence[str] = ()
    """Extra arguments the client appends to the agent's command line for the login."""
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Extra environment for the login process (`ACPKIT_TERMINAL_LOGIN` is always added)."""


AuthMethod: TypeAlias = EnvVarMethod | AgentMethod | TerminalMethod
"""An authentication method the agent offers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Authentication:
    """The `auth` option: the methods offered, and whether one must succeed before any session."""

    methods: Sequence[AuthMethod]
    """Offered in this order in `authMethods`."""
    required: bool = True
    """No `session/*` request is served before a method succeeds (`False`: advertised, optional)."""
    environ: Mapping[str, str] | None = None
    """Where env-var methods read their variables; `None`: the process environment, read at each try."""
    logout: AuthFunction | None = None
    """Runs on `logout` (for example to delete a stored token); `None`: logout only ends the connection's state."""

    def __post_init__(self) -> None:
        ids = [m.id for m in self.methods]
        if not ids:
            raise UserError("Authentication(methods=...): give at least one method")
        if len(set(ids)) != len(ids) or not all(ids):
            raise UserError(f"Authentication(methods=...): method ids must be unique and non-empty, got {ids}")
        for method in self.methods:
            if isinstance(method, EnvVarMethod):
                names = [v.name for v in method.env_vars]
                if not names or not all(names):
                    raise UserError(f"EnvVarMethod {method.id!r}: name at least one environment variable")
        object.__setattr__(self, "methods", tuple(self.methods))

    def wire_methods(self, *, terminal: bool = False) -> list[WireAuthMethod]:
        """`authMethods` of the `initialize` answer; `terminal` methods only when the client can run them."""
        out: list[WireAuthMethod] = []
        for method in self.methods:
            if isinstance(method, TerminalMethod):
                if terminal:
                    out.append(
                        TerminalAuthMethod(
                            type="terminal",
                            id=method.id,
                            name=method.name,
                            description=method.description,
                            args=list(method.args) or None,
                            env={**method.env, TERMINAL_LOGIN_ENV: method.id},
                        )
                    )
                continue
            if isinstance(method, EnvVarMethod):
                needed = " and ".join(v.name for v in method.env_vars if not v.optional)
                variables = [
                    AuthEnvVar(name=v.name, label=v.label, secret=v.secret, optional=v.optional).model_dump(
                        mode="json", exclude_none=True
                    )
                    for v in method.env_vars
                ]
                details: dict[str, Any] = {"vars": variables}
                if method.link:
                    details["link"] = method.link
                out.append(
                    AuthMethodAgent(
                        id=method.id,
                        name=method.name,
                        description=method.description or (f"Set {needed} where the agent runs" if needed else None),
                        field_meta={ENV_VARS_META_KEY: details},
                    )
                )
            else:
                out.append(AuthMethodAgent(id=method.id, name=method.name, description=method.description))
        return out


def _describe(method: AuthMethod) -> str:
    if isinstance(method, EnvVarMethod):
        needed = " and ".join(v.name for v in method.env_vars if not v.optional) or "its variables"
        where = f"; get one at {method.link}" if method.link else ""
        return f"{method.id!r} ({method.name}: set {needed}{where})"
    if isinstance(method, TerminalMethod):
        return f"{method.id!r} ({method.name}: log in from a terminal, then reconnect)"
    return f"{method.id!r} ({method.name})"


class ConnectionAuth:
    """The authentication state of one connection (`AcpAgent.auth`).

    [`require`][acpkit_core.auth.ConnectionAuth.require] guards every session request;
    [`authenticate`][acpkit_core.auth.ConnectionAuth.authenticate] answers the `authenticate`
    method. A new connection starts unauthenticated.
    """

    def __init__(self, auth: Authentication | None) -> None:
        """The state for a connection to an agent configured with `auth` (`None`: nothing to authenticate)."""
        self.config = auth
        """The agent's `auth` option."""
        self.method_id: str | None = None
        """The method that succeeded on this connection, if any."""
        self.client: str | None = None
        """The client's name (set by `initialize`), passed to `check` and `login`."""
        self.terminal = False
        """The client can run terminal methods (`clientCapabilities.auth.terminal`, set by `initialize`)."""
        self.logged_out = False
        """`logout` ended the state: methods satisfied by themselves no longer count on this connection."""
        self._refusals: dict[str, str] = {}

    @property
    def authenticated(self) -> bool:
        """True once a method succeeded (or was granted) on this connection."""
        return self.method_id is not None

    def wire_methods(self) -> list[WireAuthMethod]:
        """`authMethods` for `initialize` (empty without the option)."""
        return self.config.wire_methods(terminal=self.terminal) if self.config is not None else []

    def grant(self, method_id: str) -> None:
        """Mark the connection authenticated by other means (a transport's own credentials), naming how."""
        self.method_id = method_id

    async def authenticate(self, method_id: str, meta: Mapping[str, Any] | None = None) -> None:
        """Run the method the client chose; raises `AuthRequiredError` when it does not succeed.

        An unknown method id raises `KeyError` (the server answers -32602 listing the methods).
        """
        if self.config is None:
            raise KeyError(f"unknown authentication method {method_id!r}: this agent offers none")
        method = next((m for m in self.config.methods if m.id == method_id), None)
        if method is None:
            ids = [m.id for m in self.config.methods]
            raise KeyError(f"unknown authentication method {method_id!r}; the methods are {ids}")
        if isinstance(method, TerminalMethod):
            raise KeyError(
                f"{method_id!r} is a terminal method: it is not passed to `authenticate`; run the agent's "
                f"program in a terminal with {TERMINAL_LOGIN_ENV}={method_id}, then reconnect"
            )
        await self._try(method, dict(meta or {}))
        self.method_id = method.id
        self.logged_out = False

    async def logout(self, meta: Mapping[str, Any] | None = None) -> None:
        """End this connection's authenticated state, running `Authentication.logout` first."""
        if self.config is not None and self.config.logout is not None:
            await self.config.logout(
                AuthRequest(method_id=self.method_id or "", meta=dict(meta or {}), client=self.client)
            )
        self.method_id = None
        self.logged_out = True

    async def require(self, action: str) -> None:
        """Raise `AuthRequiredError` unless the connection may do `action` (a method name such as `session/new`)."""
        if self.authenticated or self.config is None or not self.config.required:
            return
        for method in () if self.logged_out else self.config.methods:
            if isinstance(method, TerminalMethod):
                try:
                    await method.check(AuthRequest(method_id=method.id, client=self.client))
                except AuthRequiredError as exc:
                    self._refusals[method.id] = str(exc)
                    continue
                self.method_id = method.id
                return
            if isinstance(method, EnvVarMethod) and method.implicit and not self._missing(method):
                try:
                    await self._try(method, {})
                except AuthRequiredError as exc:
                    self._refusals[method.id] = str(exc)
                    continue
                self.method_id = method.id
                return
        options = " or ".join(_describe(m) for m in self.config.methods)
        refused = "".join(f" ({mid} was refused: {why})" for mid, why in self._refusals.items())
        if self.logged_out:
            refused += " (logged out on this connection)"
        raise AuthRequiredError(
            f"Authentication required before {action}: authenticate with {options}{refused}",
            methods=self.method_ids(),
        )

    def method_ids(self) -> list[str]:
        """The ids of the methods offered."""
        return [m.id for m in self.config.methods] if self.config is not None else []

    # --- internals --------------------------------------------------------------------------------

    def _environ(self) -> Mapping[str, str]:
        assert self.config is not None
        return self.config.environ if self.config.environ is not None else os.environ

    def _missing(self, method: EnvVarMethod) -> list[str]:
        environ = self._environ()
        return [v.name for v in method.env_vars if not v.optional and not environ.get(v.name)]

    async def _try(self, method: EnvVarMethod | AgentMethod, meta: dict[str, Any]) -> None:
        if isinstance(method, AgentMethod):
            await method.login(AuthRequest(method_id=method.id, meta=meta, client=self.client))
            self._refusals.pop(method.id, None)
            return
        missing = self._missing(method)
        if missing:
            where = f"; get one at {method.link}" if method.link else ""
            raise AuthRequiredError(
                f"method {method.id!r}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set in "
                f"the agent's environment (enter {'it' if len(missing) == 1 else 'them'} in the editor's "
                f"authentication prompt, or set {'it' if len(missing) == 1 else 'them'} where the agent is started)"
                f"{where}"
            )
        if method.check is not None:
            environ = self._environ()
            values = {v.name: environ[v.name] for v in method.env_vars if environ.get(v.name)}
            await method.check(AuthRequest(method_id=method.id, values=values, meta=meta, client=self.client))
        self._refusals.pop(method.id, None)


async def terminal_login(auth: Authentication | None, environ: Mapping[str, str] | None = None) -> int | None:
    """Run the terminal login this process was started for; its exit code, or `None` when it was not.

    A client running a [`TerminalMethod`][acpkit_core.auth.TerminalMethod] starts the agent's
    program with `ACPKIT_TERMINAL_LOGIN=<method id>`: the server calls this before serving ACP
    (`serve_stdio`, `acpkit run`) and exits with the code. 0: the login succeeded; 1: it was
    refused or failed (the reason is printed); 2: no such terminal method.
    """
    environ = os.environ if environ is None else environ
    method_id = environ.get(TERMINAL_LOGIN_ENV)
    if not method_id:
        return None
    methods = auth.methods if auth is not None else ()
    method = next((m for m in methods if m.id == method_id and isinstance(m, TerminalMethod)), None)
    if not isinstance(method, TerminalMethod):
        offered = [m.id for m in methods if isinstance(m, TerminalMethod)]
        print(
            f"{TERMINAL_LOGIN_ENV}={method_id}: this agent has no such terminal login (it has {offered})",
            file=sys.stderr,
        )
        return 2
    try:
        result: object = method.login(AuthRequest(method_id=method.id))
        if inspect.isawaitable(result):
            await result
    except AuthRequiredError as exc:
        print(f"{method.name}: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, EOFError):
        print(f"{method.name}: cancelled", file=sys.stderr)
        return 1
    except Exception as exc:  # the developer's login failed: say why, in one line
        print(f"{method.name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"{method.name}: done", file=sys.stderr)
    return 0
