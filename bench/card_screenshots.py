"""Screenshots of cards as Telegram shows them, for the README: the real HTML in a headless browser.

    .venv/bin/python bench/card_screenshots.py [--out docs] [--chromium chromium]

Renders each question with ``bot.render.telegram_html.to_telegram`` (the exact HTML the bot sends)
into a page styled like a Telegram chat bubble on a phone (390 px wide, Telegram's fonts and colours
approximated), with the inline keyboard below, and saves a PNG per card with headless Chromium.
Also writes the plain text of each message next to it (``.txt``). Needs ``chromium`` on the PATH
(``apt-get install -y chromium``). ``--quick`` (CI, no browser there) renders the pages and the text
into a temporary folder and takes no screenshot.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.render.telegram_html import TelegramMessage, to_telegram
from bot.service import Service
from catalog.facts import load_facts

CARDS = {
    "telegram_fit": "/fit gpt-oss-120b rtx 4090",
    "telegram_models": "/models rtx 3090",
}
PHONE_WIDTH = 390
PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; background: #0e1621; width: {width}px; font: 15px/1.35 "Roboto", "Noto Sans", "DejaVu Sans", "Liberation Sans",
  "Noto Color Emoji", sans-serif; color: #f5f5f5; }}
.chat {{ padding: 10px 8px; }}
.bubble {{ background: #182533; border-radius: 12px; padding: 7px 10px 8px; white-space: pre-wrap;
  word-wrap: break-word; margin-bottom: 6px; }}
.bubble b {{ font-weight: 600; }}
.bubble i {{ color: #aab4bf; }}
.bubble pre {{ font: 13px/1.3 "DejaVu Sans Mono", "Roboto Mono", "Noto Color Emoji", monospace; background: #0f1c29;
  border-radius: 6px; padding: 6px 8px; margin: 4px 0; white-space: pre; overflow: hidden; }}
.bubble blockquote {{ border-left: 3px solid #5eb5f7; margin: 2px 0; padding-left: 8px; color: #cfd8e3; }}
.keys {{ display: flex; flex-wrap: wrap; gap: 4px; }}
.key {{ flex: 1 1 45%; background: #2b5278; border-radius: 8px; text-align: center; padding: 8px 4px;
  font-size: 14px; }}
</style></head><body><div class="chat">{bubbles}<div class="keys">{keys}</div></div></body></html>"""


def page(question: str, messages: list[TelegramMessage]) -> str:
    # a blockquote is a block of its own in Telegram: the newline after it is not an extra blank line
    texts = [m.text.replace("</blockquote>\n", "</blockquote>") for m in messages]
    bubbles = "".join(f'<div class="bubble">{text}</div>' for text in texts)
    keys = "".join(f'<div class="key">{html.escape(label)}</div>' for label, _ in messages[-1].buttons)
    return PAGE.format(width=PHONE_WIDTH, bubbles=bubbles, keys=keys)


def screenshot(chromium: str, source: Path, target: Path, height: int) -> None:
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--window-size={PHONE_WIDTH},{height}",
            f"--screenshot={target}",
            source.as_uri(),
        ],
        check=True,
        capture_output=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="docs")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--quick", action="store_true", help="pages and text only, into a temporary folder")
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp()) if args.quick else Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    service = Service(load_facts())
    for name, question in CARDS.items():
        reply = await service.answer(question, locale="en")
        messages = to_telegram(reply)
        plain = "\n\n".join(html.unescape(re.sub(r"<[^>]+>", "", m.text)) for m in messages)
        (out / f"{name}.txt").write_text(plain + "\n", encoding="utf-8")
        wrapped = sum(1 + len(line) // 44 for line in plain.split("\n"))  # lines after wrapping at ~44 characters
        height = 21 * wrapped + 42 * ((len(messages[-1].buttons) + 1) // 2) + 40
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / f"{name}.html"
            source.write_text(page(question, messages), encoding="utf-8")
            if not args.quick:
                screenshot(args.chromium, source, (out / f"{name}.png").resolve(), height)
        print(f"{name}: {out / (name + '.png')}")


if __name__ == "__main__":
    asyncio.run(main())
