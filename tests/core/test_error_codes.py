"""One error-code rule (`acpkit_core.errors.error_code`): the specification's table where ACP defines the code."""

from __future__ import annotations

import anthropic
import httpx2 as httpx
import pytest
from acp import RequestError
from acpkit_core.errors import (
    ConfigError,
    PathPolicyError,
    PromptError,
    SessionBusyError,
    SessionNotFoundError,
    UserError,
    error_code,
    to_request_error,
)
from pydantic_ai.exceptions import ModelHTTPError


def _anthropic(cls: type[anthropic.APIStatusError], status: int) -> anthropic.APIStatusError:
    response = httpx.Response(status, request=httpx.Request("POST", "https://api.anthropic.com/v1/messages"))
    return cls("provider said no", response=response, body=None)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        # auth required (ACP -32000)
        (_anthropic(anthropic.AuthenticationError, 401), -32000),
        (ModelHTTPError(401, "gpt-5"), -32000),
        # resource not found (ACP -32002)
        (SessionNotFoundError("s1"), -32002),
        (FileNotFoundError(2, "No such file", "/w/a.txt"), -32002),
        (_anthropic(anthropic.NotFoundError, 404), -32002),
        (ModelHTTPError(404, "no-such-model"), -32002),
        # permission denied (not defined by ACP: the specification's -32013)
        (PathPolicyError("/etc/passwd is outside the session's directories: /w"), -32013),
        (PermissionError(13, "Permission denied", "/w/locked"), -32013),
        (_anthropic(anthropic.PermissionDeniedError, 403), -32013),
        (ModelHTTPError(403, "gpt-5"), -32013),
        # JSON-RPC's own
        (PromptError("bad", index=0), -32602),
        (ConfigError("unknown mode"), -32602),
        (SessionBusyError("busy"), -32600),
        (UserError("fix it"), -32603),
        (RequestError(-32000, "Authentication required"), -32000),
        # anything else, and words in a message do not count
        (RuntimeError("permission denied: auth token not found"), -32603),
        (_anthropic(anthropic.RateLimitError, 429), -32603),
        (ModelHTTPError(500, "gpt-5"), -32603),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v),
)
def test_error_code_table(error: BaseException, code: int) -> None:
    assert error_code(error) == code


def test_error_code_follows_the_cause_chain() -> None:
    try:
        try:
            raise _anthropic(anthropic.AuthenticationError, 401)
        except anthropic.APIStatusError as inner:
            raise RuntimeError("the model call failed") from inner
    except RuntimeError as outer:
        assert error_code(outer) == -32000


def test_path_policy_refusal_is_permission_denied_not_internal() -> None:
    mapped = to_request_error(PathPolicyError("/etc/passwd is outside the session's directories: /w"))
    assert mapped is not None
    assert (mapped.code, str(mapped)) == (-32013, "/etc/passwd is outside the session's directories: /w")
    assert mapped.data == {"reason": "permission_denied"}
