"""The words of asking back (``bot.answers.resolve``): which model or device a name meant, what is missing, and
that a name is unknown. Each returns the sentence the ask-back card (``bot.cards.notices.ask_card``) shows."""

from __future__ import annotations

from typing import Literal

from core.models import Lang
from core.notes import NoteValue
from locales import num, t

Missing = Literal["model", "gpu", "gpu_models", "cpu_ram", "vram"]
MISSING_KEYS: dict[Missing, str] = {
    "model": "ask.model_missing",
    "gpu": "ask.gpu_missing",
    "gpu_models": "ask.gpu_missing_models",
    "cpu_ram": "resolve.cpu_ram_missing",
    "vram": "resolve.vram_missing",
}


def which(lang: Lang, what: Literal["model", "memory", "device"], text: str) -> str:
    """ "Which X did you mean?" for a name with several readings (models, memory sizes, devices)."""
    return t(lang, f"resolve.which_{what}", text=text)


def which_related(lang: Lang, text: str, model: str, repo: str) -> str:
    """A typed name that names a catalog model and an unversioned repo alike."""
    return t(lang, "resolve.which_related", text=text, model=model, repo=repo)


def unknown_model(lang: Lang, phrase: str) -> str:
    """ "I don't know X", and that a Hugging Face repo id can be pasted."""
    return t(lang, "resolve.unknown_model", text=phrase) + " " + t(lang, "resolve.paste_repo")


def unknown_device(lang: Lang, phrase: str) -> str:
    return t(lang, "resolve.unknown_device", text=phrase)


def unknown_gpu(lang: Lang, phrase: str) -> str:
    return t(lang, "ask.unknown_gpu", text=phrase)


def not_a_device(lang: Lang, name: str, note: str, covered: bool) -> str:
    """A name that is no device the bot estimates; ``covered``: a kind of device asked about by its memory."""
    return t(lang, "ask.not_covered", note=note) if covered else t(lang, "ask.not_a_device", name=name, note=note)


def missing(lang: Lang, what: Missing, model: str = "") -> str:
    """What the question lacks: the model, the device (for ``model``, or for a model list), the RAM of a CPU or
    the memory of a device."""
    return t(lang, MISSING_KEYS[what], model=model) if what == "gpu" else t(lang, MISSING_KEYS[what])


def cpu_ram_missing(lang: Lang, figures: dict[str, NoteValue], bandwidth: float) -> str:
    """A named CPU without its RAM size: its cores, memory channels and their peak bandwidth said."""
    return t(lang, "resolve.cpu_ram_missing_named", **{**figures, "bandwidth": num(bandwidth, lang, 1)})
