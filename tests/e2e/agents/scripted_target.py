"""An `acpkit run` target for the delegate tests: the core server over `ScriptedRunner`.

It streams one word at a time with a short pause, so a test can cancel mid-answer.
"""

from __future__ import annotations

from acpkit_core.config import AgentOptions
from acpkit_core.server import AcpAgent
from acpkit_core.testing import ScriptedRunner

agent = AcpAgent(ScriptedRunner(chunk_delay=0.01), AgentOptions(name="scripted-remote", store="memory"))
