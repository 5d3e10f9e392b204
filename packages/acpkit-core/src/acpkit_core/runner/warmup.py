"""Warm a framework up at start-up, so the first prompt of a process costs what later ones do.

The first turn of a process pays for what later turns find ready: modules imported on first use,
schemas and serializers built on first use, a framework's first run. An adapter hands that work to
[`warm_up`][acpkit_core.runner.warmup.warm_up] when its runner is built; a daemon thread does it in two
stages, once the client's `initialize` is answered (the server says so with
[`initialized`][acpkit_core.runner.warmup.initialized]; until then the thread waits, so that the
answer does not share the interpreter lock with it), while the client opens its session:

1. `imports` and `prepare`: what the first turn needs and can be done without running anything of
   the user's (modules to import, schemas to build). Done at once.
2. `throwaway`: a run of the framework's own (never the user's agent) through the code paths a turn
   takes, for what only a run warms. Done only once the process has been quiet for
   [`QUIET_SECONDS`][acpkit_core.runner.warmup.QUIET_SECONDS] (no `initialize` answered, no session
   opening or opened, no turn started) and no turn has started yet; a turn that starts while it runs
   cancels it at its next `await`.

All threads share one interpreter lock: work the warm-up does while a turn runs slows the turn down
by as much. Hence the order, and the throwaway run left for a quiet moment: a client that sends
its first prompt right after `session/new` finds the first stage done and pays what is left of a
first run itself, rather than waiting for a whole throwaway run to finish beside it.

The server signals [`session_opened`][acpkit_core.runner.warmup.session_opened] (when a `session/new`,
`load`, `resume` or `fork` arrives, and again once the session is open), wraps each of those requests
in [`opening`][acpkit_core.runner.warmup.opening] (no throwaway run starts until it is answered,
however long it takes) and
[`turn_started`][acpkit_core.runner.warmup.turn_started] (every `session/prompt`) itself, for every
runner, and a turn waits for the first stages to be done
([`first_stage_done`][acpkit_core.runner.warmup.first_stage_done]) rather than build the same things
again beside them. Warming is best effort: whatever fails in it is swallowed (logged at
debug level), and the first prompt is just slower.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence

__all__ = [
    "FIRST_STAGE_WAIT",
    "HOLD_SECONDS",
    "QUIET_SECONDS",
    "WarmUp",
    "first_stage_done",
    "initialized",
    "last_activity",
    "opening",
    "session_opened",
    "turn_started",
    "warm_up",
]

logger = logging.getLogger(__name__)

QUIET_SECONDS = 0.05
"""How long after start-up or the last opened session the throwaway run waits for a first prompt."""

HOLD_SECONDS = 2.0
"""How long the process's warm-ups wait for a client's `initialize` to be answered before they
start anyway (a server that never says so: an adapter under a server of its own)."""

FIRST_STAGE_WAIT = 5.0
"""The longest a turn waits for the warm-ups' first stages (seconds): past it, the turn goes on."""


class WarmUp:
    """One warm-up schedule: a daemon thread per name, the quiet clock and the turn signal they share.

    The process has one, behind [`warm_up`][acpkit_core.runner.warmup.warm_up],
    [`session_opened`][acpkit_core.runner.warmup.session_opened] and
    [`turn_started`][acpkit_core.runner.warmup.turn_started]; a test makes its own.
    """

    def __init__(self, quiet_seconds: float = QUIET_SECONDS, *, hold_seconds: float = 0.0) -> None:
        self.quiet_seconds = quiet_seconds
        self.hold_seconds = hold_seconds
        """How long a warm-up thread waits for
        [`initialized`][acpkit_core.runner.warmup.WarmUp.initialized] before it starts anyway (0: not at all)."""
        self._go = threading.Event()
        if hold_seconds <= 0:
            self._go.set()
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}
        self._turn_started = threading.Event()
        self._last_activity = time.monotonic()
        self._openings = 0
        self._running: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[object]]] = []
        self._first_stages: list[threading.Event] = []

    def start(
        self,
        name: str,
        *,
        imports: Sequence[str] = (),
        prepare: Callable[[], object] | None = None,
        throwaway: Callable[[], Awaitable[object]] | None = None,
    ) -> threading.Thread:
        """Start `name`'s warm-up thread (once: later calls with the same name return the first thread).

        `imports` are imported, then `prepare()` is called, at once; `throwaway()` is run in an
        event loop of the thread's own once the process is quiet, unless a turn has started.
        """
        with self._lock:
            thread = self._threads.get(name)
            if thread is None:
                self.session_opened()
                done = threading.Event()
                self._first_stages.append(done)
                thread = threading.Thread(
                    target=self._warm,
                    args=(name, imports, prepare, throwaway, done),
                    name=f"{name}-warm-up",
                    daemon=True,
                )
                self._threads[name] = thread
                thread.start()
            return thread

    @property
    def last_activity(self) -> float:
        """When (`time.monotonic()`) the schedule was last told of activity: start, `initialize`, a session
        opening or opened. The throwaway run waits for `quiet_seconds` past it."""
        return self._last_activity

    def session_opened(self) -> None:
        """A session is being opened or was: a first prompt may follow at once, so the throwaway run waits
        a little longer."""
        self._last_activity = time.monotonic()

    @contextlib.contextmanager
    def opening(self) -> Generator[None]:
        """Within it, a session is being opened (`session/new`, `load`, `resume`, `fork`): the throwaway run
        does not start until every opening has ended and the process has then been quiet.

        An opening that waits for the interpreter lock (the first stages run beside it) can take longer
        than the quiet period; without this, the throwaway run would start in the middle of it and the
        opening would wait for that run too.
        """
        with self._lock:
            self._openings += 1
        self._last_activity = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._openings -= 1
            self._last_activity = time.monotonic()

    def initialized(self) -> None:
        """A client's `initialize` was answered: the warm-ups start (they wait for it, so that they do
        not slow the answer down: all threads share one interpreter lock), and the quiet clock starts
        again (a client opens a session next, usually at once)."""
        self._last_activity = time.monotonic()
        self._go.set()

    def turn_started(self) -> None:
        """A turn has started: no throwaway run begins from now on, and one that runs is cancelled."""
        self._go.set()
        self._turn_started.set()
        with self._lock:
            running = list(self._running)
        for loop, task in running:
            with contextlib.suppress(RuntimeError):  # the loop has just closed: the run is over anyway
                loop.call_soon_threadsafe(task.cancel)

    async def first_stage_done(self, timeout: float = FIRST_STAGE_WAIT) -> None:
        """Wait (at most `timeout` seconds) until every warm-up started so far has done its first stage.

        A turn that needs what a first stage builds would otherwise build it again beside it (a
        TypeAdapter's schema is not shared while it is being built), paying twice on one lock.
        Warm-ups still held for `initialize` start now.
        """
        self._go.set()
        with self._lock:
            pending = [done for done in self._first_stages if not done.is_set()]
        deadline = time.monotonic() + timeout
        for done in pending:
            await asyncio.to_thread(done.wait, max(0.0, deadline - time.monotonic()))

    def _warm(
        self,
        name: str,
        imports: Sequence[str],
        prepare: Callable[[], object] | None,
        throwaway: Callable[[], Awaitable[object]] | None,
        first_stage: threading.Event,
    ) -> None:
        self._go.wait(self.hold_seconds)
        try:
            for module in imports:
                _best_effort(name, importlib.import_module, module)
            if prepare is not None:
                _best_effort(name, prepare)
        finally:
            first_stage.set()
        if throwaway is None:
            return
        while not self._turn_started.is_set():
            quiet = time.monotonic() - self._last_activity
            if self._openings:  # an opening in progress: look again a quiet period from now
                quiet = 0.0
            elif quiet >= self.quiet_seconds:
                _best_effort(name, asyncio.run, self._throwaway(throwaway))
                return
            self._turn_started.wait(self.quiet_seconds - quiet)

    async def _throwaway(self, throwaway: Callable[[], Awaitable[object]]) -> None:
        async def run() -> object:
            return await throwaway()

        task: asyncio.Task[object] = asyncio.ensure_future(run())
        entry = (asyncio.get_running_loop(), task)
        with self._lock:
            self._running.append(entry)
        try:
            if self._turn_started.is_set():  # a turn started between the check and now
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        finally:
            with self._lock:
                self._running.remove(entry)


def _best_effort(name: str, step: Callable[..., object], *args: object) -> None:
    try:
        step(*args)
    except Exception:  # warming is best effort: the first prompt is just slower
        logger.debug("%s warm-up: %r failed", name, step, exc_info=True)


_process = WarmUp(hold_seconds=HOLD_SECONDS)


def warm_up(
    name: str,
    *,
    imports: Sequence[str] = (),
    prepare: Callable[[], object] | None = None,
    throwaway: Callable[[], Awaitable[object]] | None = None,
) -> threading.Thread:
    """Start the process's warm-up thread for `name` (once per process) and return it.

    An adapter calls it when its runner is built: `imports` and `prepare` (what the first turn
    needs, without running the user's agent) at once, `throwaway` (a run of the adapter's own)
    once the process is quiet and only if no turn has started. See
    [`WarmUp.start`][acpkit_core.runner.warmup.WarmUp.start].
    """
    return _process.start(name, imports=imports, prepare=prepare, throwaway=throwaway)


def session_opened() -> None:
    """A session was opened in this process (the server calls it; a custom server may too)."""
    _process.session_opened()


def opening() -> contextlib.AbstractContextManager[None]:
    """A session is being opened in this process for as long as the block runs (the server wraps
    `session/new`, `load`, `resume` and `fork` in it; see
    [`WarmUp.opening`][acpkit_core.runner.warmup.WarmUp.opening])."""
    return _process.opening()


def initialized() -> None:
    """A client's `initialize` was answered: the process's warm-ups start (the server calls it right
    after writing the answer; before it, or [`HOLD_SECONDS`][acpkit_core.runner.warmup.HOLD_SECONDS]
    without it, they wait)."""
    _process.initialized()


def last_activity() -> float:
    """When (`time.monotonic()`) the process's warm-ups were last told of activity (see
    [`WarmUp.last_activity`][acpkit_core.runner.warmup.WarmUp.last_activity])."""
    return _process.last_activity


def turn_started() -> None:
    """A turn started in this process (the server calls it; a custom server may too)."""
    _process.turn_started()


async def first_stage_done(timeout: float = FIRST_STAGE_WAIT) -> None:
    """Wait until the process's warm-ups have done their first stage (the server calls it before a turn runs)."""
    await _process.first_stage_done(timeout)
