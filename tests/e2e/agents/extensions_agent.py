"""An ACP agent process serving two extension methods and a notification, for the e2e tests."""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.extensions import Extensions
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


if __name__ == "__main__":
    run_stdio(AcpAgent(ScriptedRunner(), AgentOptions(name="ext-agent", store="memory", extensions=extensions)))
