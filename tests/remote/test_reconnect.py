"""Cut the client's TCP connection (not the server) mid-turn, many times: the client loses nothing.

Real `acpkit serve` processes, a proxy between client and server that resets every connection it
carries at random points of a streamed turn (text, a tool call, a permission question, more text),
and `AcpTestClient.connect_url(..., reconnect=True)`, which reconnects and re-attaches by itself
(the transport `acpkit chat --url` and `acpkit bridge` use). Each turn's transcript, as the client
saw it, must equal the transcript of the same turn with no cut, exactly, with its answer; for both
adapters, both profiles, and across two replicas on Postgres (the client's reconnects land on the
other replica while the turn runs on the first).

The cut points come from a seeded RNG; a failure prints the seed and the points.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from acp import RequestError
from acpkit_core.testing import AcpTestClient
from cutproxy import CutProxy
from replicas import Replica, replica

pytestmark = [
    pytest.mark.timeout(240),
    # A GET stream the SDK's HTTP transport was opening when a cut came is cancelled mid-connect on
    # close: httpx/anyio then leave its socket to the garbage collector (a ResourceWarning, not a leak
    # that lasts). Only those two warnings are let through.
    pytest.mark.filterwarnings("ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <function _SelectorTransport.__del__:pytest.PytestUnraisableExceptionWarning"
    ),
]

AGENTS = Path(__file__).parent / "agents"
TARGETS = {"pydantic": AGENTS / "reconnect_pydantic.py", "langgraph": AGENTS / "reconnect_langgraph.py"}
TOKEN = "reconnect-token-0123456789abcdef"
CUTS = int(os.environ.get("RECONNECT_CUTS", "100"))
"""Cut points per combination (spread over turns, `CUTS_PER_TURN` each)."""
CUTS_PER_TURN = 10
SEED = int(os.environ.get("RECONNECT_SEED", "23"))
PROMPT = "Look up the tides and write a note"


def normalised(updates: list[Any]) -> list[dict[str, Any]]:
    """The updates as wire JSON, without what differs between two runs of one turn: `_meta` (the
    numbers), timestamps, and message ids (replaced by their order of appearance)."""
    ids: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for update in updates:
        data = update.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"field_meta"})
        data.pop("updatedAt", None)
        if "messageId" in data:
            data["messageId"] = ids.setdefault(data["messageId"], f"m{len(ids)}")
        out.append(data)
    return out


async def one_turn(client: AcpTestClient, proxy: CutProxy | None, cuts: list[int]) -> tuple[str, list[dict[str, Any]]]:
    """A fresh session's turn, the connection cut after each count of updates in `cuts`."""
    try:  # bounded, as every step here: a hang names its step
        sid = await asyncio.wait_for(client.new_session(), 30)
    except TimeoutError:
        raise AssertionError(f"session/new got no answer in 30 s (cuts before it: {proxy and proxy.cuts})") from None
    turn = asyncio.ensure_future(client.prompt(PROMPT, session_id=sid))
    loop = asyncio.get_running_loop()
    for count in cuts:
        deadline = loop.time() + 30
        while len(client.updates.get(sid, [])) < count and not turn.done():
            seen = len(client.updates.get(sid, []))
            assert loop.time() < deadline, f"cuts {cuts}: update {count} never came ({seen} seen)"
            await asyncio.sleep(0.0005)
        if turn.done():
            break
        assert proxy is not None
        proxy.cut()
    response = await asyncio.wait_for(turn, 30)
    return response.stop_reason, normalised(client.updates.get(sid, []))


@pytest.fixture
def tokens(tmp_path: Path) -> list[str]:
    path = tmp_path / "tokens"
    path.write_text(f"alice:{TOKEN}\n")
    return ["--token-file", str(path)]


@pytest.fixture(params=["pydantic", "langgraph"])
def target(request: pytest.FixtureRequest) -> Path:
    return TARGETS[str(request.param)]


@pytest.fixture(params=["ws", "http"])
def scheme(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _cut_many(serving: list[Replica], scheme: str, label: str) -> None:
    """`CUTS` cuts over `CUTS / CUTS_PER_TURN` turns, each compared with an uncut one."""
    first = urlparse(serving[0].url)
    proxy = await CutProxy(first.hostname or "127.0.0.1", first.port or 0).start()
    try:
        if len(serving) > 1:
            proxy.targets = [(urlparse(r.url).hostname or "127.0.0.1", urlparse(r.url).port or 0) for r in serving]
            # each cut sends the client's next connections to the other replica
        async with AcpTestClient.connect_url(proxy.url(scheme), token=TOKEN, reconnect=True) as client:
            await asyncio.wait_for(client.initialize(), 30)
            reference = await one_turn(client, None, [])
            assert reference[0] == "end_turn"
            kinds = [u["sessionUpdate"] for u in reference[1]]
            assert "tool_call" in kinds and len(client.permission_requests) == 1, kinds
            length = len(reference[1])
            rng = random.Random(f"{SEED}-{label}")
            for turn in range(CUTS // CUTS_PER_TURN):
                cuts = sorted(rng.sample(range(1, length), CUTS_PER_TURN))
                got = await one_turn(client, proxy, cuts)
                assert got == reference, f"{label}: seed {SEED}, turn {turn}, cut after updates {cuts}"
            assert proxy.cuts >= CUTS // 2  # (a turn may end before its last cut points)
    finally:
        await proxy.close()


async def test_cuts_lose_no_update(tmp_path: Path, target: Path, scheme: str, tokens: list[str]) -> None:
    store = str(tmp_path / "sessions.sqlite3")
    async with replica(store, args=tokens, target=target) as server:
        await _cut_many([server], scheme, f"{target.stem}-{scheme}")


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue("postgres_url"))


async def test_cuts_across_two_replicas_on_postgres(
    postgres: str, target: Path, scheme: str, tokens: list[str]
) -> None:
    """Every reconnect goes to the other replica: the turn runs on one, the client follows it from the other."""
    async with replica(postgres, args=tokens, target=target) as a, replica(postgres, args=tokens, target=target) as b:
        await _cut_many([a, b], scheme, f"{target.stem}-{scheme}-pg")


async def test_a_dropped_clients_turn_still_counts_against_its_principals_quota(
    tmp_path: Path, tokens: list[str]
) -> None:
    """Dropping a connection frees no quota while its turn runs on, detached: dropping and
    reconnecting cannot pile up turns past `--max-turns-per-principal`."""
    target = Path(__file__).parent / "agents" / "flood_target.py"
    args = [*tokens, "--max-turns-per-principal", "1"]
    async with replica(str(tmp_path / "s.sqlite3"), args=args, target=target) as server:
        address = urlparse(server.url)
        proxy = await CutProxy(address.hostname or "127.0.0.1", address.port or 0).start()
        try:
            with contextlib.suppress(Exception):
                async with AcpTestClient.connect_url(proxy.url("ws"), token=TOKEN) as dropped:
                    await dropped.initialize()
                    sid = await dropped.new_session()
                    turn = asyncio.ensure_future(dropped.prompt("say started\nsleep 30", session_id=sid))
                    while "started" not in str(dropped.updates.get(sid)):
                        await asyncio.sleep(0.01)
                    proxy.cut()
                    with contextlib.suppress(Exception):
                        await turn
            async with AcpTestClient.connect_url(server.url, token=TOKEN) as other:
                await other.initialize()
                other_sid = await other.new_session()
                with pytest.raises(RequestError) as refused:
                    await other.prompt("say hi", session_id=other_sid)
                assert refused.value.code == -32600 and "max_turns_per_principal=1" in str(refused.value.data)
        finally:
            await proxy.close()


class _Sse:
    """One SSE stream read in the background: its events as (id, message)."""

    def __init__(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        self.events: list[tuple[int | None, dict[str, Any]]] = []
        self.status = 0
        self._task = asyncio.ensure_future(self._read(http, url, headers))

    async def _read(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        with contextlib.suppress(httpx.HTTPError):  # (the stream is cut when its client closes)
            await self._read_all(http, url, headers)

    async def _read_all(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        async with http.stream("GET", url, headers={"Accept": "text/event-stream", **headers}) as response:
            self.status = response.status_code
            event_id: int | None = None
            async for line in response.aiter_lines():
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    self.events.append((event_id, json.loads(line[6:])))
                    event_id = None

    async def until(self, found: Any) -> dict[str, Any]:
        for _ in range(2000):
            for _, message in self.events:
                if found(message):
                    return message
            await asyncio.sleep(0.005)
        error = self._task.exception() if self._task.done() and not self._task.cancelled() else None
        raise AssertionError(f"not seen in {self.events} (HTTP {self.status}, {error!r})")

    def close(self) -> None:
        self._task.cancel()


def _text(message: dict[str, Any]) -> str:
    update = message.get("params", {}).get("update", {})
    return (
        str(update.get("content", {}).get("text", "")) if update.get("sessionUpdate") == "agent_message_chunk" else ""
    )


async def test_streamable_http_takes_a_session_stream_up_after_its_last_event_id(
    tmp_path: Path, tokens: list[str]
) -> None:
    """Streamable HTTP's own way: a new connection reopens the session (no cursor) and GETs its stream
    with `Last-Event-ID` (the number of the last update seen): the rest of the turn, then its end."""
    target = Path(__file__).parent / "agents" / "flood_target.py"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    async with replica(str(tmp_path / "s.sqlite3"), args=tokens, target=target) as server:
        url = server.http_url
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
        async with httpx.AsyncClient(timeout=30) as first:
            conn = {
                **auth,
                "Acp-Connection-Id": (await first.post(url, json=init, headers=auth)).headers["Acp-Connection-Id"],
            }
            main = _Sse(first, url, conn)
            new = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": str(tmp_path), "mcpServers": []},
            }
            assert (await first.post(url, json=new, headers=conn)).status_code == 202
            sid = (await main.until(lambda m: m.get("id") == 1))["result"]["sessionId"]
            stream = _Sse(first, url, {**conn, "Acp-Session-Id": sid})
            words = "\n".join(f"say w{i}\nsleep 0.05" for i in range(20))
            prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                      "params": {"sessionId": sid, "prompt": [{"type": "text", "text": words}]}}  # fmt: skip
            assert (await first.post(url, json=prompt, headers={**conn, "Acp-Session-Id": sid})).status_code == 202
            while not any(_text(m) == "w5" for _, m in [*main.events, *stream.events]):  # (either stream)
                await asyncio.sleep(0.005)
            seen = [(i, m) for i, m in [*main.events, *stream.events] if i is not None]
            last = max(i for i, _ in seen)
            assert [i for i, _ in seen] == list(range(seen[0][0], last + 1))  # numbered in order, no gap
            main.close()
            stream.close()  # the client drops (no DELETE): the turn goes on, detached
        async with httpx.AsyncClient(timeout=30) as second:
            conn = {
                **auth,
                "Acp-Connection-Id": (await second.post(url, json=init, headers=auth)).headers["Acp-Connection-Id"],
            }
            main = _Sse(second, url, conn)
            resume = {"jsonrpc": "2.0", "id": 3, "method": "session/resume",
                      "params": {"sessionId": sid, "cwd": str(tmp_path), "mcpServers": []}}  # fmt: skip
            assert (await second.post(url, json=resume, headers={**conn, "Acp-Session-Id": sid})).status_code == 202
            await main.until(lambda m: m.get("id") == 3)
            bad = await second.get(
                url, headers={**conn, "Acp-Session-Id": sid, "Last-Event-ID": "x1", "Accept": "text/event-stream"}
            )
            assert bad.status_code == 400 and "Last-Event-ID" in bad.text
            stream = _Sse(second, url, {**conn, "Acp-Session-Id": sid, "Last-Event-ID": str(last)})
            ended = await stream.until(lambda m: m.get("method") == "_acpkit/turn_ended")
            assert not [m for i, m in main.events if i is not None]  # all of it on the session's stream
            main.close()
            stream.close()
    assert ended["params"]["response"]["stopReason"] == "end_turn"
    replayed = [m for i, m in stream.events if i is not None]
    numbers = [i for i, _ in stream.events if i is not None]
    assert numbers == list(range(last + 1, last + 1 + len(numbers)))  # every update after the last seen, once
    said = [_text(m) for m in [*(m for _, m in seen), *replayed] if _text(m)]
    assert said == [f"w{i}" for i in range(20)]  # the whole turn across both connections, nothing twice


@pytest.mark.parametrize("scheme", ["ws", "http"])
async def test_an_editor_behind_acpkit_bridge_sees_no_gap(tmp_path: Path, scheme: str) -> None:
    """`acpkit bridge` reconnects and re-attaches by itself: the editor on its stdio never notices the cuts."""
    store = str(tmp_path / "sessions.sqlite3")
    async with replica(store, target=TARGETS["pydantic"]) as server:  # (loopback, no token)
        address = urlparse(server.url)
        proxy = await CutProxy(address.hostname or "127.0.0.1", address.port or 0).start()
        try:
            bridge = [sys.executable, "-m", "acpkit_core.cli", "bridge", proxy.url(scheme)]
            async with AcpTestClient.spawn(*bridge) as editor:
                await editor.initialize()
                reference = await one_turn(editor, None, [])
                length = len(reference[1])
                rng = random.Random(f"{SEED}-bridge-{scheme}")
                for _ in range(2):
                    cuts = sorted(rng.sample(range(1, length), CUTS_PER_TURN))
                    assert await one_turn(editor, proxy, cuts) == reference, f"bridge: seed {SEED}, cuts {cuts}"
            assert proxy.cuts >= CUTS_PER_TURN
        finally:
            await proxy.close()


async def test_a_request_whose_answer_went_to_the_dropped_connection_is_sent_again(
    tmp_path: Path, tokens: list[str]
) -> None:
    """Over Streamable HTTP a request is accepted (`202`) and answered later on the connection's
    stream: a drop in between loses the answer with that stream. The reconnected client sends the
    request again instead of waiting for it forever (a `session/new` here: it takes a second)."""
    target = AGENTS / "slow_open_target.py"
    async with replica(str(tmp_path / "s.sqlite3"), args=tokens, target=target, env={"OPEN_SECONDS": "1"}) as server:
        address = urlparse(server.url)
        proxy = await CutProxy(address.hostname or "127.0.0.1", address.port or 0).start()
        try:
            async with AcpTestClient.connect_url(proxy.url("http"), token=TOKEN, reconnect=True) as client:
                await asyncio.wait_for(client.initialize(), 30)
                opening = asyncio.ensure_future(client.new_session())
                await asyncio.sleep(0.4)  # accepted, and opening on the server
                assert not opening.done()
                proxy.cut()
                try:
                    sid = await asyncio.wait_for(opening, 15)
                except TimeoutError:
                    raise AssertionError("session/new was never answered after the reconnect") from None
                result = await asyncio.wait_for(client.prompt("say hello", session_id=sid), 15)
            assert (result.stop_reason, result.text) == ("end_turn", "hello")
            assert proxy.cuts == 1
        finally:
            await proxy.close()
