"""What else a question asks for besides its card, read once with the rest of the question.

The cards used to search the message for these words themselves (the details page, Ollama's command,
the image size, a draft's size...); the parser now reads them into ``Query.asks``, and nothing after it
reads the message for meaning.
"""

from __future__ import annotations

import re

from core.models import Frozen

# Words that ask for another page of the same answer, or a figure of it.
DETAILS_WORDS = frozenset({"details", "detail", "mehr-details", "+details"})
MORE_WORDS = frozenset({"more", "mehr", "all", "alle", "+more"})
MONTHLY_WORDS = frozenset({"monthly", "month", "monat", "monatlich", "monthly?", "monat?", "/month", "/monat"})
FILTER_WORDS = {
    "coding": frozenset({"coding", "code", "coder", "programming", "programmieren", "programmierung"}),
    "reasoning": frozenset({"reasoning", "reason", "thinking", "denken", "logik", "mathe", "math"}),
    "vision": frozenset({"vision", "image", "images", "bild", "bilder", "multimodal", "vl"}),
    "small": frozenset({"small", "fast", "klein", "kleines", "schnell", "schnelles", "tiny", "light"}),
    "newest": frozenset({"newest", "latest", "neueste", "neuestes", "neuesten", "aktuellste", "aktuellstes", "neues"}),
}
# engines and tools a question names for its launch command (bot.cards.launch)
_OLLAMA = re.compile(r"\bollama\b", re.I)
_LM_STUDIO = re.compile(r"\blm[ -]?studio\b", re.I)
_AUTO_FIT = re.compile(r"--fit\b|\bauto[ -]?fit\b|\bfit on\b|\bautomatic\b|\bautomatisch\b", re.I)
# images (bot.cards.vision)
_IMAGES = re.compile(r"\b(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?|vision)\b", re.I)
_IMAGE_COUNT = re.compile(r"\b(\d{1,3})\s*(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?)\b", re.I)
_IMAGE_SIZE = re.compile(r"\b(\d{3,4})\s*[x×]\s*(\d{3,4})\b")
_IMAGE_SIDE = re.compile(r"\b(\d{3,4})\s*(?:px|pixels?|pixeln?)\b", re.I)
MAX_IMAGES = 64
MAX_SIDE = 8192
# speculative decoding (bot.cards.speculative): a head named, a draft named by its size only
MTP_HEAD = re.compile(r"\b(?:mtp|multi[- ]token(?:[- ]prediction)?|nextn)\b", re.I)
EAGLE_HEAD = re.compile(r"\beagle[- ]?3?\b", re.I)
_DRAFT_SIZE = re.compile(  # the size next to the draft word: "a 0.6b draft", "einem 0.6b Draft", "draft of 1.7b"
    r"(\d+(?:\.\d+)?)\s*b[- ]+(?:draft|entwurf)|\b(?:draft|entwurf)\w*\s+(?:model\s+|modell\s+)?"
    r"(?:of\s+|von\s+|mit\s+)?(\d+(?:\.\d+)?)\s*b\b",
    re.I,
)


class Asks(Frozen):
    """The asks of one question besides its card kind."""

    details: bool = False  # the details page
    more: bool = False  # the whole list
    monthly: bool = False  # a monthly figure
    model_filter: str | None = None  # a kind of model ("coding", "vision", "newest", ...): ``FILTER_WORDS``
    ollama: bool = False  # Ollama's command first
    lm_studio: bool = False  # LM Studio's settings first
    auto_fit: bool = False  # llama.cpp's ``--fit``
    images: bool = False  # images in the prompt
    image_count: int = 1
    image_size: tuple[int, int] | None = None  # as asked ("1920x1080", "768 px"); None: the model's default
    mtp: bool = False  # an MTP head named
    eagle: bool = False  # an EAGLE head named
    draft_b: float | None = None  # a draft named by its size only ("a 0.6b draft"), billions


def read_asks(text: str, leftovers: tuple[str, ...] = ()) -> Asks:
    """The asks in a question's text (``leftovers``: the words the parser did not place)."""
    words = {w.strip(".,!?;:()").lower() for w in text.split()} | {w.lower() for w in leftovers}
    count = _IMAGE_COUNT.search(text)
    draft = _DRAFT_SIZE.search(text)
    return Asks(
        details=bool(words & DETAILS_WORDS),
        more=bool(words & MORE_WORDS),
        monthly=bool(words & MONTHLY_WORDS),
        model_filter=next((name for name, vocab in FILTER_WORDS.items() if words & vocab), None),
        ollama=bool(_OLLAMA.search(text)),
        lm_studio=bool(_LM_STUDIO.search(text)),
        auto_fit=bool(_AUTO_FIT.search(text)),
        images=bool(_IMAGES.search(text)),
        image_count=min(int(count.group(1)), MAX_IMAGES) if count else 1,
        image_size=_image_size(text),
        mtp=bool(MTP_HEAD.search(text)),
        eagle=bool(EAGLE_HEAD.search(text)),
        draft_b=float(draft.group(1) or draft.group(2)) if draft else None,
    )


def _image_size(text: str) -> tuple[int, int] | None:
    if (m := _IMAGE_SIZE.search(text)) and max(int(m[1]), int(m[2])) <= MAX_SIDE:
        return int(m[1]), int(m[2])
    if (m := _IMAGE_SIDE.search(text)) and int(m[1]) <= MAX_SIDE:
        return int(m[1]), int(m[1])
    return None


__all__ = ["EAGLE_HEAD", "FILTER_WORDS", "MTP_HEAD", "Asks", "read_asks"]
