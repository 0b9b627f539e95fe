"""The answer to "what's the biggest model I can run on X?" / "größtes Modell für X".

The same candidates as ``/models`` (``core.recommend.rank_models``: each model with the quant a
practitioner would run, MoE models with their experts in RAM when they stay usable), kept only at a
reading speed people accept and at 3 bits per weight or more, and ranked by total parameters: the
biggest first, with its speed.
"""

from __future__ import annotations

from bot.cards.biggest import biggest_card
from bot.cards.launch import checkpoints
from bot.question import Answering
from bot.reply import Reply, setup_label
from core.estimate import DEFAULT_CONTEXT, Request
from core.models import GpuSpec, Lang
from core.quants.ladder import LOW_BITS
from core.recommend import MIN_OFFLOAD_TOKENS_PER_S, rank_models

ACCEPTABLE_TOKENS_PER_S = MIN_OFFLOAD_TOKENS_PER_S  # the reading speed below which a model is not "runnable"
# below 3 bits per weight a model "runs" only in name (core.quants.ladder.LOW_BITS): a 358B at 1.75 bits is not
# the biggest model one can run, it is a damaged one
LIST_TOP = 10


def biggest_models(answers: Answering, gpu: GpuSpec, count: int, request: Request, lang: Lang, echo: str = "") -> Reply:
    """The models that run acceptably on ``count`` x ``gpu``, biggest (total parameters) first."""
    req = request.model_copy(update={"gpu_count": count})
    picks = answers.cached(
        ("rank", gpu.model_dump_json(), req.model_dump_json(), "None"),  # the /models scan, shared
        lambda: rank_models(answers.catalog, gpu, req, None, checkpoints=checkpoints()),
    )
    runs = sorted(
        (p for p in picks if p.decode_tokens_per_s >= ACCEPTABLE_TOKENS_PER_S and _bits(answers, p.quant) >= LOW_BITS),
        key=lambda p: (-p.total_params, -p.decode_tokens_per_s),
    )
    setup = setup_label(gpu.short_name, count)
    context = request.context or DEFAULT_CONTEXT
    return biggest_card(setup, context, runs[:LIST_TOP], ACCEPTABLE_TOKENS_PER_S, answers.catalog, lang, echo=echo)


def _bits(answers: Answering, quant_id: str) -> float:
    quant = answers.catalog.quant(quant_id)
    return quant.bits if quant else 4.0
