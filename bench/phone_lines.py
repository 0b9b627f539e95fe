"""How long a fit card is on a phone (issue 35, item 7): lines of the Telegram message at 38 characters.

    .venv/bin/python bench/phone_lines.py [--quick]

Asks the fit question for a spread of catalog models on a spread of catalog devices (both languages),
renders the first page as the real Telegram HTML (``bot.render.telegram_html``), strips the tags and
wraps every line at 38 characters (a phone's width in Telegram's default font), and prints the median,
p90 and longest card in lines, and the buttons under it. README cites the full run.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import statistics
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.render.telegram_html import to_telegram
from bot.service import Service
from catalog.facts import load_facts

WIDTH = 38
# One screen: a 6.1" phone (iPhone 15, 393 x 852 pt) in Telegram's default 17-pt text, about 22 pt a line,
# shows some 28 lines of a message between the chat header and the input bar with three rows of inline
# buttons under it (two buttons a row, ``bot.adapters.telegram.parts.SHORT_LABEL``). An estimate of the
# layout, not a vendor figure: the bench reports the lines, and this is the bar they are held to.
SCREEN_LINES = 28
# fit cards that ask for speculative decoding (a draft model, an MTP head), both languages
SPECULATIVE = (
    "qwen3 32b with a 0.6b draft on a 4090",
    "passt qwen3 32b mit einem 0.6b draft auf eine 4090",
    "deepseek v3 with mtp on 8x h200",
    "llama 3.1 70b with llama 3.2 1b as draft on 2x 3090",
)
SCREEN_BUTTONS = 6
DEVICES = ("rtx-3060-12gb", "rtx-4090", "rtx-5090", "m4-pro-48", "h100-sxm", "ryzen-ai-max-395-128", "rx-7900-xtx")


def phone_lines(text: str) -> int:
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    return sum(max(1, len(textwrap.wrap(line, WIDTH)) if line.strip() else 1) for line in plain.splitlines())


async def measure(quick: bool) -> tuple[list[int], list[int], list[int]]:
    catalog = load_facts()
    devices = [d for d in DEVICES if catalog.gpu(d) is not None]
    models = [m.id for m in catalog.models if m.variant not in ("base", "embedding")][:: 12 if quick else 3]
    service = Service(catalog)
    lines: list[int] = []
    buttons: list[int] = []
    speculative: list[int] = []
    try:
        for model in models:
            for device in devices:
                for lang in ("en", "de"):
                    reply = await service.answer(f"/fit {model} {device}", locale=lang)
                    if reply.kind != "fit":
                        continue
                    first = to_telegram(reply)[0]
                    lines.append(phone_lines(first.text))
                    buttons.append(len(to_telegram(reply)[-1].buttons))
        for text in SPECULATIVE:
            reply = await service.answer(text)
            speculative.append(phone_lines(to_telegram(reply)[0].text))
    finally:
        await service.close()
    return lines, buttons, speculative


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="every 12th model instead of every 3rd")
    args = parser.parse_args()
    lines, buttons, speculative = asyncio.run(measure(args.quick))
    q = statistics.quantiles(lines, n=10)
    median = statistics.median(lines)
    print(
        f"fit cards on a phone ({len(lines)} cards, {WIDTH} characters a line): median {median:g}"
        f" lines, p90 {q[-1]:g}, longest {max(lines)}; buttons median {statistics.median(buttons):g}, max {max(buttons)};"
        f" one screen ({SCREEN_LINES} lines, {SCREEN_BUTTONS} buttons): "
        f"{'yes' if median <= SCREEN_LINES and max(buttons) <= SCREEN_BUTTONS else 'no'},"
        f" {sum(n <= SCREEN_LINES for n in lines) / len(lines):.0%} of cards within it"
    )
    print(f"speculative fit cards ({len(speculative)} questions): {', '.join(map(str, speculative))} lines")


if __name__ == "__main__":
    main()
