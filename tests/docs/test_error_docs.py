"""What docs/design.md and docs/reliability.md say about errors is what the code does.

The pages' statements are read from the pages themselves (their tables, their `X becomes -N`
claims, their JSON example) and checked against a real turn served by the core server and against
the public mappers: a page and the code cannot drift apart without this test failing. A row added
to a table without a sample exception here fails too.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import langchain_acp
import pydantic_acp
import pytest
from acp import RequestError
from acpkit_core.config import AgentOptions
from acpkit_core.errors import (
    ConfigError,
    PathPolicyError,
    PromptError,
    SessionNotFoundError,
    error_code,
    to_request_error,
)
from acpkit_core.runner.protocols import Turn
from acpkit_core.runner.types import StopReason
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient
from langgraph.errors import GraphRecursionError
from pydantic_ai.exceptions import (
    ContentFilterError,
    OutputTokenLimitExceeded,
    RunCancelled,
    UsageLimitExceeded,
)

ROOT = Path(__file__).resolve().parents[2]
DESIGN = (ROOT / "docs" / "design.md").read_text()
RELIABILITY = (ROOT / "docs" / "reliability.md").read_text()


def section(page: str, heading: str) -> str:
    """The text under `heading` (a `#` line), up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    start = page.index(heading + "\n") + len(heading) + 1
    rest = page[start:]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def table(text: str, first_header: str) -> list[list[str]]:
    """The rows (cells stripped) of the Markdown table whose header row starts with `first_header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows: list[list[str]] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def code_in(cell: str) -> int:
    found = re.search(r"`(-\d+)`", cell)
    assert found, f"no error code in {cell!r}"
    return int(found.group(1))


class ProviderError(Exception):
    """What a provider SDK raises: an HTTP status on the exception."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class AuthenticationError(ProviderError):
    """Named as OpenAI's and Anthropic's SDKs name it."""


class LengthFinishReasonError(Exception):
    """Named as OpenAI's SDK names it (LangChain raises it for a length finish)."""


class ContentFilterFinishReasonError(Exception):
    """Named as OpenAI's SDK names it."""


# --- docs/reliability.md: a failed turn's answer, over a real connection ------------------------

FAILED_TURN_SAMPLES: dict[str, list[BaseException]] = {
    "a provider's authentication error (`AuthenticationError`, HTTP 401)": [
        AuthenticationError("invalid x-api-key", 401),
        ProviderError("unauthorised", 401),
    ],
    "`FileNotFoundError`, a provider's 404": [FileNotFoundError("notes.txt"), ProviderError("no such model", 404)],
    "`PathPolicyError` (a path outside the session's directories), `PermissionError`, a provider's 403": [
        PathPolicyError("/etc/passwd is outside the session's directories"),
        PermissionError("read-only file system"),
        ProviderError("forbidden", 403),
    ],
    "anything else (`RuntimeError`, a tool that raised with error reporting off)": [
        RuntimeError("the model service is down"),
        ValueError("bad tool argument"),
    ],
}


class RaisingRunner:
    """Streams a word, then raises the exception it was given."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run_turn(self, turn: Turn) -> StopReason:
        await turn.emit.text("working")
        raise self.error


async def failed_turn(error: BaseException) -> RequestError:
    async with AcpTestClient.connect(AcpAgent(RaisingRunner(error), AgentOptions(store="memory"))) as c:
        await c.initialize()
        sid = await c.new_session()
        with pytest.raises(RequestError) as failed:
            await c.prompt("go", session_id=sid)
        return failed.value


def test_every_row_of_the_failed_turn_table_has_samples() -> None:
    rows = table(section(RELIABILITY, "### Failed turns"), "the runner raised")
    assert [row[0] for row in rows] == list(FAILED_TURN_SAMPLES)


@pytest.mark.parametrize(
    ("row", "error"), [(row, error) for row, errors in FAILED_TURN_SAMPLES.items() for error in errors]
)
async def test_a_failed_turn_is_answered_as_the_reliability_page_says(row: str, error: BaseException) -> None:
    rows = {r[0]: r[1] for r in table(section(RELIABILITY, "### Failed turns"), "the runner raised")}
    answer = await failed_turn(error)
    assert answer.code == code_in(rows[row])
    assert error_code(error) == code_in(rows[row])


async def test_the_json_example_of_a_failed_turn_is_what_is_sent() -> None:
    text = section(RELIABILITY, "### Failed turns")
    example = json.loads(re.search(r"```json\n(.*?)\n```", text, re.DOTALL).group(1))  # type: ignore[union-attr]
    answer = await failed_turn(RuntimeError("the model service is down"))
    assert answer.code == example["error"]["code"] == -32603
    assert str(answer) == example["error"]["message"]
    data = dict(answer.data or {})
    assert data.pop("sessionId") and example["error"]["data"].pop("sessionId") == "…"
    assert data == example["error"]["data"]


# --- docs/design.md: the boundary's claims ----------------------------------------------------

BOUNDARY_SAMPLES: dict[str, Exception] = {
    "PromptError": PromptError("unknown content block type", index=1, block_type="video"),
    "ConfigError": ConfigError("unknown mode 'fast'"),
    "SessionNotFoundError": SessionNotFoundError("s1"),
    "PathPolicyError": PathPolicyError("/etc is outside the session"),
}


def test_the_boundary_codes_of_the_design_page_are_the_codes_sent() -> None:
    errors = section(DESIGN, "## Errors")
    claims: list[tuple[str, int]] = []
    for names, code in re.findall(r"((?:`\w+`(?: and )?)+) becomes? (-\d+)", errors):
        claims += [(name, int(code)) for name in re.findall(r"`(\w+)`", names)]
    claims += [(name, int(code)) for name, code in re.findall(r"`(\w+)` (-\d+) \(", errors)]
    assert sorted(name for name, _ in claims) == sorted(BOUNDARY_SAMPLES)
    for name, code in claims:
        mapped = to_request_error(BOUNDARY_SAMPLES[name])
        assert mapped is not None and mapped.code == code, name


def test_the_provider_statuses_of_the_design_page_are_error_codes_table() -> None:
    errors = section(DESIGN, "## Errors")
    statuses = re.search(r"\(provider ([^)]*)\)", errors)
    assert statuses, "the design page no longer states the provider statuses"
    pairs = re.findall(r"(\d{3}) -> (-\d+)", statuses.group(1))
    assert {int(s): int(c) for s, c in pairs} == {401: -32000, 404: -32002, 403: -32013}
    for status, code in pairs:
        assert error_code(ProviderError("x", int(status))) == int(code)
    otherwise = re.search(r"else (-\d+)", statuses.group(1))
    assert otherwise and error_code(RuntimeError("x")) == int(otherwise.group(1))


async def test_both_pages_say_a_failed_turn_is_a_json_rpc_error_which_it_is() -> None:
    answer = await failed_turn(RuntimeError("boom"))
    for page, heading in ((DESIGN, "## Errors"), (RELIABILITY, "### Failed turns")):
        text = " ".join(section(page, heading).split())
        assert "JSON-RPC error" in text and f"{answer.code}" in text
        assert "stop_reason_from_error" in text and "middleware specification" in text
        assert "visible message" not in text  # the old claim: a failed turn ended with a message
    assert answer.code == -32603


# --- both pages: the public stop-reason mapper follows the middleware specification -------------

STOP_SAMPLES: dict[str, dict[str, list[BaseException]]] = {
    "a request or recursion limit (`UsageLimitExceeded`, `GraphRecursionError`)": {
        "pydantic": [UsageLimitExceeded("The next request would exceed the request_limit of 50")],
        "langchain": [GraphRecursionError("Recursion limit of 25 reached")],
    },
    "a token limit (`OutputTokenLimitExceeded`, a token `UsageLimitExceeded`, LangChain's length error)": {
        "pydantic": [
            OutputTokenLimitExceeded("too long"),
            UsageLimitExceeded("Exceeded the total_tokens_limit of 100"),
        ],
        "langchain": [LengthFinishReasonError("length")],
    },
    "a content filter (`ContentFilterError`, LangChain's content-filter error)": {
        "pydantic": [ContentFilterError("filtered")],
        "langchain": [ContentFilterFinishReasonError("filtered")],
    },
    "a cancellation (`asyncio.CancelledError`, `RunCancelled`)": {
        "pydantic": [RunCancelled("stopped"), asyncio.CancelledError()],
        "langchain": [asyncio.CancelledError()],
    },
    "a refused permission (`PathPolicyError`, `PermissionError`, a provider's 403)": {
        "pydantic": [PathPolicyError("/etc"), PermissionError("no"), ProviderError("forbidden", 403)],
        "langchain": [PathPolicyError("/etc"), PermissionError("no"), ProviderError("forbidden", 403)],
    },
    "anything else": {
        "pydantic": [RuntimeError("boom"), FileNotFoundError("x"), AuthenticationError("key", 401)],
        "langchain": [RuntimeError("boom"), FileNotFoundError("x"), AuthenticationError("key", 401)],
    },
}

MAPPERS: dict[str, Any] = {
    "pydantic": pydantic_acp.stop_reason_from_error,
    "langchain": langchain_acp.stop_reason_from_error,
}


def test_every_row_of_the_stop_reason_table_has_samples() -> None:
    rows = table(section(RELIABILITY, "### Failed turns"), "the run raised")
    assert [row[0] for row in rows] == list(STOP_SAMPLES)


@pytest.mark.parametrize("adapter", sorted(MAPPERS))
@pytest.mark.parametrize("row", list(STOP_SAMPLES))
def test_stop_reason_from_error_follows_the_table(adapter: str, row: str) -> None:
    rows = {r[0]: r[1].strip("`") for r in table(section(RELIABILITY, "### Failed turns"), "the run raised")}
    for error in STOP_SAMPLES[row][adapter]:
        assert MAPPERS[adapter](error) == rows[row], (adapter, error)
