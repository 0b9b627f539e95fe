"""The words of the settings answers (``bot.users.prefs``): saved, refused, unavailable, and the /settings card."""

from __future__ import annotations

from collections.abc import Sequence

from bot.cards.notices import error_card, info_card, notice_card, settings_card
from bot.cards.runs import mine_section
from bot.reply import Action, Reply, Tone
from core.models import Lang
from locales import t

# a device saved by its memory: (kind, memory in GB, the named CPU's name or None) (``bot.users.saved``)
Generic = tuple[str, float, str | None]


def unavailable_card(lang: Lang) -> Reply:
    """No store or no known person (the console, an MCP client): a designed limit, not a failure."""
    return notice_card(lang, t(lang, "prefs.unavailable"))


def storage_error_card(lang: Lang) -> Reply:
    return error_card(lang, t(lang, "prefs.storage_error"))


def prefs_card(lang: Lang, code: str, **values: object) -> Reply:
    """A change made (or how to make one), said by its code (``prefs.<code>`` in locales/)."""
    return info_card(lang, t(lang, "prefs.title"), t(lang, f"prefs.{code}", **values))


def refused_card(lang: Lang, code: str, **values: object) -> Reply:
    """A settings change that was not made, and why (under the settings title, not an error's)."""
    message = t(lang, f"prefs.{code}", **values)
    return Reply(kind="settings", locale=lang, title=t(lang, "prefs.title"), tone=Tone.WARN, summary=message)


def gpu_saved_card(lang: Lang, setup: str, assumed: str | None = None, others: Sequence[Action] = ()) -> Reply:
    """The saved GPU; where the name was ``assumed`` to mean one of several cards, the ``others`` as buttons."""
    message = t(lang, "prefs.gpu_saved", gpu=setup)
    if assumed is None:
        return info_card(lang, t(lang, "prefs.title"), message)
    message += " " + t(lang, "prefs.gpu_assumed", text=assumed, others=", ".join(a.label for a in others))
    return info_card(lang, t(lang, "prefs.title"), message).model_copy(update={"actions": tuple(others)})


def device_saved_card(lang: Lang, generic: Generic | None, ram_gb: float | None) -> Reply:
    """A device saved by its memory, a CPU, or only the RAM size."""
    parts = []
    if generic is not None:
        parts.append(generic_label(generic, lang))
    if ram_gb is not None:
        parts.append(t(lang, "prefs.ram_value", ram=f"{ram_gb:g}"))
    return info_card(lang, t(lang, "prefs.title"), t(lang, "prefs.saved", what=", ".join(parts)))


def generic_label(generic: Generic | None, lang: Lang) -> str:
    if generic is None:
        return "–"
    kind, memory, cpu = generic
    if cpu:
        return t(lang, "prefs.named_cpu", cpu=cpu)
    return t(lang, f"prefs.generic_{kind}", memory=f"{memory:g}")


def saved_settings_card(
    lang: Lang,
    setup: str | None,
    generic: Generic | None,
    ram_gb: float | None,
    saved_lang: str | None,
    runs: list[tuple[str, str, str, str, str, str, float, float]],
) -> Reply:
    """/settings: the saved device (a catalog ``setup`` or a ``generic`` one), RAM and language, and the user's
    runs (``bot.cards.runs.mine_section``)."""
    rows = {
        "prefs.gpu": setup if setup is not None else generic_label(generic, lang),
        "prefs.ram": f"{ram_gb:g} GB" if ram_gb else "–",
        "prefs.lang": saved_lang or "–",
    }
    card = settings_card(lang, {t(lang, k): v for k, v in rows.items()})
    mine = mine_section(runs, lang)
    return card if mine is None else card.model_copy(update={"sections": (*card.sections, mine)})
