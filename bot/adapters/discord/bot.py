"""Discord adapter: slash commands, autocomplete, mention replies and card buttons over ``Service``.

Everything is wired in ``build_bot`` and the bot's ``setup_hook`` (RoboDanny style): the command
tree with its German ``Translator``, the persistent button handler and a command sync that runs
only when the command payload's hash differs from the one saved last time (Discord rate-limits
syncs, and a restart should not re-register unchanged commands).

Design decisions:

* Slash commands, not hybrid commands: a mention is a free-text question ("@FitBot can I run
  qwen3 32b on a 4090?"), which no prefix-command signature can parse. Both paths end in
  ``Service.answer``; every slash command only builds the question string from its typed options.
* Interactions must be acknowledged within 3 s. A question that names a Hugging Face repo is
  deferred at once; any other answer that has not finished after ``DEFER_AFTER_S`` is deferred
  then; a chart (rendered in a thread) always defers. Nothing else waits, so a plain /fit answers
  with one callback.
* Buttons are ``DynamicItem``s whose custom_id carries the whole question (``fitbot:q:<query>``)
  and so keep working after a restart. A question over Discord's 100-character custom_id limit is
  kept in memory under a short key (``fitbot:k:<key>``); after a restart or expiry such a button
  answers "this card expired" ephemerally. Views are fully dynamic, so discord.py stores nothing
  per message.
* ``AllowedMentions.none()`` on the client stops every ping (including the reply ping); the
  renderer escapes markdown and neutralises mentions in the text, and so does this module for
  the few strings it builds itself.
* Intents: guilds, guild messages and DMs. The privileged message-content intent is optional:
  Discord delivers the content of messages that mention the bot (and of DMs) without it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

with warnings.catch_warnings():  # discord.py's voice module imports audioop (deprecated, unused here)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord
    from discord import app_commands
    from discord.ext import commands

from bot.adapters.buttons import ButtonStore
from bot.adapters.chart_workers import render_chart, warm_up_charts
from bot.adapters.discord.commands import (
    FitCommands,
    FitTranslator,
    FitTree,
    Suggester,
    apologise,
    fit_client,
    text,
)
from bot.adapters.discord.mentions import MentionMixin, chart_file, user_of
from bot.adapters.discord.retry import FOLLOWUP_BUDGET_S, callback_budget, persist, transient
from bot.adapters.discord.stop import StopMixin
from bot.adapters.feel import feel_question, reveal
from bot.app.jobs import shared_buttons
from bot.cards.menu import platform_lang, telegram_text
from bot.render.charts import cached_png
from bot.render.discord_embed import to_discord
from bot.reply import ChartSpec, Reply
from bot.service import Service, User

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)
GRACE_S = 20.0  # a stop gives answers in flight this long (systemd and compose allow 30 s in all)

DEFER_AFTER_S = 1.0  # an answer still running after this is deferred (Discord allows 3 s)
HUB_REPO = re.compile(r"[\w.-]+/[\w.-]+")  # "Qwen/Qwen3-32B": a hub look-up may follow
CUSTOM_ID_MAX = 100
CARD_PREFIX = "fitbot"
FEEL_SECONDS = 10.0
FEEL_EDIT_EVERY_S = 1.0  # Discord allows about 5 message edits per 5 s per channel
MAX_CONTENT = 2000


# --------------------------------------------------------------------------------------------- buttons


CARD_TEMPLATE = re.compile(r"fitbot:(?P<kind>[qk]):(?P<data>.+)", re.DOTALL)


class CardButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=CARD_TEMPLATE):
    """A follow-up button; its custom_id holds the question (q) or a key into the ButtonStore (k)."""

    def __init__(self, kind: str, data: str, label: str = "…") -> None:
        super().__init__(
            discord.ui.Button(
                label=label, style=discord.ButtonStyle.secondary, custom_id=f"{CARD_PREFIX}:{kind}:{data}"
            )
        )
        self.kind, self.data = kind, data

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str]
    ) -> CardButton:
        assert isinstance(item, discord.ui.Button), item  # the template only matches our buttons' custom_ids
        return cls(match["kind"], match["data"], item.label or "…")

    async def callback(self, interaction: discord.Interaction) -> None:
        await fit_client(interaction).press(interaction, self.kind, self.data)


# --------------------------------------------------------------------------------------------- the bot


def interaction_user(interaction: discord.Interaction) -> User:
    """The asker; on a server ``is_admin`` is their resolved "Manage Server" permission (the runtime check
    behind the commands' ``default_member_permissions``, which server owners can override)."""
    admin = interaction.permissions.manage_guild if interaction.guild is not None else None
    return user_of(interaction.user, interaction.guild, admin)


class FitBotMixin(MentionMixin, StopMixin):
    """Shared by the plain and the sharded bot: setup, the answer path, buttons and mentions."""

    service: Service
    sync_state_path: Path | None
    suggester: Suggester
    cards: ButtonStore
    synced: bool
    charts: bool
    feel_seconds: float
    feel_every_s: float
    _feeling: set[int]
    _tasks: set[asyncio.Task[Any]]  # feel-the-speed streams and answers being sent: cancelled by ``close``
    _answering: dict[int, tuple[discord.Interaction, bool]]
    _mentioning: set[int]
    _held: set[int]
    closing: bool
    on_state: Callable[[str], None] | None

    def _init_fit(self, service: Service, sync_state_path: Path | None, charts: bool) -> None:
        self.service, self.sync_state_path, self.charts = service, sync_state_path, charts
        service.warm_up()  # while the bot connects, so that neither the first answer nor the first chart waits
        if charts:
            warm_up_charts()
        self.suggester = Suggester(service)
        self.cards = ButtonStore(shared=shared_buttons(service))  # shared: a restarted shard still knows them
        self.synced = False
        self._feeling, self._tasks = set(), set()
        self.feel_seconds, self.feel_every_s = FEEL_SECONDS, FEEL_EDIT_EVERY_S
        self._answering, self.closing, self.on_state = {}, False, None
        self._mentioning: set[int] = set()
        self._held: set[int] = set()

    async def setup_hook(self) -> None:
        """Translator, commands, the persistent button handler, then a sync if the commands changed."""
        tree: app_commands.CommandTree = self.tree  # type: ignore[attr-defined]
        await tree.set_translator(FitTranslator())
        await self.add_cog(FitCommands(self))  # type: ignore[attr-defined]
        self.add_dynamic_items(CardButton)  # type: ignore[attr-defined]
        await self.sync_commands()
        await self.recover_pending()

    async def command_hash(self) -> str:
        """sha256 of the application id and the translated command payload that a sync would send."""
        tree: app_commands.CommandTree = self.tree  # type: ignore[attr-defined]
        assert tree.translator is not None
        payload = [await c.get_translated_payload(tree, tree.translator) for c in tree.get_commands()]
        app_id = self.application_id  # type: ignore[attr-defined]
        blob = json.dumps({"app": app_id, "commands": payload}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    async def sync_commands(self) -> bool:
        """PUTs the commands unless the saved hash matches; returns whether it synced."""
        digest = await self.command_hash()
        path = self.sync_state_path
        if path is not None and path.is_file() and path.read_text(encoding="utf-8").strip() == digest:
            log.info("application commands unchanged; not syncing")
            return False
        await self.tree.sync()  # type: ignore[attr-defined]
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(digest + "\n", encoding="utf-8")
        self.synced = True
        return True

    # ---- the one answer path for commands and buttons

    async def respond(self, interaction: discord.Interaction, query: str, *, edit: bool = False) -> None:
        """Defer if slow → answer → render → send (or edit the card the button sits on).

        Every interaction being answered is tracked until its answer went out, so a stop can
        finish it or tell the asker to ask again (``drain``); a deferred one is also held in the
        journal until its answer was delivered: one whose send failed past the retry budget (or
        never ran: a crash, a stop) stays held, for the next start to fix (``recover_pending``).
        """
        if self.closing:
            await apologise(interaction, "restarting")
            return
        self._answering[interaction.id] = (interaction, False)
        current = asyncio.current_task()
        if current is not None:  # ``close`` cancels it: a send still being tried would meet a closed session
            self._tasks.add(current)
        settled = False  # delivered, or refused by Discord itself (the error handler then tells the asker)
        try:
            await self._respond(interaction, query, edit)
            settled = True
        except Exception as error:
            settled = not transient(error)
            raise
        finally:  # a cancelled answer (a stop, a crash) is not settled either
            self._answering.pop(interaction.id, None)
            self._tasks.discard(current)
            if interaction.id in self._held:
                self._held.discard(interaction.id)
                if settled:
                    await self._release(interaction.id)

    async def _respond(self, interaction: discord.Interaction, query: str, edit: bool) -> None:
        deferred = bool(HUB_REPO.search(query)) and await self._defer(interaction, edit)
        task = asyncio.ensure_future(self.service.answer(query, str(interaction.locale), interaction_user(interaction)))
        if not deferred and not task.done():
            done, _ = await asyncio.wait((task,), timeout=DEFER_AFTER_S)
            deferred = not done and await self._defer(interaction, edit)
        reply = await task
        kwargs, chart = self.message_parts(reply)
        png: bytes | None = None
        if chart is not None:
            if cached_png(chart) is None:
                deferred = deferred or await self._defer(interaction, edit)
            png = await render_chart(chart)
        elif edit:
            kwargs["attachments"] = []
        if kwargs["view"] is None and not edit:
            del kwargs["view"]
        send: Callable[..., Awaitable[Any]]
        if edit:
            send = interaction.edit_original_response if deferred else interaction.response.edit_message
        elif deferred:
            send = interaction.followup.send
        else:
            send = interaction.response.send_message

        def once() -> Awaitable[Any]:  # a file is consumed by a send: each try gets its own
            parts: dict[str, Any] = {"content": None, **kwargs} if edit else dict(kwargs)
            if png is not None:
                parts["attachments" if edit else "files"] = [chart_file(png)]
            return send(**parts)

        budget = FOLLOWUP_BUDGET_S if deferred else callback_budget(interaction)
        await persist(
            once, budget, "a deferred answer" if deferred else "an answer", callback=not deferred and not edit
        )

    async def _defer(self, interaction: discord.Interaction, edit: bool) -> bool:
        if not interaction.response.is_done():
            self._hold(interaction)  # on disk before "thinking…" shows, for the next start after a crash

            async def defer() -> None:
                await interaction.response.defer(thinking=not edit)

            try:
                await persist(defer, callback_budget(interaction), "a defer", callback=True)
            except Exception as error:
                if not transient(error):
                    raise
                # past the 3 s with the defer's fate unknown (its answer cut off): follow up as if it
                # landed; if it did not, Discord refuses the follow-up (404) and the asker sees "did not respond"
                log.info("a defer's answer was lost; following up as if it landed")
            if interaction.id in self._answering:
                self._answering[interaction.id] = (interaction, True)
        return True

    async def on_ready(self) -> None:
        if self.on_state is not None:
            self.on_state("running")

    async def on_resumed(self) -> None:
        if self.on_state is not None:
            self.on_state("running")

    async def on_disconnect(self) -> None:
        if self.on_state is not None and not self.closing:
            self.on_state("reconnecting")

    def message_parts(self, reply: Reply) -> tuple[dict[str, Any], ChartSpec | None]:
        """Embeds and buttons for a reply, and the chart to attach (None when charts are off)."""
        if reply.chart is not None and not self.charts:
            reply = reply.model_copy(update={"chart": None})
        message = to_discord(reply)
        kwargs: dict[str, Any] = {
            "embeds": [discord.Embed.from_dict(e) for e in message.embeds],
            "view": self.view_for(reply, message.buttons),
        }
        if message.content:
            kwargs["content"] = message.content
        return kwargs, reply.chart

    def view_for(self, reply: Reply, buttons: tuple[tuple[str, int], ...]) -> discord.ui.View | None:
        """Follow-up buttons; a question that fits the custom_id travels in it, a longer one by key."""
        if not buttons:
            return None
        view, seen = discord.ui.View(timeout=None), set()
        for label, index in buttons:
            query = reply.actions[index].query
            short = len(f"{CARD_PREFIX}:q:{query}") <= CUSTOM_ID_MAX
            kind, data = ("q", query) if short else ("k", self.cards.put(query))
            if (kind, data) not in seen:
                seen.add((kind, data))
                view.add_item(CardButton(kind, data, label))
        return view

    async def press(self, interaction: discord.Interaction, kind: str, data: str) -> None:
        """A card button: re-answers its question into the same message, or says the card expired."""
        try:
            query = data if kind == "q" else await self.cards.fetch(data)
            if query is None:
                await apologise(interaction, "expired")
            elif (question := feel_question(query)) is not None:
                await self.feel(interaction, question)
            else:
                await self.respond(interaction, query, edit=True)
        except Exception:
            log.exception("button %s:%s failed", kind, data[:40])
            await apologise(interaction)

    # ---- feel the speed

    async def feel(self, interaction: discord.Interaction, query: str) -> None:
        """Acknowledges the press, then streams sample text into the card in the background."""
        await interaction.response.defer()
        if interaction.message is None or interaction.message.id in self._feeling:
            return
        rate = await self.service.decode_speed(query)
        if not rate:
            lang = platform_lang(str(interaction.locale))
            await interaction.followup.send(telegram_text(lang, "feel.unknown"), ephemeral=True)
            return
        self._feeling.add(interaction.message.id)
        task = asyncio.create_task(self._stream(interaction, rate), name=f"feel-{interaction.id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _stream(self, interaction: discord.Interaction, rate: float) -> None:
        """Edits the card about once a second with the sample text a decoder at ``rate`` would have written."""
        lang = platform_lang(str(interaction.locale))
        shown = f"{rate:.0f}" if rate >= 10 else f"{rate:.1f}"
        head = "⚡ " + text(lang, "feel.title", rate=shown)
        sample = text(lang, "feel.sample")
        room = MAX_CONTENT - len(head) - 120  # fences, cursor and the closing line
        try:
            frames = reveal(rate, sample, every_s=self.feel_every_s, max_s=self.feel_seconds, room=room)
            async for body, elapsed, finished in frames:
                if not finished:
                    await interaction.edit_original_response(content=f"{head}\n```\n{body}▌\n```")
                    continue
                done = text(lang, "feel.done", tokens=int(rate * elapsed), seconds=f"{elapsed:.0f}", rate=shown)
                await interaction.edit_original_response(content=f"{head}\n```\n{body}\n```\n{done}")
        except discord.HTTPException:
            log.warning("feel-the-speed edit failed", exc_info=True)
        finally:
            if interaction.message is not None:
                self._feeling.discard(interaction.message.id)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await super().close()  # type: ignore[misc]


class FitBot(FitBotMixin, commands.Bot):
    """FitBot on one gateway connection."""


class ShardedFitBot(FitBotMixin, commands.AutoShardedBot):
    """FitBot over several shards (one process, one socket per shard)."""


def intents(message_content: bool = False) -> discord.Intents:
    """Guilds, guild messages and DMs; message content is privileged and optional (mentions work without)."""
    flags = discord.Intents.none()
    flags.guilds = flags.guild_messages = flags.dm_messages = True
    flags.message_content = message_content
    return flags


def build_bot(
    service: Service,
    *,
    shards: int | None = None,
    shard_ids: list[int] | None = None,
    sync_state_path: Path | None = None,
    guild_ready_timeout: float = 2.0,
    message_content: bool = False,
    charts: bool = True,
) -> FitBot | ShardedFitBot:
    """The production bot: ``shards`` None → one connection, 0 → as many as Discord recommends, n → n;
    ``shard_ids`` → only those of the ``shards`` (the other processes run the rest).

    ``charts=False`` sends cards without their chart image (no matplotlib, no defer).
    """
    options: dict[str, Any] = {
        "command_prefix": commands.when_mentioned,
        "help_command": None,
        "tree_cls": FitTree,
        "intents": intents(message_content),
        "allowed_mentions": discord.AllowedMentions.none(),
        "guild_ready_timeout": guild_ready_timeout,
        "max_messages": None,
        "chunk_guilds_at_startup": False,
        "member_cache_flags": discord.MemberCacheFlags.none(),
    }
    bot: FitBot | ShardedFitBot
    if shards is None:
        bot = FitBot(**options)
    else:
        if shard_ids:
            options["shard_ids"] = shard_ids
        bot = ShardedFitBot(shard_count=shards or None, **options)
    bot._init_fit(service, sync_state_path, charts)
    return bot


async def run_discord(
    service: Service,
    token: str,
    *,
    shards: int | None = None,
    shard_ids: list[int] | None = None,
    sync_state_path: Path | None = None,
    message_content: bool = False,
    charts: bool = True,
    stop: asyncio.Event | None = None,
    grace_s: float = GRACE_S,
    on_state: Callable[[str], None] | None = None,
) -> None:
    """Runs the bot until ``stop`` (then drains: see ``FitBotMixin.drain``) or cancellation.

    Retries sharded when Discord closes with 4011 (sharding required); any other failure ends this
    coroutine with its exception, for the supervisor in ``bot.app.run`` to report and retry.
    """
    options: dict[str, Any] = {"sync_state_path": sync_state_path, "message_content": message_content, "charts": charts}
    bot = build_bot(service, shards=shards, shard_ids=shard_ids, **options)
    bot.on_state = on_state
    stop = stop or asyncio.Event()
    try:
        async with bot:
            runner = asyncio.create_task(bot.start(token), name="discord-client")
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait({runner, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if not runner.done():
                await bot.drain(grace_s)
                await bot.close()
            await runner
    except discord.ConnectionClosed as exc:
        if exc.code != 4011 or shards is not None:
            raise
        log.warning("Discord requires sharding; restarting with the recommended shard count")
        await run_discord(service, token, shards=0, stop=stop, grace_s=grace_s, on_state=on_state, **options)


__all__ = [
    "CardButton",
    "FitBot",
    "FitTranslator",
    "ShardedFitBot",
    "Suggester",
    "build_bot",
    "discord",  # discord.py, imported here with its audioop warning silenced (the benches use it)
    "intents",
    "run_discord",
]
