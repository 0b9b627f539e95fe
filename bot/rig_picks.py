"""Multi-GPU setups on the "which GPU do I need?" card: 2, 4 and 8 of the cards people build rigs from.

The /gpus table lists single devices; a 70B or a 671B model needs several cards, so the card adds the
smallest count of each common rig card (consumer, workstation, datacenter) that holds the model fully,
with its speed and price (the catalog's price times the count, where the catalog has one). A card
that holds the model alone gets no rig row.
"""

from __future__ import annotations

from functools import partial

from bot.question import Answering
from bot.reply import Reply, Row, Section, setup_label
from core.estimate import FitEstimate, Scenario, estimate_of, on_device
from core.fit import Verdict
from core.models import GpuSpec, ModelSpec
from locales import Lang, gib, t, tokens_per_s, usd

RIG_CARDS = ("rtx-3090", "rtx-4090", "rtx-5090", "rtx-pro-6000", "mi325x", "h200-sxm", "h100-sxm", "b200")
COUNTS = (2, 4, 8)
HOLDS = (Verdict.FITS, Verdict.TIGHT)


def with_rigs(answers: Answering, reply: Reply, model: ModelSpec, s: Scenario, lang: Lang) -> Reply:
    """The /gpus card with a section of multi-GPU setups that hold the model."""
    rows = []
    for gid in RIG_CARDS:
        gpu = answers.catalog.gpu(gid)
        if gpu is None:
            continue
        for count in (1, *COUNTS):
            key = ("rig-pick", model.id, s.quant.id, s.request.model_dump_json(exclude={"gpu_count"}), gid, str(count))
            est = answers.cached(key, partial(_estimate, s, gpu, count))
            if est.verdict in HOLDS and count == 1:
                break  # one of them holds it: no rig of that card is worth listing
            if est.verdict in HOLDS:
                price = f" · ~{usd(gpu.price_usd * count, lang, 0)}" if gpu.price_usd else ""
                value = f"{gib(est.memory.total_bytes, lang, 0)} · {tokens_per_s(est.speed.decode_tokens_per_s, lang)}{price}"
                rows.append(Row(label=setup_label(gpu.short_name, count), value=value))
                break
    if not rows:
        return reply
    section = Section(title=t(lang, "rig_picks.title"), rows=tuple(rows))
    return reply.model_copy(update={"sections": (*reply.sections, section)})


def _estimate(s: Scenario, gpu: GpuSpec, count: int) -> FitEstimate:
    return estimate_of(on_device(s, gpu, count))
