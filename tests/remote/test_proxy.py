"""The Caddyfile of docs/remote.md, run for real: TLS and HTTP/2 in front, WebSocket and SSE through it.

Needs the `caddy` binary (Debian's `caddy` package; `.ci/run` installs it). Without it the test
skips, except under CI, where it fails.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import ssl
from pathlib import Path

import httpx
import pytest
from acpkit_core.testing import AcpTestClient
from replicas import replica

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "proxy-token-0123456789abcdef"


def _documented_caddyfile() -> str:
    page = (ROOT / "docs" / "remote.md").read_text(encoding="utf-8")
    match = re.search(r"```caddyfile\n(.*?)```", page, re.DOTALL)
    assert match, "docs/remote.md has no caddyfile block"
    return match.group(1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def caddy() -> str:
    path = shutil.which("caddy")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("caddy is not installed (apt-get install caddy): .ci/run installs it")
        pytest.skip("caddy is not installed (apt-get install caddy)")
    return path


async def test_the_documented_caddy_config_serves_both_profiles_over_tls_and_http2(
    caddy: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "Caddyfile").write_text(_documented_caddyfile())
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{TOKEN}\n")
    async with replica(str(tmp_path / "s.sqlite3"), args=["--token-file", str(tokens)]) as upstream:
        port = _free_port()
        env = {
            **os.environ,
            "ACP_SITE": f"https://127.0.0.1:{port}",
            "ACP_UPSTREAMS": upstream.url.removeprefix("ws://").removesuffix("/acp"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
        }
        proxy = await asyncio.create_subprocess_exec(
            caddy, "run", "--config", str(tmp_path / "Caddyfile"), "--adapter", "caddyfile",
            env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        try:
            root_cert = tmp_path / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
            context = ssl.create_default_context()
            for _ in range(300):
                if root_cert.exists():
                    try:
                        context.load_verify_locations(root_cert)
                        async with httpx.AsyncClient(http2=True, verify=context) as http:
                            health = await http.get(f"https://127.0.0.1:{port}/healthz")
                        break
                    except (httpx.HTTPError, ssl.SSLError):
                        pass
                await asyncio.sleep(0.1)
            else:
                pytest.fail("caddy did not come up")
            assert health.status_code == 200 and health.http_version == "HTTP/2"
            assert "acp_replica=" in health.headers.get("set-cookie", "")  # sticky routing cookie

            monkeypatch.setenv("SSL_CERT_FILE", str(root_cert))  # the clients trust Caddy's internal CA
            for url in (f"wss://127.0.0.1:{port}/acp", f"https://127.0.0.1:{port}/acp"):
                async with AcpTestClient.connect_url(url, token=TOKEN) as client:
                    await client.initialize()
                    sid = await client.new_session()
                    result = await client.prompt("say through the proxy", session_id=sid)
                    assert result.stop_reason == "end_turn" and result.text == "through the proxy"
        finally:
            proxy.terminate()
            await proxy.wait()
