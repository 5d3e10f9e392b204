"""How long an editor waits for `acpkit run` to answer `initialize`, next to what the framework costs anyway.

For each example agent this measures, in fresh processes (median of `--runs`):

- `acpkit run EXAMPLE`: process start -> the `initialize` answer on stdout;
- the framework's own import: process start -> exit of `python -c "import pydantic_ai"` (or `langgraph.graph`;
  `langgraph` alone is an empty namespace package),
  and with the SDK too (`import acp`), which any ACP agent in Python needs;
- a bare SDK agent (`tests/e2e/agents/sdk_cli_agent.py`) run directly and through `acpkit run`.

It also lists our own modules' import time from `python -X importtime` in the `acpkit run` process, and
checks that no terminal library (`rich`, `prompt_toolkit`) and no other framework was imported.

Usage: `uv run python bench/cli_bench.py [--runs 5]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SDK_AGENT = ROOT / "tests" / "e2e" / "agents" / "sdk_cli_agent.py"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}) + "\n"
OURS = ("acpkit_core", "pydantic_acp", "langchain_acp")
NEVER = ("rich", "prompt_toolkit")

FALLBACK_PYDANTIC = 'from pydantic_ai import Agent\n\nagent = Agent("test", name="bench")\n'
FALLBACK_LANGGRAPH = """from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class State(TypedDict):
    messages: list


graph = StateGraph(State)
graph.add_node("noop", lambda state: state)
graph.add_edge(START, "noop")
graph.add_edge("noop", END)
graph = graph.compile()
"""


def time_to_initialize(argv: list[str], cwd: Path, state: Path) -> tuple[float, str]:
    """Seconds from spawning `argv` to the `initialize` answer, and the process's stderr."""
    env = {"ACPKIT_STATE_DIR": str(state), "PATH": "/usr/bin:/bin"}
    with tempfile.TemporaryFile("w+") as errfile:  # a file, not a pipe: -X importtime writes a lot
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errfile, cwd=cwd, env=env, text=True
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - start
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        errfile.seek(0)
        err = errfile.read()
    if '"id": 0' not in line and '"id":0' not in line:
        raise RuntimeError(f"{argv} did not answer initialize: {line!r}\n{err}")
    return elapsed, err


def time_command(argv: list[str]) -> float:
    """Seconds from spawning `argv` to its exit."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def median(fn: object, runs: int) -> float:
    values = [fn() for _ in range(runs)]  # type: ignore[operator]
    return statistics.median(values)


def importtime(stderr: str) -> dict[str, int]:
    """Self time (µs) per module from `-X importtime` output."""
    out: dict[str, int] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        out[name.strip()] = int(self_us)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        state = tmpdir / "state"
        examples: list[tuple[str, Path, str]] = []
        for name, framework, fallback in (
            ("pydantic_agent.py", "pydantic_ai", FALLBACK_PYDANTIC),
            ("langgraph_agent.py", "langgraph.graph", FALLBACK_LANGGRAPH),
        ):
            path = ROOT / "examples" / name
            if not path.exists():
                path = tmpdir / f"fallback_{name}"
                path.write_text(fallback)
            examples.append((name, path, framework))

        print(f"acpkit run: process start -> initialize answer (median of {runs}, seconds)\n")
        header = f"{'agent':<28}{'acpkit run':>12}{'framework':>12}{'+ acp':>10}{'added':>10}{'added %':>9}"
        print(header)
        print("-" * len(header))
        python_alone = median(lambda: time_command([py, "-c", "pass"]), runs)
        sdk_import = median(lambda: time_command([py, "-c", "import acp"]), runs)
        bare_runs: list[float] = []
        wrapped_runs: list[float] = []
        for _ in range(runs):  # interleaved, so load on the machine hits both alike
            bare_runs.append(time_to_initialize([py, str(SDK_AGENT)], tmpdir, state)[0])
            wrapped_runs.append(
                time_to_initialize([py, "-m", "acpkit_core.cli", "run", str(SDK_AGENT)], tmpdir, state)[0]
            )
        bare, wrapped = statistics.median(bare_runs), statistics.median(wrapped_runs)
        print(f"{'bare SDK agent (direct)':<28}{bare:>12.3f}{'-':>12}{sdk_import:>10.3f}{'-':>10}{'-':>9}")
        added = wrapped - bare
        print(f"{'bare SDK agent (acpkit run)':<28}{wrapped:>12.3f}{'-':>12}{sdk_import:>10.3f}{added:>10.3f}{'-':>9}")
        details: list[tuple[str, dict[str, int], dict[str, int], str]] = []
        for name, path, framework in examples:
            run_t: list[float] = []
            fw_t: list[float] = []
            fw_acp_t: list[float] = []
            for _ in range(runs):
                run_t.append(time_to_initialize([py, "-m", "acpkit_core.cli", "run", str(path)], tmpdir, state)[0])
                fw_t.append(time_command([py, "-c", f"import {framework}"]))
                fw_acp_t.append(time_command([py, "-c", f"import {framework}, acp"]))
            run, fw, fw_acp = (statistics.median(v) for v in (run_t, fw_t, fw_acp_t))
            extra = run - fw_acp
            pct = 100 * extra / (fw - python_alone) if fw > python_alone else float("nan")
            print(f"{name:<28}{run:>12.3f}{fw:>12.3f}{fw_acp:>10.3f}{extra:>10.3f}{pct:>8.0f}%")
            _, err = time_to_initialize(
                [py, "-X", "importtime", "-m", "acpkit_core.cli", "run", str(path)], tmpdir, state
            )
            base = subprocess.run(
                [py, "-X", "importtime", "-c", f"import {framework}, acp"], capture_output=True, text=True, check=True
            )
            details.append((name, importtime(err), importtime(base.stderr), framework))
        print(f"\npython start alone: {python_alone:.3f}s; `import acp` process: {sdk_import:.3f}s")
        print("framework = `python -c 'import <framework>'`; + acp = with `import acp`; added = acpkit run - (+ acp);")
        print("added % = added / (framework import - python start). Wall clock on a shared machine: noisy.\n")
        for name, modules, baseline, framework in details:
            ours = sum(us for mod, us in modules.items() if mod.split(".")[0] in OURS)
            fw_us = sum(us for mod, us in baseline.items())
            extra_tops = sorted({m.split(".")[0] for m in modules} - {m.split(".")[0] for m in baseline} - set(OURS))
            extra_us = sum(us for mod, us in modules.items() if mod.split(".")[0] in extra_tops)
            forbidden = sorted({m.split(".")[0] for m in modules if m.split(".")[0] in NEVER} - set(baseline))
            top = sorted(((us, mod) for mod, us in modules.items() if mod.split(".")[0] in OURS), reverse=True)[:4]
            share = 100 * (ours + extra_us) / fw_us if fw_us else float("nan")
            print(f"{name}: import self time, `import {framework}, acp` alone: {fw_us / 1000:.0f} ms")
            print(
                f"  ours (acpkit_core, adapters): {ours / 1000:.1f} ms; other packages only we import: "
                f"{extra_us / 1000:.1f} ms {extra_tops}; together {share:.1f}% of the framework's"
            )
            print(f"  slowest of ours: {', '.join(f'{mod} {us / 1000:.1f} ms' for us, mod in top)}")
            print(f"  terminal libraries imported beyond the framework's own: {forbidden or 'none'}")


if __name__ == "__main__":
    main()
