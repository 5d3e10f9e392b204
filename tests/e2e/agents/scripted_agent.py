"""An ACP agent process for the end-to-end tests: the core server over `ScriptedRunner`.

Usage: `python scripted_agent.py [--store PATH|memory] [--modes] [--models] [--delay SECONDS] [--name NAME] [--auth]
[--terminal-auth]`.

`--auth` requires the env-var method `acme-key` (`ACME_API_KEY`, only through `authenticate`);
`--terminal-auth` the terminal login `acme-login` of `tests/acme_auth.py` (a key in `$ACME_KEY_FILE`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acpkit_core.auth import Authentication, EnvVarMethod
from acpkit_core.config import AgentOptions, ModelOption
from acpkit_core.permissions import STANDARD_MODES
from acpkit_core.server import AcpAgent, run_stdio
from acpkit_core.testing import ScriptedRunner

sys.path.insert(0, str(Path(__file__).parents[2]))
from acme_auth import acme_auth


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default=None)
    parser.add_argument("--modes", action="store_true")
    parser.add_argument("--models", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--name", default="scripted-agent")
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--terminal-auth", action="store_true")
    ns = parser.parse_args()
    auth = None
    if ns.auth:
        link = "https://acme.example/keys"
        key = EnvVarMethod(id="acme-key", name="ACME API key", vars=["ACME_API_KEY"], link=link, implicit=False)
        auth = Authentication(methods=[key])
    if ns.terminal_auth:
        auth = Authentication(methods=[m for m in acme_auth().methods if m.id == "acme-login"])
    options = AgentOptions(
        name=ns.name,
        store=ns.store,
        modes=STANDARD_MODES if ns.modes else None,
        models=[ModelOption(id="fast"), ModelOption(id="smart")] if ns.models else (),
        auth=auth,
    )
    run_stdio(AcpAgent(ScriptedRunner(chunk_delay=ns.delay), options))


if __name__ == "__main__":
    main()
