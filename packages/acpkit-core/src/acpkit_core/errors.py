"""Errors raised by ACP Kit.

```
AcpKitError                 base of everything ACP Kit raises on purpose
├── PromptError             a client sent a prompt we cannot accept (block index, type, field, reason)
├── UserError               the developer embedding ACP Kit misused it (says what to change)
├── SessionNotFoundError    a request named a session id that does not exist (-32002)
├── SessionBusyError        a prompt arrived while the session was still running a turn
├── HostError               the client's fs/terminal cannot serve the request
│   ├── HostUnavailableError    the client did not advertise the capability
│   └── PathPolicyError         the path lies outside the session's allowed directories
├── ConfigError             an unknown mode, config option or value (-32602)
├── InvalidCursorError      a `session/list` cursor the store did not issue (-32602)
├── RewindError             a session cannot go back to that prompt (-32602; the message says why)
└── AuthRequiredError       the connection is not authenticated, or a method refused (-32000)
```

[`to_request_error`][acpkit_core.errors.to_request_error] gives each its JSON-RPC error; the server
applies it at its boundary, and a runner that answers requests itself (the hand-built LangChain
path) applies the same mapping. [`error_code`][acpkit_core.errors.error_code] extends it to any
exception (a failed turn's answer, a hand-built server's): one rule, in this module.

| what went wrong | code | ACP defines it? |
|---|---|---|
| `AuthRequiredError`, a provider's 401 / `AuthenticationError` | -32000 | yes (auth required) |
| unknown session (`SessionNotFoundError`), `FileNotFoundError`, a provider's 404 | -32002 | yes (resource not found) |
| `PathPolicyError`, `PermissionError`, a provider's 403 / `PermissionDeniedError` | -32013 | no (see below) |
| bad prompt, unknown mode or option, bad cursor, a rewind refused | -32602 | yes (JSON-RPC invalid params) |
| a prompt while a turn runs | -32600 | yes (JSON-RPC invalid request) |
| anything else, `UserError` ("agent misconfigured") | -32603 | yes (JSON-RPC internal error) |

ACP's schema names no code for "permission denied" (its error codes are JSON-RPC's, -32000 and
-32002); we use -32013, the value the LangChain ACP middleware specification gives it, taken from
JSON-RPC's range for implementation-defined server errors, so that a refusal by the path policy is
not reported as an internal error. Errors are recognised by type and HTTP status, never by words in
their message (a message that mentions "permission" is not a refusal). A tool that fails inside a
turn is not a JSON-RPC error at all: its call ends `failed` and the turn goes on.
"""

from __future__ import annotations

from acp import RequestError

__all__ = [
    "AcpKitError",
    "AuthRequiredError",
    "ConfigError",
    "HostError",
    "HostUnavailableError",
    "InvalidCursorError",
    "PathPolicyError",
    "PromptError",
    "RewindError",
    "SessionBusyError",
    "SessionNotFoundError",
    "UserError",
    "error_code",
    "to_request_error",
]

INVALID_REQUEST = -32600
"""JSON-RPC: invalid request."""
INVALID_PARAMS = -32602
"""JSON-RPC: invalid params."""
INTERNAL_ERROR = -32603
"""JSON-RPC: internal error."""
AUTH_REQUIRED = -32000
"""ACP: authentication required."""
RESOURCE_NOT_FOUND = -32002
"""ACP: resource not found."""
PERMISSION_DENIED = -32013
"""Permission denied: not defined by ACP; the middleware specification's value (JSON-RPC server-error range)."""

_BY_STATUS: dict[int, int] = {401: AUTH_REQUIRED, 403: PERMISSION_DENIED, 404: RESOURCE_NOT_FOUND}
"""A provider's HTTP status -> our code."""

_BY_NAME: dict[str, int] = {
    "AuthenticationError": AUTH_REQUIRED,
    "PermissionDeniedError": PERMISSION_DENIED,
    "NotFoundError": RESOURCE_NOT_FOUND,
}
"""Provider SDK exception class names (OpenAI, Anthropic and others share them) -> our code."""


class AcpKitError(Exception):
    """Base class of every error ACP Kit raises on purpose."""


class PromptError(AcpKitError, ValueError):
    """A prompt from the client is malformed.

    The message names the block, its type, the field and the reason, for example
    `prompt[2] (image): data is not valid base64 (at character 17)`.
    """

    def __init__(
        self, reason: str, *, index: int | None = None, block_type: str | None = None, field: str | None = None
    ):
        self.reason = reason
        """Why the block was refused."""
        self.index = index
        """Index of the offending block in the prompt, or `None` when the prompt itself is wrong."""
        self.block_type = block_type
        """The block's `type`, when it could be read."""
        self.field = field
        """The field of the block that is wrong, when one is."""
        super().__init__(self._format())

    def _format(self) -> str:
        where = "prompt" if self.index is None else f"prompt[{self.index}]"
        if self.block_type:
            where += f" ({self.block_type})"
        if self.field:
            return f"{where}: {self.field}: {self.reason}"
        return f"{where}: {self.reason}"


class UserError(AcpKitError):
    """The developer embedding ACP Kit used it wrongly; the message says what to change."""


class SessionNotFoundError(AcpKitError, KeyError):
    """No session with this id exists in the store."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        """The id that was asked for."""
        super().__init__(f"session not found: {session_id!r}")

    def __str__(self) -> str:
        return str(self.args[0])


class SessionBusyError(AcpKitError):
    """A prompt arrived while the session was still running another turn."""


class HostError(AcpKitError):
    """The client's file system or terminal could not serve a request."""


class HostUnavailableError(HostError):
    """The client did not advertise the capability (for example `fs.readTextFile`)."""


class PathPolicyError(HostError):
    """A path lies outside the directories the session may touch."""


class ConfigError(AcpKitError, ValueError):
    """An unknown mode, config option or option value."""


class InvalidCursorError(AcpKitError, ValueError):
    """A `session/list` cursor that this store did not issue."""


class RewindError(AcpKitError, ValueError):
    """A session cannot be taken back to that prompt: no such prompt, a store or checkpointer that
    cannot go back. The message says why, in words the user reads."""


class AuthRequiredError(AcpKitError):
    """The connection is not authenticated (-32000), or an authentication method refused.

    Raise it from an [`EnvVarMethod.check`][acpkit_core.auth.EnvVarMethod.check] or an
    [`AgentMethod.login`][acpkit_core.auth.AgentMethod.login]: the message is what the user reads,
    so say what is missing or wrong and what to do.
    """

    def __init__(self, message: str, *, methods: list[str] | None = None) -> None:
        super().__init__(message)
        self.methods = methods
        """The ids of the methods the client may try (sent as `data.authMethods`), when known."""


def to_request_error(exc: Exception) -> RequestError | None:
    """The JSON-RPC error for an ACP Kit error, `None` for anything else.

    `SessionNotFoundError` is -32002 with the id; `PromptError` -32602 with the block index, field
    and reason; `ConfigError`, `InvalidCursorError` and `RewindError` -32602; `SessionBusyError` -32600;
    `PathPolicyError` -32013 (permission denied); `UserError` -32603 ("agent misconfigured");
    `AuthRequiredError` -32000 with the reason.
    """
    if isinstance(exc, AuthRequiredError):
        return RequestError(AUTH_REQUIRED, str(exc), {"authMethods": exc.methods} if exc.methods else None)
    if isinstance(exc, PathPolicyError):
        return RequestError(PERMISSION_DENIED, str(exc), {"reason": "permission_denied"})
    if isinstance(exc, SessionNotFoundError):
        return RequestError(RESOURCE_NOT_FOUND, str(exc), {"sessionId": exc.session_id})
    if isinstance(exc, PromptError):
        return RequestError(INVALID_PARAMS, str(exc), {"index": exc.index, "field": exc.field, "reason": exc.reason})
    if isinstance(exc, ConfigError | InvalidCursorError | RewindError):
        return RequestError(INVALID_PARAMS, str(exc))
    if isinstance(exc, SessionBusyError):
        return RequestError(INVALID_REQUEST, str(exc))
    if isinstance(exc, UserError):
        return RequestError(INTERNAL_ERROR, f"agent misconfigured: {exc}")
    return None


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def _code(exc: BaseException) -> int | None:
    if isinstance(exc, Exception) and (mapped := to_request_error(exc)) is not None:
        return mapped.code
    if isinstance(exc, RequestError):
        return exc.code
    if isinstance(exc, FileNotFoundError):
        return RESOURCE_NOT_FOUND
    if isinstance(exc, PermissionError):
        return PERMISSION_DENIED
    for cls in type(exc).__mro__:
        if cls.__name__ in _BY_NAME:
            return _BY_NAME[cls.__name__]
    status = _status(exc)
    return _BY_STATUS.get(status) if status is not None else None


def error_code(exc: BaseException) -> int:
    """The JSON-RPC error code for any exception (the table in the module docs); -32603 when nothing matches.

    The exception itself is looked at first, then the chain of exceptions it was raised from
    (`raise ... from cause`), so a wrapped provider error keeps its meaning.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = _code(current)
        if code is not None:
            return code
        current = current.__cause__
    return INTERNAL_ERROR
