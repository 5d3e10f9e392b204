"""Authentication over an in-process connection: `authMethods`, `authenticate`, and the session gate."""

from __future__ import annotations

import pytest
from acp import RequestError
from acpkit_core.auth import (
    TERMINAL_LOGIN_ENV,
    AgentMethod,
    Authentication,
    AuthRequest,
    EnvVar,
    EnvVarMethod,
    TerminalMethod,
    terminal_login,
)
from acpkit_core.config import AgentOptions
from acpkit_core.errors import AuthRequiredError, UserError
from acpkit_core.server import AcpAgent
from acpkit_core.testing import AcpTestClient, ScriptedRunner


def _agent(auth: Authentication) -> AcpAgent:
    return AcpAgent(ScriptedRunner(), AgentOptions(store="memory", auth=auth))


async def _refuse_short(request: AuthRequest) -> None:
    if len(request.values["ACME_API_KEY"]) < 8:
        raise AuthRequiredError("ACME refused the key: it is too short")


def _key_method(environ: dict[str, str], **kw: object) -> Authentication:
    method = EnvVarMethod(
        id="acme-key",
        name="ACME API key",
        vars=[EnvVar(name="ACME_API_KEY", label="API key"), EnvVar(name="ACME_ORG", secret=False, optional=True)],
        link="https://acme.example/keys",
        check=_refuse_short,
        **kw,  # type: ignore[arg-type]
    )
    return Authentication(methods=[method], environ=environ)


async def test_initialize_advertises_the_methods_and_sessions_wait_for_authenticate() -> None:
    environ: dict[str, str] = {}
    logins: list[AuthRequest] = []

    async def login(request: AuthRequest) -> None:
        logins.append(request)

    auth = Authentication(
        methods=[
            *_key_method(environ, implicit=False).methods,
            AgentMethod(id="sso", name="Sign in with ACME", description="Opens a browser", login=login),
        ],
        environ=environ,
    )
    async with AcpTestClient.connect(_agent(auth)) as c:
        init = await c.initialize()
        wire = init.model_dump(by_alias=True, exclude_none=True)["authMethods"]
        assert wire == [
            {  # ACP 1.21 has no env-var method type: an `agent` method, the variables in `_meta`
                "id": "acme-key",
                "name": "ACME API key",
                "description": "Set ACME_API_KEY where the agent runs",
                "_meta": {
                    "acpkit.envVars": {
                        "vars": [
                            {"name": "ACME_API_KEY", "label": "API key", "secret": True, "optional": False},
                            {"name": "ACME_ORG", "secret": False, "optional": True},
                        ],
                        "link": "https://acme.example/keys",
                    }
                },
            },
            {"id": "sso", "name": "Sign in with ACME", "description": "Opens a browser"},
        ]
        for attempt in (c.new_session(), c.list_sessions(), c.load_session("nope"), c.resume_session("nope")):
            with pytest.raises(RequestError) as info:
                await attempt
            assert info.value.code == -32000
            assert info.value.data == {"authMethods": ["acme-key", "sso"]}
        assert str(info.value).startswith(
            "Authentication required before session/resume: authenticate with 'acme-key' (ACME API key: set "
            "ACME_API_KEY; get one at https://acme.example/keys) or 'sso' (Sign in with ACME)"
        )
        # the variable is missing: the env-var method says so
        with pytest.raises(RequestError) as info:
            await c.c.authenticate(method_id="acme-key")
        assert info.value.code == -32000
        assert "ACME_API_KEY is not set in the agent's environment" in str(info.value)
        # an unknown method is invalid params, listing the methods
        with pytest.raises(RequestError) as info:
            await c.c.authenticate(method_id="password")
        assert info.value.code == -32602
        assert "the methods are ['acme-key', 'sso']" in str(info.value.data)
        # the agent method runs its login with the request's _meta and the client's name
        await c.c.authenticate(method_id="sso", token="t-1")
        assert [(r.method_id, dict(r.meta), r.client) for r in logins] == [
            ("sso", {"token": "t-1"}, "acpkit-test-client")
        ]
        sid = await c.new_session()
        r = await c.prompt("say ok", session_id=sid)
    assert r.text == "ok"


async def test_an_env_var_method_checks_the_value_and_counts_when_already_set() -> None:
    environ = {"ACME_API_KEY": "short"}
    agent = _agent(_key_method(environ))
    async with AcpTestClient.connect(agent) as c:
        await c.initialize()
        with pytest.raises(RequestError) as info:
            await c.new_session()
        assert "(acme-key was refused: ACME refused the key: it is too short)" in str(info.value)
        with pytest.raises(RequestError) as info:
            await c.c.authenticate(method_id="acme-key")
        assert str(info.value) == "ACME refused the key: it is too short"
        environ["ACME_API_KEY"] = "long-enough-key"
        sid = await c.new_session()  # set in the environment: no authenticate needed
        assert sid
    assert agent.auth.method_id == "acme-key"


async def test_each_connection_authenticates_on_its_own_and_a_transport_may_grant() -> None:
    environ: dict[str, str] = {}
    options = AgentOptions(store="memory", auth=_key_method(environ))
    first = AcpAgent(ScriptedRunner(), options)
    first.auth.grant("bearer-token")
    async with AcpTestClient.connect(first) as c:
        await c.initialize()
        assert await c.new_session()
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), options)) as c:
        await c.initialize()
        with pytest.raises(RequestError) as info:
            await c.new_session()
    assert info.value.code == -32000


async def test_optional_authentication_advertises_without_gating() -> None:
    auth = Authentication(methods=[EnvVarMethod(id="k", name="Key", vars=["K"])], required=False, environ={})
    async with AcpTestClient.connect(_agent(auth)) as c:
        init = await c.initialize()
        assert [m.id for m in init.auth_methods or []] == ["k"]
        assert await c.new_session()


def test_misconfigured_authentication_is_refused() -> None:
    with pytest.raises(UserError, match="at least one method"):
        Authentication(methods=[])
    with pytest.raises(UserError, match="unique"):
        Authentication(methods=[EnvVarMethod(id="a", name="A", vars=["X"])] * 2)
    with pytest.raises(UserError, match="at least one environment variable"):
        Authentication(methods=[EnvVarMethod(id="a", name="A", vars=[])])


async def test_without_the_option_nothing_is_advertised_and_authenticate_is_invalid() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        init = await c.initialize()
        assert init.auth_methods == []
        with pytest.raises(RequestError) as info:
            await c.c.authenticate(method_id="x")
    assert info.value.code == -32602


# --- logout and terminal logins (ACP 1.21) ------------------------------------------------------


def _terminal(store: dict[str, str]) -> Authentication:
    async def login(request: AuthRequest) -> None:
        store["token"] = "t-1"

    async def check(request: AuthRequest) -> None:
        if "token" not in store:
            raise AuthRequiredError("not logged in")

    async def forget(request: AuthRequest) -> None:
        store.clear()

    method = TerminalMethod(id="tui", name="Log in", login=login, check=check, args=["--login"], env={"MODE": "x"})
    return Authentication(methods=[method], logout=forget)


async def test_terminal_methods_are_offered_only_to_clients_that_can_run_them() -> None:
    store: dict[str, str] = {}
    async with AcpTestClient.connect(_agent(_terminal(store)), auth_terminal=True) as c:
        await c.initialize()
        with pytest.raises(RequestError) as refused:
            await c.new_session()
        with pytest.raises(RequestError) as passed:
            await c.authenticate("tui")
    async with AcpTestClient.connect(_agent(_terminal(store))) as plain:
        await plain.initialize()
    answer = next(m for d, m in c.wire if d == "received" and m.get("id") == 0)["result"]
    assert answer["authMethods"] == [
        {
            "type": "terminal",
            "id": "tui",
            "name": "Log in",
            "args": ["--login"],
            "env": {"MODE": "x", "ACPKIT_TERMINAL_LOGIN": "tui"},
        }
    ]
    assert answer["agentCapabilities"]["auth"] == {"logout": {}}
    plain_answer = next(m for d, m in plain.wire if d == "received" and m.get("id") == 0)["result"]
    assert plain_answer["authMethods"] == []  # a plain client cannot run it: not offered
    assert refused.value.code == -32000
    assert "'tui' (Log in: log in from a terminal, then reconnect)" in str(refused.value)
    assert "(tui was refused: not logged in)" in str(refused.value)
    assert passed.value.code == -32602
    assert "is a terminal method: it is not passed to `authenticate`" in str(passed.value.data)


async def test_the_terminal_process_runs_the_login_and_the_next_connection_sees_it() -> None:
    store: dict[str, str] = {}
    auth = _terminal(store)
    assert await terminal_login(auth, environ={}) is None  # not started for a login: serve ACP
    assert await terminal_login(auth, environ={TERMINAL_LOGIN_ENV: "nope"}) == 2
    assert await terminal_login(auth, environ={TERMINAL_LOGIN_ENV: "tui"}) == 0
    assert store == {"token": "t-1"}
    async with AcpTestClient.connect(_agent(auth), auth_terminal=True) as c:
        await c.initialize()
        sid = await c.new_session()  # the check passes: no `authenticate`
        await c.prompt("say in", session_id=sid)
        await c.logout()
        with pytest.raises(RequestError) as after:
            await c.new_session()
        with pytest.raises(RequestError) as prompt_after:
            await c.prompt("say again", session_id=sid)
    assert store == {}  # `Authentication.logout` forgot the stored token
    assert after.value.code == prompt_after.value.code == -32000
    assert "(logged out on this connection)" in str(after.value)


async def test_logout_ends_the_state_even_of_a_method_satisfied_by_itself() -> None:
    environ = {"ACME_API_KEY": "long-enough-key"}
    async with AcpTestClient.connect(_agent(_key_method(environ))) as c:
        await c.initialize()
        await c.new_session()  # the key is set: implicit success
        await c.logout()
        with pytest.raises(RequestError) as refused:
            await c.new_session()
        await c.authenticate("acme-key")
        await c.new_session()
    assert refused.value.code == -32000


async def test_logout_is_not_served_or_advertised_without_authentication() -> None:
    async with AcpTestClient.connect(AcpAgent(ScriptedRunner(), AgentOptions(store="memory"))) as c:
        await c.initialize()
        with pytest.raises(RequestError) as missing:
            await c.logout()
    answer = next(m for d, m in c.wire if d == "received" and m.get("id") == 0)["result"]
    assert "auth" not in answer["agentCapabilities"]
    assert missing.value.code == -32601
