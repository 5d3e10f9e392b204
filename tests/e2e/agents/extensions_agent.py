"""An ACP agent process serving two extension methods and a notification, for the e2e tests."""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.extensions import ExtensionContext, Extensions
from acpkit_core.server import AcpAgent, run_stdio
from acpkit_core.testing import ScriptedRunner
from pydantic import BaseModel

extensions = Extensions()
pings: list[str] = []


class Greeting(BaseModel):
    name: str
    times: int = 1


class Greeted(BaseModel):
    text: str


@extensions.method("acme/greet")
async def greet(params: Greeting) -> Greeted:
    return Greeted(text=" ".join([f"hello {params.name}"] * params.times))


@extensions.method("acme/pings")
async def list_pings(params: dict[str, object]) -> dict[str, object]:
    return {"pings": pings}


@extensions.notification("acme/ping")
async def ping(params: dict[str, object]) -> None:
    pings.append(str(params.get("from", "?")))


@extensions.method("acme/whoami")
async def whoami(params: dict[str, object], ctx: ExtensionContext) -> dict[str, object]:
    session = ctx.session
    return {
        "client": ctx.client_info,
        "terminal": ctx.client.terminal,
        "capabilities": dict(ctx.client_capabilities),
        "protocolVersion": ctx.protocol_version,
        "principal": ctx.principal,
        "session": None if session is None else {"id": session.id, "cwd": session.cwd, "title": session.title},
    }


@extensions.notification("acme/seen")
async def seen(params: dict[str, object], ctx: ExtensionContext) -> None:
    pings.append(f"seen in {ctx.session.id if ctx.session else None}")


if __name__ == "__main__":
    run_stdio(AcpAgent(ScriptedRunner(), AgentOptions(name="ext-agent", store="memory", extensions=extensions)))
