"""The ACP SDK's schema imported lean: models built on first use, no field docstrings read, pydantic left as it was.

Each check runs in a fresh interpreter (`python -c`), since the point is what the first import does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pydantic
from acpkit_core._sdk_schema import SESSION_MODELS, lean_build


def _run(code: str, tmp_path: Path | None = None) -> str:
    """Run `code` in a fresh interpreter (from a file when `tmp_path` is given: docstrings need a source)."""
    argv = [sys.executable, "-c", textwrap.dedent(code)]
    if tmp_path is not None:
        script = tmp_path / "script.py"
        script.write_text(textwrap.dedent(code))
        argv = [sys.executable, str(script)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_after_acpkit_core_the_sdks_models_are_built_on_first_use_and_work() -> None:
    out = _run(
        """
        import acpkit_core
        import acp.schema as s
        print(s.InitializeRequest.__pydantic_complete__, s.ToolCallStart.model_fields["title"].description)
        caps = {"fs": {"readTextFile": True}}
        request = s.InitializeRequest.model_validate({"protocolVersion": 1, "clientCapabilities": caps})
        print(s.InitializeRequest.__pydantic_complete__, request.client_capabilities.fs.read_text_file)
        call = s.ToolCallStart(session_update="tool_call", tool_call_id="c1", title="Read", kind="read")
        print(call.model_dump(by_alias=True, exclude_none=True))
        """
    )
    assert out.splitlines() == [
        "False None",
        "True True",
        "{'toolCallId': 'c1', 'title': 'Read', 'kind': 'read', 'sessionUpdate': 'tool_call'}",
    ]


def test_what_exists_before_the_sdk_is_imported_is_kept_out_of_the_collectors_passes() -> None:
    out = _run(
        """
        import gc, json
        import acpkit_core
        before = gc.get_freeze_count()
        import acp
        print(before == 0, gc.get_freeze_count() > 1000)
        """
    )
    assert out == "True True"


def test_pydantic_is_left_as_it_was_for_every_other_model(tmp_path: Path) -> None:
    out = _run(
        '''
        import acpkit_core, acp
        from pydantic import BaseModel, ConfigDict

        class Mine(BaseModel):
            model_config = ConfigDict(use_attribute_docstrings=True)
            x: int
            """The x."""

        print(Mine.__pydantic_complete__, Mine.model_fields["x"].description)
        ''',
        tmp_path,
    )
    assert out == "True The x."


def test_when_acp_came_first_nothing_changes() -> None:
    out = _run(
        """
        import acp.schema as s
        import acpkit_core
        print(s.InitializeRequest.__pydantic_complete__, s.ToolCallStart.model_fields["title"].description is not None)
        """
    )
    assert out == "True True"


def test_the_installed_pydantic_offers_what_the_lean_import_needs() -> None:
    # A pydantic upgrade that renames either name falls back to the full import (correct, slower):
    # this test says so instead of letting the start-up figure drop.
    from pydantic._internal import _config

    with lean_build() as lean:
        assert lean, f"pydantic {pydantic.VERSION}: the SDK's schema is imported in full"
        assert _config.config_defaults.get("defer_build") is True
    assert _config.config_defaults.get("defer_build") is False


def test_without_what_it_needs_the_lean_import_changes_nothing(monkeypatch: Any) -> None:
    from pydantic._internal import _config, _fields

    monkeypatch.delattr(_fields, "_update_fields_from_docstrings")
    with lean_build() as lean:
        assert not lean
        assert _config.config_defaults.get("defer_build") is False


def test_the_warm_up_builds_the_models_a_session_uses() -> None:
    names = ", ".join(repr(n) for n in SESSION_MODELS)
    out = _run(
        f"""
        import acpkit_core
        import acp.schema as s
        from acpkit_core._sdk_schema import warm_models
        names = [{names}]
        before = [n for n in names if getattr(s, n).__pydantic_complete__]
        warm_models()
        print(before, all(getattr(s, n).__pydantic_complete__ for n in names))
        """
    )
    assert out == "[] True"


def test_acpkit_serve_builds_the_models_before_its_first_client() -> None:
    """A replica taking over a session answers its first `session/load` without building models first."""
    out = _run(
        """
        import asyncio
        import acpkit_core
        import acp.schema as s
        from acpkit_core._sdk_schema import INITIALIZE_MODELS, SESSION_MODELS
        from acpkit_core.config import AgentOptions
        from acpkit_core.remote import RemoteServer, ServeOptions
        from acpkit_core.server import AcpAgent
        from acpkit_core.testing import ScriptedRunner

        async def main():
            names = INITIALIZE_MODELS + SESSION_MODELS
            before = all(getattr(s, n).__pydantic_complete__ for n in names)
            server = RemoteServer(AcpAgent(ScriptedRunner(), AgentOptions(store="memory")), ServeOptions(port=0))
            await server.start()
            after = all(getattr(s, n).__pydantic_complete__ for n in names)
            await server.stop()
            print(before, after)

        asyncio.run(main())
        """
    )
    assert out == "False True"
