"""Stopping a Discord bot without leaving anyone on "thinking…": answers in flight get a grace
period, the rest are told to ask again, and deferred interactions are journaled so that the next
start can fix those a crash left behind."""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from typing import TYPE_CHECKING

import aiohttp

with warnings.catch_warnings():  # discord.py's voice module imports audioop (deprecated, unused here)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord

from bot.adapters.discord.commands import apologise, text
from bot.cards.menu import platform_lang
from bot.service import Service

if TYPE_CHECKING:
    from bot.handover import InteractionJournal

log = logging.getLogger("bot.adapters.discord.bot")

QUIET_S = 0.3  # the drain ends once nothing was in flight this long (or the grace is over)


class StopMixin:
    """The drain on stop and the recovery after a crash; the bot class provides the rest."""

    service: Service
    closing: bool
    _answering: dict[int, tuple[discord.Interaction, bool]]
    _mentioning: set[int]  # ids of @mention messages being answered
    _held: set[int]

    @property
    def deferred(self) -> InteractionJournal | None:
        return self.service.deferred

    # ---- stopping without leaving anyone on "thinking…"

    def _hold(self, interaction: discord.Interaction) -> None:
        """Records a deferred interaction, so a crash before its answer can be fixed by the next start."""
        journal = self.deferred
        if journal is None:
            return
        try:
            journal.hold(
                (
                    str(interaction.id),
                    str(interaction.application_id),
                    interaction.token,
                    str(interaction.locale),
                    time.time(),
                )
            )
            self._held.add(interaction.id)
        except OSError:
            log.warning("could not record a deferred interaction")

    async def _release(self, interaction_id: int) -> None:
        journal = self.deferred
        if journal is None:
            return
        try:
            journal.release(str(interaction_id))
        except OSError:
            log.warning("could not release a deferred interaction")

    async def drain(self, grace_s: float) -> int:
        """Stop taking questions; give answers in flight ``grace_s``, then tell the rest to ask again.

        Returns how many interactions were told so. New interactions during the drain get the
        "restarting" message at once (ephemeral). @mentions in flight are answered like slash
        commands; mentions still arriving are answered too, until nothing has been in flight for
        ``QUIET_S`` (events read from the socket just before the stop) or the grace ends.
        """
        self.closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace_s
        quiet_since = loop.time()
        while loop.time() < deadline:
            if self._answering or self._mentioning:
                quiet_since = loop.time()
            elif loop.time() - quiet_since >= QUIET_S:
                break
            await asyncio.sleep(0.05)
        told = 0
        for interaction, deferred in list(self._answering.values()):
            lang = platform_lang(str(interaction.locale))
            try:
                if deferred or interaction.id in self._held:  # held: a defer was sent, perhaps unconfirmed
                    await interaction.edit_original_response(
                        content=text(lang, "restarting"), embeds=[], attachments=[], view=None
                    )
                else:
                    await apologise(interaction, "restarting")
                told += 1
                await self._release(interaction.id)
            except (discord.HTTPException, OSError, aiohttp.ClientError):  # still held: the next start edits it
                log.warning("could not tell interaction %s about the restart", interaction.id)
        if told:
            log.warning("%d answers did not finish before the stop; asked to ask again", told)
        return told

    async def recover_pending(self) -> int:
        """After a crash: edits each deferred interaction a dead process left on "thinking…" (15 min tokens)."""
        journal = self.deferred
        if journal is None:
            return 0
        held = journal.held()
        journal.clear()
        fixed = 0
        for item in held:
            try:
                hook = discord.Webhook.partial(int(item.application_id), item.token, client=self)  # type: ignore[arg-type]
                # discord.py types message_id as int; "@original" is the path Discord documents for the first reply
                await hook.edit_message("@original", content=text(platform_lang(item.locale), "restarting"))  # type: ignore[call-overload]
                fixed += 1
            except (discord.HTTPException, ValueError):
                log.info("a deferred interaction from before the restart could not be edited (expired)")
        if fixed:
            log.warning("told %d askers left on 'thinking…' by the previous process to ask again", fixed)
        return fixed
