"""``fitbot mcp`` tool-call latency and server memory, through the MCP SDK's own client.

    .venv/bin/python bench/mcp_latency.py [--rounds 20] [--new 40] [--quick]

For each transport (stdio: the client launches ``python -m bot.app.cli mcp``; streamable HTTP: ``fitbot mcp
--http`` on a free loopback port with a bearer token) it prints, as the client sees them (request, answer,
transport and JSON-RPC included):

- start: process launched to session initialized;
- first call: one call of each of the ten tools, each its first question of the process (p50, p99, max), and
  the part of it the SDK client spends compiling that tool's output schema (jsonschema, once per tool);
- warm, repeated: the same ten calls again, ``--rounds`` times (the service's answer cache);
- warm, new: ``--new`` fit calls each asking what no call asked before (other models, contexts, users);
- server RSS now and at peak (VmRSS, VmHWM of the server process).

``--quick`` (CI): two rounds, eight new questions. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fitbot_fakes.mcp_client import (  # noqa: E402  (after the path: run as a script)
    Remote,
    free_port,
    http_remote,
    http_server,
    server_env,
    stdio_remote,
)

TOKEN = "bench-token-0123456789"
PASTE = "llama-server -hf unsloth/Qwen3-14B-GGUF:Q4_K_M -c 32768 -ngl 99"
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fit", {"model": "qwen3-32b", "hardware": "rtx 4090", "context": 32768}),
    ("speed", {"model": "llama 3.1 8b", "hardware": "rtx 3060 12gb", "users": 4}),
    ("cloud_cost", {"model": "gpt-oss-120b"}),
    ("quants", {"model": "glm-4.5-air", "hardware": "rtx 5090", "ram_gb": 64}),
    ("gpus_for_model", {"model": "qwen3-14b"}),
    ("models_for_gpu", {"hardware": "rtx 3090"}),
    ("finetune", {"model": "qwen3-8b", "hardware": "rtx 4090"}),
    ("compare", {"options": ["rtx 4090", "rtx 5090"], "model": "gemma-3-27b-it"}),
    ("diagnose", {"pasted": PASTE, "hardware": "rtx 3060 12gb"}),
    ("ask", {"question": "can I run mixtral 8x7b on a mac mini m4 pro with 48gb?"}),
)
NEW_MODELS = ("qwen3-8b", "qwen3-14b", "llama-3.1-8b-instruct", "gemma-3-12b-it", "mistral-small-24b-instruct-2501")
NEW_HARDWARE = ("rtx 4070 ti super", "rx 7900 xtx", "m2 max 96gb", "2x rtx 3090")


def new_questions(n: int) -> list[dict[str, Any]]:
    """``n`` fit setups no other call asks (model x hardware x context)."""
    contexts = (4096, 16384, 65536)
    setups = [{"model": m, "hardware": h, "context": c} for c in contexts for h in NEW_HARDWARE for m in NEW_MODELS]
    return setups[:n]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def timed(remote: Remote, name: str, arguments: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = remote.call(name, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise SystemExit(f"{name} {arguments}: {(result.structured_content or {}).get('text', result.content)}")
    return elapsed


def vm(pid: int, field: str) -> int:
    """A /proc/<pid>/status figure in KiB (VmRSS, VmHWM), or 0 where /proc is missing."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def server_pid() -> int:
    """The ``fitbot mcp`` child of this process (the stdio client starts it from its portal thread)."""
    for task in Path("/proc/self/task").iterdir():
        for pid in (task / "children").read_text().split():
            if "bot.app.cli" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                return int(pid)
    return 0


def schema_compile_ms(remote: Remote) -> float:
    """What the SDK client spends on a tool's first result: compiling its output schema (jsonschema)."""
    from jsonschema.validators import validator_for

    schema = next(t.output_schema for t in remote.tools().tools if t.name == "fit")
    started = time.perf_counter()
    validator_for(schema).check_schema(schema)
    return (time.perf_counter() - started) * 1000


def line(label: str, values: list[float]) -> str:
    return (
        f"  {label:<26} p50 {statistics.median(values):7.1f} ms  p99 {percentile(values, 99):7.1f} ms"
        f"  max {max(values):7.1f} ms  (n={len(values)})"
    )


def measure(transport: str, connect: Callable[[], Any], pid: Callable[[], int], rounds: int, new: int) -> None:
    started = time.perf_counter()
    with connect() as remote:
        start_s = time.perf_counter() - started
        first = [timed(remote, name, arguments) for name, arguments in CALLS]
        repeated = [timed(remote, name, arguments) for _ in range(rounds) for name, arguments in CALLS]
        fresh = [timed(remote, "fit", setup) for setup in new_questions(new)]
        server = pid()
        rss, peak = vm(server, "VmRSS"), vm(server, "VmHWM")
        compile_ms = schema_compile_ms(remote)
    print(f"{transport}: start to initialized {start_s:.2f} s")
    print(line("first call of each tool", first))
    print("    " + ", ".join(f"{name} {ms:.0f}" for (name, _), ms in zip(CALLS, first, strict=True)) + " (ms)")
    print(
        f"    of each, the client compiling the tool's output schema (once per tool and session): {compile_ms:.0f} ms"
    )
    print(line("warm, repeated", repeated))
    print(line("warm, new question", fresh))
    print(f"  server RSS {rss / 1024:.0f} MiB, peak {peak / 1024:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="repeats of the ten calls (warm, cached)")
    parser.add_argument("--new", type=int, default=40, help="fit calls with questions not asked before (max 60)")
    parser.add_argument("--quick", action="store_true", help="two rounds, eight new questions (CI smoke run)")
    args = parser.parse_args()
    rounds, new = (2, 8) if args.quick else (args.rounds, args.new)
    with tempfile.TemporaryDirectory(prefix="fitbot-mcp-bench-") as tmp:
        data = Path(tmp)
        with (data / "stdio.log").open("w") as errlog:
            measure("stdio", lambda: stdio_remote(server_env(data / "stdio"), errlog), server_pid, rounds, new)
        port = free_port()
        env = server_env(data / "http", FITBOT_MCP_TOKEN=TOKEN, RATE_USER_PER_MINUTE="10000")
        started = time.perf_counter()
        with http_server(env, port, data / "http.log") as proc:
            print(f"http: process start to listening {time.perf_counter() - started:.2f} s")
            url = f"http://127.0.0.1:{port}/mcp"
            measure("http", lambda: http_remote(url, TOKEN), lambda: proc.pid, rounds, new)


if __name__ == "__main__":
    main()
