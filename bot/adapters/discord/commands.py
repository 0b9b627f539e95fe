"""Discord's side of the questions: slash commands with typed options, autocomplete from the
service's name matcher, and the German names and descriptions (``bot.cards.menu``)."""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import aiohttp

with warnings.catch_warnings():  # discord.py's voice module imports audioop (deprecated, unused here)
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord
    from discord import app_commands
    from discord.app_commands import locale_str
    from discord.ext import commands

from bot.cards.menu import discord_text, platform_lang
from bot.commands import context_part, kv_part, question, ram_part
from bot.reply import Lang, setup_label
from bot.service import ENGINE_CHOICES, KV_CACHE_CHOICES, QUANT_CHOICES, Service

log = logging.getLogger("bot.adapters.discord.bot")

AUTOCOMPLETE_MAX = 25
CHOICE_NAME_MAX = 100
GPU_COUNTS = (2, 4)
_COUNT = re.compile(r"^\s*(\d{1,2})\s*[x×]\s*(.*)$", re.IGNORECASE)


# --------------------------------------------------------------------------------------------- strings


def text(lang: Lang, key: str, **params: object) -> str:
    """A Discord-adapter string from the ``[discord]`` table of locales/."""
    return discord_text(lang, key, **params)


def _T(key: str) -> locale_str:
    """An English command string that the translator can localize by ``key``."""
    return locale_str(text("en", key), key=key)


class FitTranslator(app_commands.Translator):
    """Feeds German command names and descriptions to Discord; everything else stays English."""

    async def translate(self, string: locale_str, locale: discord.Locale, context: Any) -> str | None:
        key = string.extras.get("key")
        if key is None or locale is not discord.Locale.german:
            return None
        return text("de", key)


# --------------------------------------------------------------------------------------------- autocomplete


class Suggester:
    """Autocomplete choices from the service's name matcher; a typed count ("2x 30") carries over."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def models_for(self, typed: str) -> list[app_commands.Choice[str]]:
        ranked = self.service.complete("model", typed[:CHOICE_NAME_MAX], AUTOCOMPLETE_MAX)
        return [app_commands.Choice(name=label[:CHOICE_NAME_MAX], value=value) for value, label in ranked]

    def gpus_for(self, typed: str) -> list[app_commands.Choice[str]]:
        """GPUs; with a typed count ("2x 30") every choice carries it, else the best match also comes as 2x/4x."""
        match = _COUNT.match(typed)
        count, rest = (int(match.group(1)), match.group(2)) if match else (1, typed)
        ranked = self.service.complete("gpu", rest[:CHOICE_NAME_MAX], AUTOCOMPLETE_MAX)
        pairs = [(count, item) for item in ranked]
        if count == 1 and ranked:  # the best match in 2x and 4x right after it; more variants if room is left
            top, others = ranked[0], ranked[1:]
            spare = max(AUTOCOMPLETE_MAX - 1 - len(GPU_COUNTS) - len(others), 0)
            more = [(n, item) for item in others for n in GPU_COUNTS][:spare]
            pairs = [(1, top), *((n, top) for n in GPU_COUNTS), *((1, item) for item in others), *more]
        out = []
        for n, (value, label) in pairs[:AUTOCOMPLETE_MAX]:
            name = setup_label(label, n)
            out.append(app_commands.Choice(name=name[:CHOICE_NAME_MAX], value=setup_label(value, n)))
        return out


@runtime_checkable
class CommandsBot(Protocol):
    """What commands, autocomplete and card buttons need of the bot they serve (``discord_bot.FitBotMixin``,
    which imports this module)."""

    suggester: Suggester

    async def respond(self, interaction: discord.Interaction, query: str, *, edit: bool = False) -> None: ...

    async def press(self, interaction: discord.Interaction, kind: str, data: str) -> None: ...


def fit_client(interaction: discord.Interaction) -> CommandsBot:
    """The bot an interaction came to: always one of ours (``FitBot`` or ``ShardedFitBot``)."""
    client = interaction.client
    assert isinstance(client, CommandsBot), client
    return client


async def complete_model(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return fit_client(interaction).suggester.models_for(current)


async def complete_gpu(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
    return fit_client(interaction).suggester.gpus_for(current)


# --------------------------------------------------------------------------------------------- commands

_QUANTS = [app_commands.Choice(name=q, value=q) for q in QUANT_CHOICES]
_KVS = [app_commands.Choice(name=k, value=k) for k in KV_CACHE_CHOICES]
_ENGINES = [app_commands.Choice(name=e, value=e) for e in ENGINE_CHOICES]
_METHODS = [app_commands.Choice(name=m, value=m.lower()) for m in ("QLoRA", "LoRA", "Full")]
_LANGS = [app_commands.Choice(name=n, value=v) for n, v in (("Deutsch", "de"), ("English", "en"))]
_SWITCH = [app_commands.Choice(name=n, value=n) for n in ("on", "off")]
Context = app_commands.Range[int, 512, 2_097_152]
RamGb = app_commands.Range[int, 1, 4096]

_RENAME = {
    name: _T(f"opt.{name}")
    for name in ("model", "gpu", "gpu2", "context", "quant", "kv", "ram", "engine", "method", "language", "mentions")
}
_DESCRIBE = {name: _T(f"opt.{name}.desc") for name in _RENAME}


def _options(*names: str) -> Callable[[Any], Any]:
    """Localized names and descriptions for the given options (one decorator for all commands)."""

    def wrap(func: Any) -> Any:
        func = app_commands.rename(**{n: _RENAME[n] for n in names})(func)
        return app_commands.describe(**{n: _DESCRIBE[n] for n in names})(func)

    return wrap


class FitCommands(commands.Cog):
    """The slash commands; each builds a question and hands it to the bot's one answer path."""

    def __init__(self, bot: CommandsBot) -> None:
        self.bot = bot

    @app_commands.command(name=_T("cmd.fit"), description=_T("cmd.fit.desc"))
    @_options("model", "gpu", "context", "quant", "kv", "ram", "engine")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu)
    @app_commands.choices(quant=_QUANTS, kv=_KVS, engine=_ENGINES)
    async def fit(
        self,
        interaction: discord.Interaction,
        model: str,
        gpu: str,
        context: Context | None = None,
        quant: str | None = None,
        kv: str | None = None,
        ram: RamGb | None = None,
        engine: str | None = None,
    ) -> None:
        asked = question("fit", model, gpu, context_part(context), quant, kv_part(kv), ram_part(ram), engine)
        await self.bot.respond(interaction, asked)

    @app_commands.command(name=_T("cmd.speed"), description=_T("cmd.speed.desc"))
    @_options("model", "gpu", "context", "quant", "engine")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu)
    @app_commands.choices(quant=_QUANTS, engine=_ENGINES)
    async def speed(
        self,
        interaction: discord.Interaction,
        model: str,
        gpu: str,
        context: Context | None = None,
        quant: str | None = None,
        engine: str | None = None,
    ) -> None:
        await self.bot.respond(interaction, question("speed", model, gpu, context_part(context), quant, engine))

    @app_commands.command(name=_T("cmd.cloud"), description=_T("cmd.cloud.desc"))
    @_options("model", "context", "quant")
    @app_commands.autocomplete(model=complete_model)
    @app_commands.choices(quant=_QUANTS)
    async def cloud(
        self, interaction: discord.Interaction, model: str, context: Context | None = None, quant: str | None = None
    ) -> None:
        await self.bot.respond(interaction, question("cloud", model, context_part(context), quant))

    @app_commands.command(name=_T("cmd.quant"), description=_T("cmd.quant.desc"))
    @_options("model", "gpu", "context", "kv", "engine")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu)
    @app_commands.choices(kv=_KVS, engine=_ENGINES)
    async def quant(
        self,
        interaction: discord.Interaction,
        model: str,
        gpu: str,
        context: Context | None = None,
        kv: str | None = None,
        engine: str | None = None,
    ) -> None:
        await self.bot.respond(interaction, question("quant", model, gpu, context_part(context), kv_part(kv), engine))

    @app_commands.command(name=_T("cmd.gpus"), description=_T("cmd.gpus.desc"))
    @_options("model", "quant")
    @app_commands.autocomplete(model=complete_model)
    @app_commands.choices(quant=_QUANTS)
    async def gpus(self, interaction: discord.Interaction, model: str, quant: str | None = None) -> None:
        await self.bot.respond(interaction, question("gpus", model, quant))

    @app_commands.command(name=_T("cmd.models"), description=_T("cmd.models.desc"))
    @_options("gpu", "context", "quant")
    @app_commands.autocomplete(gpu=complete_gpu)
    @app_commands.choices(quant=_QUANTS)
    async def models(
        self, interaction: discord.Interaction, gpu: str, context: Context | None = None, quant: str | None = None
    ) -> None:
        await self.bot.respond(interaction, question("models", gpu, context_part(context), quant))

    @app_commands.command(name=_T("cmd.finetune"), description=_T("cmd.finetune.desc"))
    @_options("model", "gpu", "method")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu)
    @app_commands.choices(method=_METHODS)
    async def finetune(self, interaction: discord.Interaction, model: str, gpu: str, method: str | None = None) -> None:
        await self.bot.respond(interaction, question("finetune", model, gpu, method))

    @app_commands.command(name=_T("cmd.tco"), description=_T("cmd.tco.desc"))
    @_options("model", "gpu")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu)
    async def tco(self, interaction: discord.Interaction, model: str, gpu: str) -> None:
        await self.bot.respond(interaction, question("tco", model, gpu))

    @app_commands.command(name=_T("cmd.compare"), description=_T("cmd.compare.desc"))
    @_options("model", "gpu", "gpu2")
    @app_commands.autocomplete(model=complete_model, gpu=complete_gpu, gpu2=complete_gpu)
    async def compare(self, interaction: discord.Interaction, model: str, gpu: str, gpu2: str) -> None:
        await self.bot.respond(interaction, question("compare", gpu, "vs", gpu2, model))

    @app_commands.command(name=_T("cmd.mygpu"), description=_T("cmd.mygpu.desc"))
    @_options("gpu", "ram")
    @app_commands.autocomplete(gpu=complete_gpu)
    async def mygpu(self, interaction: discord.Interaction, gpu: str, ram: RamGb | None = None) -> None:
        await self.bot.respond(interaction, question("mygpu", gpu, ram_part(ram)))

    @app_commands.command(name=_T("cmd.lang"), description=_T("cmd.lang.desc"))
    @app_commands.default_permissions(manage_guild=True)  # on a server it sets the server's language
    @_options("language")
    @app_commands.choices(language=_LANGS)
    async def lang(self, interaction: discord.Interaction, language: str) -> None:
        await self.bot.respond(interaction, question("lang", language))

    @app_commands.command(name=_T("cmd.settings"), description=_T("cmd.settings.desc"))
    @app_commands.default_permissions(manage_guild=True)
    @_options("mentions")
    @app_commands.choices(mentions=_SWITCH)
    async def settings(self, interaction: discord.Interaction, mentions: str | None = None) -> None:
        await self.bot.respond(interaction, question("settings", f"mentions {mentions}" if mentions else None))

    @app_commands.command(name=_T("cmd.forget"), description=_T("cmd.forget.desc"))
    async def forget(self, interaction: discord.Interaction) -> None:
        await self.bot.respond(interaction, "/forget")

    @app_commands.command(name=_T("cmd.help"), description=_T("cmd.help.desc"))
    async def help(self, interaction: discord.Interaction) -> None:
        await self.bot.respond(interaction, "/help")


class FitTree(app_commands.CommandTree):
    """The command tree; its error handler logs first, then apologises in the user's language."""

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        log.error("command %s failed", getattr(interaction.command, "name", "?"), exc_info=error)
        await apologise(interaction)


async def apologise(interaction: discord.Interaction, key: str = "error") -> None:
    """An ephemeral message in the user's language; never raises."""
    message = text(platform_lang(str(interaction.locale)), key)
    try:
        if interaction.type is discord.InteractionType.autocomplete:
            return
        if interaction.response.is_done():
            await interaction.followup.send(message, ephemeral=True)
        else:
            await interaction.response.send_message(message, ephemeral=True)
    except (discord.HTTPException, OSError, aiohttp.ClientError):  # OSError, ClientError: Discord unreachable
        log.warning("could not send the apology for interaction %s", interaction.id, exc_info=True)
