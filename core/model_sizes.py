"""A model named only by its size ("ein 8b modell", "a 70b", "which gpu for a 32b model"): the catalog
models of that size, the one the question is answered for first.

Models of one size need about the same memory, so the answer is given for one of them and says so; the
others are offered. The first is the most downloaded general chat model (instruct or thinking, not a coder,
vision or distilled variant) whose name states that size; a name's size wins over the parameter count
("Gemma 4 31B" is no 32B model), and a stated active size ("30b-a3b") asks for a mixture of experts.
"""

from __future__ import annotations

from core.models import Catalog, ModelSpec
from core.query import names as N
from core.recommend import tags_of

NOT_CHAT = frozenset({"base", "safety", "embedding", "reward"})  # variants nobody chats with
GENERAL = frozenset({"", "instruct", "thinking", "chat"})  # the variants a bare size means
STATED = 0.02  # a typed size against the size a model's name states ("8B")
COUNTED = 0.05  # against the parameter count of a model whose name states none
OFFERED = 4  # models of the size a card offers besides the one it answers for


def _sizes(model: ModelSpec) -> tuple[float | None, float | None]:
    """The total and active sizes a model's name states (billions), None where it states none."""
    said = N.typed(f"{model.name} {model.id}")
    return said.size_b, said.active_b


def _near(typed: float, size: float, share: float) -> bool:
    return abs(typed - size) <= share * size + 0.01


def _fits(model: ModelSpec, size_b: float, active_b: float | None) -> tuple[bool, bool]:
    """(whether the model is of the typed size, whether its name says so)."""
    total, active = _sizes(model)
    if total is not None and not _near(total, model.total_params / 1e9, 0.5):
        total = active = None  # "Llama 4 Scout 17B-16E": a MoE named by its active size is no 17B model
    stated = total is not None
    same = _near(size_b, total, STATED) if total is not None else _near(size_b, model.total_params / 1e9, COUNTED)
    if active_b is not None:
        moe_active = active if active is not None else model.active_params / 1e9
        same = same and model.is_moe and _near(active_b, moe_active, STATED if active is not None else COUNTED)
    return same, stated


def of_size(
    catalog: Catalog, size_b: float, active_b: float | None = None, kind: str | None = None
) -> tuple[ModelSpec, ...]:
    """The catalog's chat models of ``size_b`` billion parameters (``active_b`` active, when stated), the
    likeliest meant first; empty when the catalog has none of that size. ``kind`` (coding, reasoning,
    vision: "an 8b coding model") puts the models of that kind first."""
    ranked: list[tuple[tuple[bool, bool, bool, int, str], ModelSpec]] = []
    for m in catalog.models:
        same, stated = _fits(m, size_b, active_b)
        if same and m.variant not in NOT_CHAT:
            other = kind is not None and kind not in tags_of(m)
            general = m.variant in GENERAL or (kind is not None and not other)
            ranked.append(((not stated, other, not general, -(m.hf_downloads or 0), m.id), m))
    return tuple(m for _, m in sorted(ranked, key=lambda r: r[0]))
