"""Multi-GPU setups on the "which GPU do I need?" card: 2, 4 and 8 of the cards people build rigs from.

The /gpus table lists single devices; a 70B or a 671B model needs several cards, so the card adds the
smallest count of each common rig card (consumer, workstation, datacenter) that holds the model fully,
with its speed and price (the catalog's price times the count, where the catalog has one). A card
that holds the model alone gets no rig row.
"""

from __future__ import annotations

from functools import partial

from bot.cards.rig_picks import with_rig_picks
from bot.question import Answering
from bot.reply import Reply
from core.estimate import Scenario, hardware_on
from core.fit import full_fit
from core.launch.vllm_hardware import engine_runs
from core.models import GpuSpec, Lang, ModelSpec
from core.speed.serving import single_stream

RIG_CARDS = ("rtx-3090", "rtx-4090", "rtx-5090", "rtx-pro-6000", "mi325x", "h200-sxm", "h100-sxm", "b200")
COUNTS = (2, 4, 8)


def with_rigs(answers: Answering, reply: Reply, model: ModelSpec, s: Scenario, lang: Lang) -> Reply:
    """The /gpus card with a section of multi-GPU setups that hold the model."""
    rigs: list[tuple[GpuSpec, int, int, float]] = []
    for gid in RIG_CARDS:
        gpu = answers.catalog.gpu(gid)
        if gpu is None or not engine_runs(s.engine, s.quant.id, gpu):
            continue
        key = ("rig-pick", model.id, s.quant.id, s.request.model_dump_json(exclude={"gpu_count"}), gid)
        rig = answers.cached(key, partial(smallest_rig, s, gpu))
        if rig is not None:
            rigs.append((gpu, *rig))
    return with_rig_picks(reply, rigs, lang)


def smallest_rig(s: Scenario, gpu: GpuSpec) -> tuple[int, int, float] | None:
    """(count, GPU memory it needs, single-stream tok/s) of the smallest rig of ``gpu`` in ``COUNTS`` that
    holds the model fully; None when one card holds it (no rig worth listing) or no rig does.

    The scenario on the rig (what ``estimate_of(on_device(s, gpu, count))`` places: the same workload and
    RAM) judged on plain numbers (``fit.full_fit``) and timed only where it holds, as that estimate is."""
    for count in (1, *COUNTS):
        hardware = hardware_on(s, gpu, count)
        fit = full_fit(s.model, s.quant, hardware, s.workload, s.measured)
        if fit is not None:
            if count == 1:
                return None
            return count, fit.total_bytes, single_stream(s.model, fit, hardware, s.workload, s.quant.id)
    return None
