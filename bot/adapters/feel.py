"""Feel the speed: the "⚡" button reveals sample text at the card's estimated decode rate.

Shared by the Telegram and Discord adapters, which differ only in how they edit a message. The
rate comes from ``Service.decode_speed``, computed off the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from bot.commands import FEEL

FEEL_COMMAND = f"/{FEEL} "  # cards write the button's question as "/feel <the fit question>"
CHARS_PER_TOKEN = 4.0  # the usual rule of thumb for English text


def feel_question(query: str) -> str | None:
    """The fit question behind a feel-the-speed button, or None for any other button."""
    return query[len(FEEL_COMMAND) :] if query.startswith(FEEL_COMMAND) else None


async def reveal(
    rate: float, sample: str, *, every_s: float, max_s: float, room: int
) -> AsyncIterator[tuple[str, float, bool]]:
    """Yields (text written so far, seconds elapsed, finished): an empty frame at once, then one every
    ``every_s``; the last frame is finished.

    Writing stops when the sample (cut to ``room`` characters) is out, or after ``max_s`` seconds.
    """
    total = min(len(sample), room)
    start = time.monotonic()
    yield "", 0.0, False  # the header at once, so the press is answered visibly
    while True:
        await asyncio.sleep(every_s)
        elapsed = min(time.monotonic() - start, max_s)
        chars = min(int(rate * elapsed * CHARS_PER_TOKEN), total)
        finished = chars >= total or elapsed >= max_s
        yield sample[:chars], elapsed, finished
        if finished:
            return
