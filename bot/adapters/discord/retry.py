"""Sends to Discord that a network fault must not lose: tried again with back-off within a budget.

An interaction's first response (the callback) must reach Discord within 3 s of its creation, so it
is tried again only until then. A follow-up (the webhook edit or message after a defer) may be sent
while the interaction token lives (15 minutes); it is tried again for up to ``FOLLOWUP_BUDGET_S``.
What counts as worth another try: the connection failed (refused, reset, timed out) or Discord
answered 5xx after discord.py's own tries. A 4xx is an answer, not a fault, and is raised at once
(discord.py itself waits out 429s), except that a callback tried again and refused as "already
acknowledged" had landed: the connection was cut after Discord took it, before its answer came back.
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import TypeVar

import aiohttp

with warnings.catch_warnings():  # discord.py's voice module imports audioop (deprecated, unused here)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord

log = logging.getLogger("bot.adapters.discord.bot")

T = TypeVar("T")

ALREADY_ACKNOWLEDGED = 40060  # Discord's error code for a second callback to one interaction

CALLBACK_WINDOW_S = 3.0  # Discord drops an interaction whose callback comes later than this
FOLLOWUP_BUDGET_S = 60.0  # well inside the 15-minute token life; the journal repairs the rest after a restart
FIRST_WAIT_S = 0.25
MAX_WAIT_S = 8.0


def transient(error: BaseException) -> bool:
    """A fault of the way to Discord (worth another try), not Discord's answer to the request."""
    if isinstance(error, discord.DiscordServerError):
        return True
    if isinstance(error, discord.HTTPException):
        return False
    return isinstance(error, OSError | aiohttp.ClientError | asyncio.TimeoutError)


async def persist(send: Callable[[], Awaitable[T]], budget_s: float, what: str, *, callback: bool = False) -> T | None:
    """``send()`` until it succeeds, a non-transient error, or ``budget_s`` has passed (then the last error).

    ``send`` is called afresh for each try: files are consumed by a send and must be rebuilt. With
    ``callback`` (an interaction's first response), "already acknowledged" on a later try means an
    earlier one landed: None is returned.
    """
    give_up = time.monotonic() + budget_s
    wait = FIRST_WAIT_S
    tries = 0
    while True:
        tries += 1
        try:
            result = await send()
        except Exception as error:
            if callback and tries > 1 and getattr(error, "code", None) == ALREADY_ACKNOWLEDGED:
                log.info("%s had landed before its connection was cut", what)
                return None
            left = give_up - time.monotonic()
            if not transient(error) or left <= 0:
                if transient(error):
                    log.warning(
                        "gave up sending %s after %d tries",
                        what,
                        tries,
                        extra={"event": "discord_send_given_up", "error": error.__class__.__name__},
                    )
                raise
            if tries == 1:
                log.info("sending %s failed (%s); trying again", what, error.__class__.__name__)
            await asyncio.sleep(min(wait, left))
            wait = min(wait * 2, MAX_WAIT_S)
            continue
        if tries > 1:
            log.info("sent %s after %d tries", what, tries, extra={"event": "discord_send_retried"})
        return result


def callback_budget(interaction: discord.Interaction) -> float:
    """Seconds left of the 3 s in which Discord takes the interaction's first response (a little kept back)."""
    age = time.time() - interaction.created_at.timestamp()
    return max(0.0, CALLBACK_WINDOW_S - 0.2 - age)


__all__ = ["FOLLOWUP_BUDGET_S", "callback_budget", "persist", "transient"]
