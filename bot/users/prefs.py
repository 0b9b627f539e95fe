"""Saved preferences: a user's defaults (GPU, RAM, language) and a chat's (language, mention answers).

``/mygpu``, ``/lang``, ``/settings`` and ``/forget`` change them; every question reads them first.
A locked or broken database costs the defaults, never the answer.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from bot.answers.resolve import Resolver
from bot.cards import prefs as cards
from bot.cards.resolve import unknown_gpu
from bot.reply import Action, Reply, setup_label
from bot.users.runs import RunBook
from bot.users.saved import GENERIC_PREFIX, generic_saved, saved_board
from bot.users.user import User
from catalog.lookup import sized_name
from core.models import Engine, Lang
from core.query.parse import Query
from core.speed.cpu import cpus, find_cpu
from storage.base import store_errors

if TYPE_CHECKING:
    from bot.answers.route import Answers
    from storage.prefs import PreferenceStore
    from storage.runs import StoredRun

log = logging.getLogger(__name__)
MENTION_WORDS = frozenset({"mentions", "mention", "erwähnungen", "erwaehnungen"})
CHAT_SWITCHED = {  # the answer's code (``bot.cards.prefs.prefs_card``)
    "share_runs": {True: "sharing_on", False: "sharing_off"},
    "answer_mentions": {True: "mentions_on", False: "mentions_off"},
}
SHARING_WORDS = frozenset({"sharing", "share", "teilen"})  # "/settings sharing on": pool members' runs (issue 38)
RAM_GB = (1, 2048)  # what the question parser accepts as "ram N" without a unit


class Preferences:
    """Reads and changes saved defaults; without a store or a known person (the console, an MCP client) every
    command says so."""

    def __init__(self, store: PreferenceStore | None, runs: RunBook | None = None) -> None:
        self.store = store
        self.runs = runs or RunBook(None)

    async def fill(self, user: User) -> tuple[User, Lang | None]:
        """The user with saved defaults filled in, and the chat's language if one was chosen."""
        if self.store is None or not user.id or user.anonymous:
            return user, None
        try:
            saved = await self.store.user(user.id)
            chat = await self.store.chat(user.chat) if user.chat else None
        except store_errors():  # a locked or broken database costs the defaults, not the answer
            log.warning("preferences unavailable", exc_info=True)
            return user, None
        sharing = chat is not None and chat.share_runs
        return dataclasses.replace(
            user,
            lang=user.lang or _lang(saved.lang),
            gpu_id=saved.gpu_id,
            gpu_count=saved.gpu_count,
            ram_gb=saved.ram_gb,
            context=saved.context,
            engine=Engine(saved.engine) if saved.engine else None,
            calibrations=await self.runs.calibrations(user.id),
            share_runs=sharing,
            pools=await self.runs.pools(user.chat) if sharing else (),
        ), _lang(chat.lang if chat else None)

    async def command(self, name: str, arg: str | None, q: Query, lang: Lang, user: User, answers: Answers) -> Reply:
        """/mygpu, /lang, /settings or /forget (``name``), with /lang's argument and the parsed rest."""
        if self.store is None or not user.id or user.anonymous:
            return cards.unavailable_card(lang)  # a designed limit, not a failure
        try:
            return await self._change(name, arg, q, lang, user, answers)
        except store_errors():
            log.exception("preferences could not be saved")
            return cards.storage_error_card(lang)

    async def _change(self, name: str, arg: str | None, q: Query, lang: Lang, user: User, answers: Answers) -> Reply:
        prefs = self.store
        assert prefs is not None
        if name == "forget":
            await prefs.forget(user.id)
            await self.runs.forget(user.id)
            return cards.prefs_card(lang, "forgotten")
        if name == "lang":
            choice = _lang((arg or "").lower())
            if choice is None:
                return cards.prefs_card(lang, "lang_usage")
            if user.chat and not user.is_admin:
                return _admins_only(lang)
            if user.chat:  # in a group or server the setting is the chat's default
                await prefs.set_chat(user.chat, lang=choice)
                return cards.prefs_card(choice, "chat_lang_saved")
            await prefs.set_user(user.id, lang=choice)
            return cards.prefs_card(choice, "lang_saved")
        if name == "mygpu" and ((q.gpu and q.gpu.unknown) or (q.gpu is None and q.gpu_text)):
            phrase = q.gpu.text if q.gpu else q.gpu_text  # a device the catalog lacks: never "Saved"
            return cards.refused_card(lang, "gpu_unknown", text=phrase)
        if name == "mygpu" and any(word.isdigit() for word in q.leftovers):
            # "ram 2049" or "ram 0": a number the parser would not take as RAM; saving the rest would
            # answer "Saved" while ignoring part of what was asked
            return cards.refused_card(lang, "ram_invalid", low=RAM_GB[0], high=RAM_GB[1])
        if name == "mygpu" and q.rig:  # one saved device: a mixed rig is named in each question instead
            return cards.refused_card(lang, "rig_unsaved")
        if name == "mygpu" and q.gpu and q.gpu.id:
            gpu = answers.catalog.gpu(q.gpu.id)
            assert gpu is not None
            fields: dict[str, Any] = {"gpu_id": gpu.id, "gpu_count": q.gpu_count}
            if q.ram_gb is not None:
                fields["ram_gb"] = q.ram_gb
            await prefs.set_user(user.id, **fields)
            label = setup_label(gpu.short_name, q.gpu_count)
            if q.gpu.assumed and q.gpu.choices:  # "/mygpu 3060": the 12 GB card, the 8 GB one a tap away
                others = [g for c in q.gpu.choices if (g := answers.catalog.gpu(c))]
                buttons = tuple(Action(label=sized_name(g), query=f"/mygpu {g.id}") for g in others)
                return cards.gpu_saved_card(lang, label, q.gpu.text, buttons)
            return cards.gpu_saved_card(lang, label)
        if name == "mygpu" and (unnamed := _unnamed_device(q)) is not None:
            await prefs.set_user(
                user.id, **unnamed
            )  # "/mygpu 16gb vram", "/mygpu ram 96gb", "/mygpu cpu only 64gb ram"
            return cards.device_saved_card(lang, _generic(unnamed.get("gpu_id")), unnamed.get("ram_gb"))
        if name == "mygpu" and q.gpu and (q.gpu.suggestions or q.gpu.choices):
            resolver = Resolver(answers.catalog)
            ids = q.gpu.choices or q.gpu.suggestions
            message = unknown_gpu(lang, q.gpu.text)
            return resolver.suggest(lang, message, ids, q.gpu.text, f"/mygpu {q.gpu.text}")
        if name == "mygpu" and (q.leftovers or q.model is not None):  # words that name nothing savable
            return cards.refused_card(lang, "mygpu_usage")
        for words, setting in ((SHARING_WORDS, "share_runs"), (MENTION_WORDS, "answer_mentions")):
            switch = _switch(q.leftovers, words)
            if name == "settings" and switch is not None and user.chat:  # a chat's shared setting: its admins'
                if not user.is_admin:
                    return _admins_only(lang)
                if setting == "share_runs":
                    await prefs.set_chat(user.chat, share_runs=switch)
                else:
                    await prefs.set_chat(user.chat, answer_mentions=switch)
                return cards.prefs_card(lang, CHAT_SWITCHED[setting][switch])
        saved = await prefs.user(user.id)
        gpu = answers.catalog.gpu(saved.gpu_id) if saved.gpu_id else None
        setup = setup_label(gpu.short_name, saved.gpu_count) if gpu else None
        runs = [_run_row(r, answers) for r in await self.runs.runs(user.id)]
        return cards.saved_settings_card(lang, setup, _generic(saved.gpu_id), saved.ram_gb, saved.lang, runs)

    async def answers_mentions(self, chat: str) -> bool:
        """Whether plain mentions in this group/server get answers (commands always do)."""
        if not chat or self.store is None:
            return True
        try:
            return (await self.store.chat(chat)).answer_mentions
        except store_errors():
            return True


def _run_row(r: StoredRun, answers: Answers) -> tuple[str, str, str, str, str, str, float, float]:
    """A stored run as /mygpu lists it, with the catalog's names."""
    gpu, model = answers.catalog.gpu(r.gpu_id), answers.catalog.model(r.model_id)
    device = setup_label(gpu.short_name if gpu else r.gpu_id, r.gpu_count)
    factor = r.measured / r.estimated if r.estimated > 0 else 0.0
    name = model.name if model else r.model_id
    return r.added_at[:10], device, r.backend, name, r.quant, r.test, r.measured, factor


def _unnamed_device(q: Query) -> dict[str, Any] | None:
    """What "/mygpu" saves when no catalog device is named: a GPU by its VRAM, CPU only, or only the RAM."""
    if q.gpu is not None or q.gpu_text:
        return None
    fields: dict[str, Any] = {}
    if q.device_kind == "cpu":
        named = find_cpu(q.board) if q.board else None  # "/mygpu epyc 9654": its row, kept after a colon
        fields.update(gpu_id=f"{GENERIC_PREFIX}cpu-0" + (f":{named.id}" if named else ""), gpu_count=1)
    elif q.device_kind is not None and q.device_memory_gib:
        fields.update(gpu_id=f"{GENERIC_PREFIX}{q.device_kind}-{q.device_memory_gib:g}", gpu_count=q.gpu_count)
    if q.ram_gb is not None:
        fields["ram_gb"] = q.ram_gb
    return fields or None


def _generic(gpu_id: str | None) -> cards.Generic | None:
    """A device saved by its memory: its kind, memory and the named CPU's name (None where it names none)."""
    generic = generic_saved(gpu_id)
    if not generic:
        return None
    named = cpus().get(saved_board(gpu_id))
    kind, memory = generic
    return kind, memory, named.name if named else None


def _admins_only(lang: Lang) -> Reply:
    """Shared chat settings belong to the chat's admins; everyone else hears so in their language."""
    return cards.refused_card(lang, "admins_only")


def _switch(words: tuple[str, ...], names: frozenset[str]) -> bool | None:
    """ "/settings mentions off" (or "erwähnungen aus") → False; "sharing on"/"teilen an" → True; else None.

    The parser drops short words like "an", so a switch named without an "off" word means on.
    """
    if not names & set(words):
        return None
    return not {"off", "aus", "no", "nein"} & set(words)


def _lang(code: str | None) -> Lang | None:
    return code if code in ("de", "en") else None  # type: ignore[return-value]
