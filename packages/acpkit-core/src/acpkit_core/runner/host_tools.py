"""Who serves the agent's file and terminal tools: the client, the server's own workspace, or no one.

ACP lets a client offer the agent its files (`fs/read_text_file`, `fs/write_text_file`) and
terminals (`terminal/*`). An agent served remotely may instead have to act on the machine it runs
on, or not touch files at all. One option says which, with the same meaning for an in-process agent
(`AgentOptions.host_tools`) and for any ACP command behind `acpkit serve -- CMD`
(`AgentCommand.host_tools`):

| `host_tools` | the agent is told (`clientCapabilities`) | its fs/terminal requests go to |
|---|---|---|
| `"client"` (default) | what the client advertised | the client, as sent |
| `"server"` | files (read, write, remove) and terminals | the server's `Workspace`, under the path policy |
| `"off"` | no files, no terminals | nowhere: refused |

In `"server"` mode the workspace is the developer's `allowed_paths` (`acpkit serve --host-tools server`
uses `--cwd`, or the current directory, when none is given). Every path is checked in core against
those directories, `..` and symlinks resolved, whatever the agent or its framework asks: the
client's `cwd` and `additionalDirectories` name the client's machine and grant nothing here. A
session whose `cwd` is not inside the workspace works in the workspace's first directory.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

import pydantic
from acp import RequestError
from acp.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalRequest,
    KillTerminalResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

from ..client.local_host import LocalClientHost
from ..errors import PathPolicyError, UserError
from .host import REMOVE_FILE_METHOD, ClientHost
from .types import ClientInfo

__all__ = [
    "HOST_METHODS",
    "HostTools",
    "Workspace",
    "check_host_tools",
    "client_capabilities_for",
    "client_info_for",
]

HostTools = Literal["client", "server", "off"]
"""Who serves the agent's file and terminal tools (see the table above)."""

HOST_METHODS: Final = frozenset(
    {
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
        REMOVE_FILE_METHOD,
    }
)
"""The agent-to-client requests `host_tools` governs."""

HIDDEN_ENV: Final = ("ACPKIT_SERVE_TOKENS",)
"""Variables of the server's environment a workspace terminal sees empty: `acpkit serve`'s bearer tokens
(`acpkit_core.remote.TOKENS_ENV`), which no agent command may read."""

_FS_META: Final = "acpkit.fs"
"""The `clientCapabilities._meta` key advertising `_acpkit/fs/remove_file`."""


def check_host_tools(mode: str, allowed_paths: Sequence[str]) -> tuple[str, ...]:
    """Refuse an unknown mode, or `"server"` without a workspace; the workspace's directories (resolved).

    Raises [`UserError`][acpkit_core.errors.UserError] naming the problem. For `"client"` and
    `"off"`, `allowed_paths` is checked as before (by the path policy) and `()` is returned.
    """
    if mode not in get_args(HostTools):
        raise UserError(f"host_tools={mode!r}: must be one of {', '.join(map(repr, get_args(HostTools)))}")
    if mode != "server":
        return ()
    if not allowed_paths:
        raise UserError(
            "host_tools='server' needs a workspace: give allowed_paths (the server directories the agent's file "
            "and terminal tools may use; `acpkit serve --host-tools server` uses --cwd)"
        )
    roots: list[str] = []
    for path in allowed_paths:
        if not os.path.isabs(path):
            raise UserError(f"host_tools='server': allowed_paths must be absolute, got {path!r}")
        if not os.path.isdir(path):
            raise UserError(f"host_tools='server': the workspace directory {path!r} does not exist")
        roots.append(os.path.realpath(path))
    return tuple(dict.fromkeys(roots))


def client_info_for(client: ClientInfo, mode: HostTools) -> ClientInfo:
    """What the agent is told the client serves, under `mode`."""
    if mode == "client":
        return client
    on = mode == "server"
    return dataclasses.replace(client, read_text_file=on, write_text_file=on, terminal=on, remove_file=on)


def client_capabilities_for(capabilities: Mapping[str, Any] | None, mode: HostTools) -> dict[str, Any]:
    """`clientCapabilities` (wire JSON) as the agent is told it under `mode`: the rest is kept as sent."""
    caps = dict(capabilities or {})
    if mode == "client":
        return caps
    on = mode == "server"
    caps["fs"] = {**_mapping(caps.get("fs")), "readTextFile": on, "writeTextFile": on}
    caps["terminal"] = on
    meta = _mapping(caps.get("_meta"))
    meta.pop(_FS_META, None)
    if on:
        meta[_FS_META] = {"removeFile": True}
    if meta:
        caps["_meta"] = meta
    else:
        caps.pop("_meta", None)
    return caps


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]


class Workspace:
    """The client half of ACP's file and terminal methods, served from directories of this machine.

    Every path is checked against `roots` by the core path policy
    ([`ClientHost.check_path`][acpkit_core.runner.host.ClientHost.check_path]: absolute, and inside a root
    both as written and with symlinks followed) before anything is read, written or run; a refused
    path is answered *invalid params* naming the workspace. Terminals run as real subprocesses in
    their own process group and are all killed by [`close`][acpkit_core.runner.host_tools.Workspace.close].
    The methods have the signatures of the SDK's client-facing requests
    ([`ClientConnection`][acpkit_core.runner.host.ClientConnection]), so a `ClientHost` can use a workspace
    as its connection; [`answer`][acpkit_core.runner.host_tools.Workspace.answer] serves one raw request.
    """

    def __init__(self, roots: Sequence[str], *, output_byte_limit: int | None = 1 << 20) -> None:
        if not roots:
            raise UserError("Workspace: give at least one directory")
        self.roots = tuple(roots)
        """The directories paths must lie in (the first is where commands start by default)."""
        self._policy = ClientHost(None, "", ClientInfo(), cwd=self.roots[0], roots=self.roots[1:])
        self._local = LocalClientHost(None, cwd=self.roots[0], output_byte_limit=output_byte_limit)

    # --- the path policy -------------------------------------------------------------------------

    def check(self, path: str) -> str:
        """`path`, normalised, or *invalid params* when it is relative or outside the workspace."""
        try:
            return self._policy.check_path(path)
        except PathPolicyError:
            raise RequestError.invalid_params(
                {
                    "path": path,
                    "reason": f"outside the server's workspace ({', '.join(self.roots)}; host_tools='server')",
                }
            ) from None

    def contains(self, path: str) -> bool:
        """True when `path` lies inside the workspace."""
        return self._policy.allows(path)

    def session_cwd(self, cwd: str) -> str:
        """The cwd a session works in: the client's when it lies in the workspace, else the first root."""
        return cwd if os.path.isabs(cwd) and self.contains(cwd) else self.roots[0]

    def session_directories(self, directories: Sequence[str] | None) -> list[str] | None:
        """The client's additional directories that lie in the workspace (`None` stays `None`)."""
        if directories is None:
            return None
        return [d for d in directories if os.path.isabs(d) and self.contains(d)]

    # --- the client-facing requests -----------------------------------------------------------------

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        """`fs/read_text_file` from the server's disk."""
        return await self._local.read_text_file(self.check(path), line=line, limit=limit)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        """`fs/write_text_file` to the server's disk."""
        return await self._local.write_text_file(self.check(path), content)

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        """`terminal/create`: a subprocess on the server, in `cwd` (checked) or the first root."""
        directory = self.check(cwd) if cwd else self.roots[0]
        hidden = [EnvVariable(name=name, value="") for name in HIDDEN_ENV if name in os.environ]
        return await self._local.create_terminal(
            command, args, cwd=directory, env=[*(env or []), *hidden], output_byte_limit=output_byte_limit
        )

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> TerminalOutputResponse:
        """`terminal/output`."""
        return await self._local.terminal_output(terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`."""
        return await self._local.wait_for_terminal_exit(terminal_id)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> KillTerminalResponse:
        """`terminal/kill`."""
        return await self._local.kill_terminal(terminal_id)

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> ReleaseTerminalResponse:
        """`terminal/release`."""
        return await self._local.release_terminal(terminal_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`_acpkit/fs/remove_file` (the only extension a workspace serves)."""
        if method != REMOVE_FILE_METHOD[1:]:
            raise RequestError.method_not_found(f"_{method}")
        path = params.get("path")
        if not isinstance(path, str):
            raise RequestError.invalid_params({"path": path, "reason": "a path (string) is required"})
        await self._local.remove_file(self.check(path))
        return {}

    async def answer(self, method: str, params: Any) -> dict[str, Any]:
        """Serve one raw request of `HOST_METHODS` (wire JSON in and out); `RequestError` on bad input."""
        if method == REMOVE_FILE_METHOD:
            return await self.ext_method(method[1:], _mapping(params))
        model = _REQUESTS.get(method)
        if model is None:
            raise RequestError.method_not_found(method)
        try:
            request: Any = model.model_validate(params)
        except pydantic.ValidationError as exc:
            raise RequestError.invalid_params({"method": method, "errors": exc.errors(include_url=False)}) from None
        response: pydantic.BaseModel
        if isinstance(request, ReadTextFileRequest):
            response = await self.read_text_file(request.session_id, request.path, request.line, request.limit)
        elif isinstance(request, WriteTextFileRequest):
            response = await self.write_text_file(request.session_id, request.path, request.content)
        elif isinstance(request, CreateTerminalRequest):
            response = await self.create_terminal(
                request.session_id,
                request.command,
                request.args,
                request.env,
                request.cwd,
                request.output_byte_limit,
            )
        elif isinstance(request, TerminalOutputRequest):
            response = await self.terminal_output(request.session_id, request.terminal_id)
        elif isinstance(request, WaitForTerminalExitRequest):
            response = await self.wait_for_terminal_exit(request.session_id, request.terminal_id)
        elif isinstance(request, KillTerminalRequest):
            response = await self.kill_terminal(request.session_id, request.terminal_id)
        else:
            assert isinstance(request, ReleaseTerminalRequest)
            response = await self.release_terminal(request.session_id, request.terminal_id)
        return response.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def close(self) -> None:
        """Kill and release every terminal still open."""
        await self._local.close()


_REQUESTS: Final[dict[str, type[pydantic.BaseModel]]] = {
    "fs/read_text_file": ReadTextFileRequest,
    "fs/write_text_file": WriteTextFileRequest,
    "terminal/create": CreateTerminalRequest,
    "terminal/output": TerminalOutputRequest,
    "terminal/wait_for_exit": WaitForTerminalExitRequest,
    "terminal/kill": KillTerminalRequest,
    "terminal/release": ReleaseTerminalRequest,
}
