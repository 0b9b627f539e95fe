"""Start-up: how long FitBot takes before it answers, paired in one run against a previous commit and a peer.

    .venv/bin/python bench/startup.py [--base main] [--runs 15] [--ridgepoint PATH] [--quick]

The machine is shared, so contenders run interleaved, round by round, and the figures are medians
of wall time and of CPU time (user + system of the child process); ratios compare pairs measured
in the same minutes. Contenders:

- this tree; Python's own start and the least a process with a pydantic core can do (import pydantic,
  build and validate one model), which bounds how close to ridgepoint a one-shot command can come;
  ``--base REF`` unpacked with ``git archive`` (run by the same interpreter, with its
  own data directory, so only the code differs); ridgepoint 0.1.2 (``pip install ridgepoint`` into
  another environment, pass ``--ridgepoint PATH`` or put it on PATH); llmfit when its binary runs.

Figures:

1. one-shot ``fitbot estimate --model llama-3.1-8b-instruct --quant Q4_K_M --gpu "rtx 4090"`` against
   ``ridgepoint fit llama-3-8b --gpu rtx4090-24gb --dtype q4_k_m --engine llamacpp --ctx 8192``;
2. ``fitbot ask`` with the same question against ``fitbot estimate``;
3. in a fresh process: creating the ``Service``, its first fit answer, the first chart after start-up
   (the adapters' warm-ups done, as they are while a bot connects), the first ``/models`` and
   ``/gpus`` asks, and the median of the first asks of ``FIRST_ASKS`` (each asked once);
4. building the name vocabulary and index for 1x, 2x and 4x the catalog (each copy of every model
   and device under names of its own), the median of a few fresh processes per size.

``--quick`` (CI): one round, this tree only, sizes 1x and 2x. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.answer_latency import QUESTIONS  # noqa: E402  (after the path: run as a script)

ESTIMATE = ["estimate", "--model", "llama-3.1-8b-instruct", "--quant", "Q4_K_M", "--gpu", "rtx 4090"]
ASK = ["ask", "can I run llama 3.1 8b instruct q4_k_m on an rtx 4090?"]
RIDGEPOINT = [
    "fit",
    "llama-3-8b",
    "--gpu",
    "rtx4090-24gb",
    "--dtype",
    "q4_k_m",
    "--engine",
    "llamacpp",
    "--ctx",
    "8192",
]
# What every process whose core is pydantic pays before any work: the interpreter, pydantic, one model built
# and validated (plugins off, as FitBot starts); next to ridgepoint it shows how low a one-shot command can go
PYDANTIC_FLOOR = "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\nM(x=1)"
LLMFIT = ["--memory=24G", "--ram=64G", "--cpu-cores=16", "plan", "meta-llama/Llama-3.1-8B-Instruct", "--context", "8192",
          "--quant", "Q4_K_M", "--no-dashboard"]  # fmt: skip
TARGETS = {
    "estimate / ridgepoint": "<= 4",
    "estimate / base": "<= 0.6",
    "estimate / pydantic floor": "<= 1.5",
    "ask / estimate": "<= 1.5",
    "Service()": "< 60 ms",
    "first fit answer": "< 10 ms",
    "first chart": "< 200 ms",
    "first /models": "< 25 ms",
    "first /gpus": "< 25 ms",
    "first ask p50": "< 3 ms",
}
# Real-world questions of every card kind (bench/answer_latency.py's), none asked before in the process; /models and
# /gpus are timed on their own, /help answers from a template
FIRST_ASKS = [q for q in QUESTIONS if q not in ("/models rtx 3090", "/gpus llama-3.1-8b-instruct", "/help")]

# Run in a fresh interpreter inside a tree: start-up as a bot has it (catalog, Service, the warm-ups an
# adapter starts), then the first fit answer and its chart. Works on trees without the warm-ups too.
IN_PROCESS = r"""
import asyncio, importlib, json, statistics, sys, time
def clock():
    return time.perf_counter(), time.process_time()
def since(start):
    wall, cpu = clock()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}
from bot.app.cli import load_catalog
from bot.service import Service
catalog = load_catalog()
start = clock()
service = Service(catalog)
out = {"Service()": since(start)}
charts = importlib.import_module("bot.adapters.chart_workers")
for warm in (getattr(service, "warm_up", None), getattr(charts, "warm_up_charts", None)):
    if warm is not None:
        warm().result()
async def first():
    start = clock()
    reply = await service.answer("can I run llama 3.1 8b on an rtx 4090?")
    out["first fit answer"] = since(start)
    start = clock()
    await charts.render_chart(reply.chart)
    out["first chart"] = since(start)
    for name, question in (("first /models", "/models rtx 3090"), ("first /gpus", "/gpus llama-3.1-8b-instruct")):
        start = clock()
        await service.answer(question)
        out[name] = since(start)
    asks = []
    for question in json.loads(sys.argv[1]):
        start = clock()
        await service.answer(question)
        asks.append(since(start))
    out["first ask p50"] = {m: statistics.median(a[m] for a in asks) for m in ("wall", "cpu")}
asyncio.run(first())
print(json.dumps(out))
"""

# Builds the vocabulary and the name index of a catalog grown ``times`` fold (both trees' names for the
# two builders); prints CPU seconds.
NAME_INDEX = r"""
import json, re, sys, time
import catalog.lookup as lookup
import core.query.index as query_index
from catalog.facts import load_facts
times = int(sys.argv[1])
SUFFIXES = ("qxvk", "bjwp", "fzmh")  # no letter in common: a copy's words are no typo of another's
def grown(catalog, times):
    models, gpus = list(catalog.models), list(catalog.gpus)
    for suffix in SUFFIXES[: times - 1]:
        def rename(text):
            return re.sub(r"[A-Za-z]{2,}", lambda m: m.group(0) + suffix, text)
        def new_id(old):
            return rename(old) if rename(old) != old else f"{old}-{suffix}"
        models += [m.model_copy(update={"id": new_id(m.id), "name": rename(m.name), "family": rename(m.family),
                   "aliases": tuple(rename(a) for a in m.aliases), "hf_repo": m.hf_repo and rename(m.hf_repo)})
                   for m in catalog.models]
        gpus += [g.model_copy(update={"id": new_id(g.id), "name": rename(g.name), "short_name": rename(g.short_name),
                 "aliases": tuple(rename(a) for a in g.aliases), "chip": rename(g.chip)}) for g in catalog.gpus]
    return catalog.model_copy(update={"models": tuple(models), "gpus": tuple(gpus)})
catalog = grown(load_facts(), times)
build_vocabulary = getattr(lookup, "build_vocabulary", lookup.vocabulary)  # older trees: unmemoised vocabulary()
build_index = getattr(query_index, "build_index", None) or getattr(query_index, "_" + "build_index")
start = time.process_time()
build_index(build_vocabulary(catalog))
print(json.dumps({"cpu": time.process_time() - start, "models": len(catalog.models), "gpus": len(catalog.gpus)}))
"""


@dataclass
class Contender:
    name: str
    command: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    def run(self) -> str:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(self.command, cwd=self.cwd, env=self.env, capture_output=True, text=True, timeout=300)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        self.walls.append(wall)
        self.cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        return done.stdout

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


@contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """The files of ``ref`` in a temporary folder (``git archive``: the repository is not touched)."""
    folder = Path(tempfile.mkdtemp(prefix="fitbot-base-"))
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def tree_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FITBOT_", "PYTHONPATH"))}
    env.update(FITBOT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1", PYTHONDONTWRITEBYTECODE="")
    return env


def fitbot(name: str, tree: Path, args: list[str], env: dict[str, str]) -> Contender:
    return Contender(name, [sys.executable, "-m", "bot.app.cli", *args], tree, env)


def peer(path: str | None, name: str, probe: list[str]) -> tuple[str | None, str]:
    """The peer's executable, or None and why not."""
    found = path or shutil.which(name)
    if not found:
        return None, "not installed (pip install it into another environment; pass its path)"
    try:
        probe_run = subprocess.run([found, *probe], capture_output=True, text=True, timeout=60)
    except OSError as exc:
        return None, f"does not start: {exc}"
    if probe_run.returncode != 0:
        return None, f"does not run here: {(probe_run.stderr or probe_run.stdout).strip().splitlines()[-1][:120]}"
    return found, ""


def rounds(contenders: list[Contender], n: int) -> None:
    """Each contender once untimed (catalog build, caches), then ``n`` rounds in rotating order."""
    for c in contenders:
        c.run()
        c.walls.clear()
        c.cpus.clear()
    for i in range(n):
        for c in contenders[i % len(contenders) :] + contenders[: i % len(contenders)]:
            c.run()


def in_process(tree: Path, env: dict[str, str], n: int) -> dict[str, dict[str, float]]:
    """Medians over ``n`` fresh processes of the start-up figures."""
    process = Contender("in-process", [sys.executable, "-c", IN_PROCESS, json.dumps(FIRST_ASKS)], tree, env)
    runs = [json.loads(process.run()) for _ in range(n)]
    return {k: {m: statistics.median(r[k][m] for r in runs) for m in ("wall", "cpu")} for k in runs[0]}


def name_index(tree: Path, env: dict[str, str], sizes: list[int], n: int) -> dict[int, dict[str, float]]:
    """Per catalog size, the median CPU time of ``n`` fresh builds (one process each)."""
    out = {}
    for times in sizes:
        c = Contender(f"index x{times}", [sys.executable, "-c", NAME_INDEX, str(times)], tree, env)
        runs = [json.loads(c.run()) for _ in range(n)]
        out[times] = {**runs[0], "cpu": statistics.median(r["cpu"] for r in runs)}
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.0995 else f"{seconds * 1000:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="main", help="git ref to pair against (default main); 'none' to skip")
    ap.add_argument("--runs", type=int, default=15, help="rounds of one-shot runs and fresh processes")
    ap.add_argument("--ridgepoint", help="path of the ridgepoint executable (default: from PATH)")
    ap.add_argument("--llmfit", help="path of the llmfit executable (default: from PATH)")
    ap.add_argument("--quick", action="store_true", help="CI: one round, this tree only, index at 1x and 2x")
    args = ap.parse_args()
    runs, sizes, base = (1, [1, 2], "none") if args.quick else (args.runs, [1, 2, 4], args.base)

    with tempfile.TemporaryDirectory() as tmp:
        here_env = tree_env(Path(tmp) / "here")
        est = fitbot("estimate (this tree)", ROOT, ESTIMATE, here_env)
        ask = fitbot("ask (this tree)", ROOT, ASK, here_env)
        contenders = [est, ask]
        rp_path, rp_why = peer(args.ridgepoint, "ridgepoint", ["--help"])
        if rp_path:
            contenders.append(
                Contender("ridgepoint 0.1.2", [rp_path, *RIDGEPOINT], ROOT, {**os.environ, "HF_HUB_OFFLINE": "1"})
            )
        floor_env = {**here_env, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
        python = Contender("python start", [sys.executable, "-c", "pass"], ROOT, here_env)
        floor = Contender("python + pydantic model", [sys.executable, "-c", PYDANTIC_FLOOR], ROOT, floor_env)
        contenders += [python, floor]
        lf_path, lf_why = peer(args.llmfit, "llmfit", ["--version"])
        if lf_path:
            contenders.append(Contender("llmfit 1.1.17", [lf_path, *LLMFIT], ROOT, dict(os.environ)))
        with worktree(base) if base != "none" else _no_tree() as base_tree:
            base_env = tree_env(Path(tmp) / "base")
            if base_tree is not None:
                base_est = fitbot(f"estimate ({base})", base_tree, ESTIMATE, base_env)
                base_ask = fitbot(f"ask ({base})", base_tree, ASK, base_env)
                contenders += [base_est, base_ask]
            rounds(contenders, runs)
            here = in_process(ROOT, here_env, max(1, runs // 3))
            there = in_process(base_tree, base_env, max(1, runs // 3)) if base_tree is not None else None
            index_here = name_index(ROOT, here_env, sizes, max(1, runs // 5))
            index_there = name_index(base_tree, base_env, sizes, max(1, runs // 5)) if base_tree is not None else None

    print(f"one-shot commands, median of {runs} interleaved rounds (wall / CPU)")
    for c in contenders:
        print(f"  {c.name:<26} {ms(c.wall):>9} / {ms(c.cpu):>9}")
    if not rp_path:
        print(f"  ridgepoint: {rp_why}")
    if not lf_path:
        print(f"  llmfit: {lf_why}")
    ratios = {
        "estimate / pydantic floor": (est.wall / floor.wall, est.cpu / floor.cpu),
        "ask / estimate": (ask.wall / est.wall, ask.cpu / est.cpu),
    }
    if rp_path:
        rp = next(c for c in contenders if c.name.startswith("ridgepoint"))
        ratios["estimate / ridgepoint"] = (est.wall / rp.wall, est.cpu / rp.cpu)
        ratios["pydantic floor / ridgepoint"] = (floor.wall / rp.wall, floor.cpu / rp.cpu)
    if base != "none":
        ratios["estimate / base"] = (est.wall / base_est.wall, est.cpu / base_est.cpu)
        ratios["ask / base"] = (ask.wall / base_ask.wall, ask.cpu / base_ask.cpu)
    for name, (wall, cpu) in ratios.items():
        print(f"  {name:<26} {wall:>8.2f}x / {cpu:>8.2f}x   target {TARGETS.get(name, '-')}")

    print("\nfresh process, after start-up (wall / CPU)" + (f"; {base} beside" if there else ""))
    for key, fig in here.items():
        old = f"   {base}: {ms(there[key]['wall'])} / {ms(there[key]['cpu'])}" if there else ""
        print(f"  {key:<26} {ms(fig['wall']):>9} / {ms(fig['cpu']):>9}   target {TARGETS[key]}{old}")

    print(f"\nname vocabulary + index build (CPU, median of {max(1, runs // 5)} processes), per catalog size")
    for times, fig in index_here.items():
        growth = fig["cpu"] / index_here[1]["cpu"]
        old = ""
        if index_there:
            old = (
                f"   {base}: {ms(index_there[times]['cpu'])} ({index_there[times]['cpu'] / index_there[1]['cpu']:.1f}x)"
            )
        print(f"  {times}x ({fig['models']} models, {fig['gpus']} devices) {ms(fig['cpu']):>9} ({growth:.1f}x){old}")


@contextmanager
def _no_tree() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    main()
