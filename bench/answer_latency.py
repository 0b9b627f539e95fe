"""Answer latency of the conversation layer: parse + estimate + render, without and with a chart.

    .venv/bin/python bench/answer_latency.py [--rounds 5]

Prints p50/p99 per card kind over a set of real-world questions (each asked ``rounds`` times, the
way a chat repeats popular questions), the cost of the first chart and of a cached one, and the
start-up cost of ``fitbot ask``. Then the card lengths a reader sees: per question, lines and
visible characters on the console, on Telegram (messages, lines, characters, widest table line)
and on Discord (embeds, characters), for the default card and, where there is one, its details
page. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app.settings import Settings
from bot.render.discord_embed import to_discord
from bot.render.telegram_html import to_telegram
from bot.render.text import display_width, to_console
from bot.reply import Reply
from bot.service import Service
from catalog.store import CatalogStore

QUESTIONS = [
    "/fit glm-4.5-air rtx 5090 32k",
    "/fit qwen3-32b 2x3090 q4_k_m 16k kv q8",
    "can I run gpt-oss-120b on a mac studio with 128gb?",
    "passt GLM 4.5 Air auf meine 4090 mit 64 GB RAM?",
    "wie schnell ist llama 3.3 70b auf zwei 3090?",
    "can I run llama 3.1 8b on a 4060 ti 16gb?",
    "deepseek r1 on 8x h200",
    "/fit qwen3-30b-a3b rtx 3090 128k",
    "/fit mixtral 8x7b 2x 4090",
    "passt gemma 3 27b auf eine 7900 xtx?",
    "/quant qwen3-32b 4090",
    "cheapest cloud for deepseek r1",
    "/finetune llama-3.1-8b-instruct 4090",
    "/tco qwen3-32b rtx 5090",
    "/help",
    "/gpus llama-3.1-8b-instruct",
    "/models rtx 3090",
    "/cloud qwen3-32b",
    "/speed llama-3.3-70b-instruct 2x 3090",
]
LENGTH_QUESTIONS = [
    *QUESTIONS,
    "/fit glm-4.5-air rtx 4090 details",
    "/fit llama-3.3-70b-instruct rtx 4090 ram 16gb",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


async def measure(rounds: int) -> None:
    catalog = await CatalogStore(Settings().catalog_path()).load()
    service = Service(catalog)
    cold: dict[str, list[float]] = {}
    warm: list[float] = []
    first_fit = 0.0
    for round_no in range(rounds):
        for question in QUESTIONS:
            started = time.perf_counter()
            reply = await service.answer(question)
            reply = reply.model_copy(update={"chart": None})
            to_telegram(reply)
            to_discord(reply)
            to_console(reply)
            elapsed = (time.perf_counter() - started) * 1000
            if round_no == 0 and question is QUESTIONS[0]:
                first_fit = elapsed
            if round_no == 0:
                cold.setdefault(reply.kind, []).append(elapsed)
            else:
                warm.append(elapsed)
    first = [v for values in cold.values() for v in values]
    print("answer latency without chart (parse + estimate + render to all 3 formats)")
    print(f"  first fit answer of the process {first_fit:7.2f} ms  ({QUESTIONS[0]})")
    print(
        f"  first ask  p50 {statistics.median(first):7.2f} ms   p99 {percentile(first, 0.99):7.2f} ms  (n={len(first)})"
    )
    for kind, values in sorted(cold.items()):
        print(f"    {kind:<10} p50 {statistics.median(values):7.2f} ms   max {max(values):7.2f} ms  (n={len(values)})")
    if warm:
        print(
            f"  repeated   p50 {statistics.median(warm):7.2f} ms   p99 {percentile(warm, 0.99):7.2f} ms  (n={len(warm)},"
            " answer cache)"
        )

    from bot.render.charts import render_png

    reply = await service.answer("/fit qwen3-32b rtx 4090")
    assert reply.chart is not None
    started = time.perf_counter()
    render_png(reply.chart)
    first_chart = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    render_png(reply.chart)
    cached = (time.perf_counter() - started) * 1000
    other = (await service.answer("/fit llama-3.1-8b-instruct rtx 4090")).chart
    assert other is not None
    started = time.perf_counter()
    render_png(other)
    second_new = (time.perf_counter() - started) * 1000
    print(
        f"chart: first {first_chart:.0f} ms (incl. matplotlib import), another new chart {second_new:.0f} ms,"
        f" cached {cached:.3f} ms"
    )


def _telegram_figures(reply: Reply) -> tuple[int, int, int, int]:
    """(messages, lines, visible characters, widest <pre> line) of the card on Telegram."""
    messages = to_telegram(reply)
    plain = [html.unescape(re.sub(r"<[^>]+>", "", m.text)) for m in messages]
    pres = [
        html.unescape(line)
        for m in messages
        for block in re.findall(r"<pre>(?!<code)(.*?)</pre>", m.text, re.S)
        for line in block.split("\n")
    ]
    widest = max((display_width(line) for line in pres), default=0)
    return len(messages), sum(p.count("\n") + 1 for p in plain), sum(len(p) for p in plain), widest


def _discord_figures(reply: Reply) -> tuple[int, int]:
    embeds = to_discord(reply).embeds
    chars = 0
    for e in embeds:
        chars += len(e.get("title", "")) + len(e.get("description", "")) + len(e.get("footer", {}).get("text", ""))
        chars += sum(len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
    return len(embeds), chars


async def lengths() -> None:
    """Card lengths per platform: the phone-first cards should stay within one screen."""
    catalog = await CatalogStore(Settings().catalog_path()).load()
    service = Service(catalog)
    print("card lengths (console lines/chars · Telegram messages/lines/chars/widest table · Discord embeds/chars)")
    print(
        f"  {'question':<48} {'kind':<12} {'con l':>5} {'con c':>6} {'tg m':>4} {'tg l':>4} {'tg c':>5} {'tg w':>4}"
        f" {'dc e':>4} {'dc c':>5}"
    )
    for question in LENGTH_QUESTIONS:
        reply = await service.answer(question)
        console = to_console(reply)
        tg = _telegram_figures(reply)
        dc = _discord_figures(reply)
        print(
            f"  {question[:48]:<48} {reply.kind:<12} {len(console.splitlines()):>5} {len(console):>6}"
            f" {tg[0]:>4} {tg[1]:>4} {tg[2]:>5} {tg[3]:>4} {dc[0]:>4} {dc[1]:>5}"
        )


def startup(times: int) -> None:
    runs = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "bot.app.cli", "ask", "/fit qwen3-8b 4090"],
            check=True,
            capture_output=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        runs.append(time.perf_counter() - started)
    print(
        f"`fitbot ask` wall time (process start to exit): min {min(runs):.2f} s, median {statistics.median(runs):.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one round and one start-up (CI smoke run)")
    args = parser.parse_args()
    asyncio.run(measure(1 if args.quick else args.rounds))
    asyncio.run(lengths())
    startup(1 if args.quick else 3)


if __name__ == "__main__":
    main()
