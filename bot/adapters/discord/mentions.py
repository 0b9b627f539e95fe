"""Discord @mentions: a message that mentions the bot (or any DM) is answered as a reply, sent with
the same retries as a follow-up (``discord_retry``); the bot class provides the service and the card."""

from __future__ import annotations

import io
import logging
import re
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

with warnings.catch_warnings():  # discord.py's voice module imports audioop (deprecated, unused here)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord

from bot.adapters.chart_workers import render_chart
from bot.adapters.discord.retry import FOLLOWUP_BUDGET_S, persist
from bot.render.discord_embed import CHART_FILENAME
from bot.reply import ChartSpec, Reply
from bot.service import Service, User

log = logging.getLogger("bot.adapters.discord.bot")
_BOT_MENTION = re.compile(r"<@!?(\d+)>")


def user_of(author: discord.abc.User, guild: discord.Guild | None, is_admin: bool | None = None) -> User:
    return User(id=f"dc:{author.id}", chat=f"dc:{guild.id}" if guild else "", is_admin=is_admin)


def chart_file(png: bytes) -> discord.File:
    """The chart as ``chart.png`` (rendered in a thread by ``render_chart``, cached there)."""
    return discord.File(io.BytesIO(png), filename=CHART_FILENAME)


class MentionMixin:
    """``on_message``: mentions in, replies out; a stop waits for those in flight (``_mentioning``)."""

    service: Service
    _mentioning: set[int]
    message_parts: Callable[[Reply], tuple[dict[str, Any], ChartSpec | None]]  # the bot class's

    async def on_message(self, message: discord.Message) -> None:
        """Answers a message that mentions the bot (or any DM) as a reply; never pings anyone."""
        me = self.user  # type: ignore[attr-defined]
        if message.author.bot or me is None:
            return
        if message.guild is not None and not any(u.id == me.id for u in message.mentions):
            return
        self._mentioning.add(message.id)  # a stop waits for it (``drain``), as for slash commands
        try:
            await self._answer_mention(message, me.id)
        except Exception:
            log.exception("mention reply failed")
        finally:
            self._mentioning.discard(message.id)

    async def _answer_mention(self, message: discord.Message, me: int) -> None:
        user = user_of(message.author, message.guild)
        if message.guild is not None and not await self.service.answers_mentions(user.chat):
            return  # the server switched plain mentions off (/settings mentions off); commands still work
        query = _BOT_MENTION.sub(lambda m: "" if int(m.group(1)) == me else m.group(0), message.content)
        locale = str(message.guild.preferred_locale) if message.guild else None
        reply = await self.service.answer(query.strip() or "/help", locale, user)
        kwargs, chart = self.message_parts(reply)
        png = None if chart is None else await render_chart(chart)
        if kwargs.get("view") is None:
            kwargs.pop("view", None)

        def once() -> Awaitable[Any]:  # a file is consumed by a send: each try gets its own
            parts: dict[str, Any] = dict(kwargs) if png is None else {**kwargs, "files": [chart_file(png)]}
            return message.reply(mention_author=False, **parts)

        await persist(once, FOLLOWUP_BUDGET_S, "a mention reply")
