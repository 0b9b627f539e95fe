"""A model the offline index knows only by its parameter count (Command-R, DeepSeek-V2.5, ...).

Without its architecture neither the KV cache nor the speed can be estimated, but the weights can:
a quant's bits per weight times the parameter count (``weights = params x bpw / 8``, the recipe's
dense bits; routed experts take the same bits in the plain llama.cpp quants). The card says what
the weights need at the usual quants against the device's memory, and that nothing else is known:
KV cache, buffers and speed need the config (paste the repo id when the bot is online).
"""

from __future__ import annotations

from bot.cards.memory_only import memory_only_reply
from bot.question import Answering, Ask, AskBack
from bot.reply import Reply, Subject, setup_label
from bot.users.user import User
from catalog.extra_facts import sized_models
from catalog.hub.index import HfIndexRow
from core.memory import unified_fraction
from core.models import GIB, GpuSpec, Lang, ModelSpec, SizedModel
from core.notes import Note
from core.query.parse import Query

QUANTS = ("Q8_0", "Q6_K", "Q4_K_M", "IQ3_XXS", "Q2_K")
HEADROOM = 0.9  # weights that fill more than 90 % leave no room for the KV cache and buffers


def weights_bytes(params: int, bpw: float) -> int:
    return round(params * bpw / 8)


def sized_model(q: Query) -> SizedModel | None:
    """The model a question names when the catalog knows it by its stated size only (``memory_only.toml``): by
    name, or by its repo id ("thinkingmachines/Inkling-Small")."""
    model_id = q.model.id if q.model is not None else None
    repo = (q.hf_repo or "").lower()
    return next((s for s in sized_models() if s.id == model_id or (repo and s.hf_repo.lower() == repo)), None)


def stated_row(model: SizedModel) -> HfIndexRow:
    """A size-only model as the offline index would hold it (its repo, the stated counts)."""
    return HfIndexRow(repo=model.hf_repo, params=model.total_params, active_params=model.active_params)


def memory_only_card(
    answers: Answering, row: HfIndexRow, q: Query, lang: Lang, user: User, echo: str, stated: SizedModel | None = None
) -> Reply:
    """Weights per quant against the device's memory; marked as memory only, from the offline index or (``stated``)
    from the parameter count its publisher states."""

    model_id, name = (stated.id, stated.name) if stated else (row.repo, row.repo.split("/")[-1])
    stub = ModelSpec.model_construct(id=model_id, name=name)  # for the device question only
    ask = Ask(q, lang, user, echo)
    try:
        gpu, count = answers.device(ask, stub)
    except AskBack as back:
        return back.reply
    usable = usable_bytes(gpu, count)
    rows = []
    for qid in (q.quant, *QUANTS) if q.quant and q.quant not in QUANTS else QUANTS:
        quant = answers.catalog.quant(qid)
        if quant is None:
            continue
        need = weights_bytes(row.params, quant.bpw_dense)
        mark = "🟢" if need <= HEADROOM * usable else "🟠" if need <= usable else "🔴"
        rows.append((qid, need, mark))
    label = setup_label(gpu.short_name, count)
    main = q.quant or "Q4_K_M"
    need = weights_bytes(row.params, (answers.catalog.quant(main) or answers.catalog.quants[0]).bpw_dense)
    verdict = "fits" if need <= HEADROOM * usable else "tight" if need <= usable else "no"
    note = (
        Note(code="memory_only_stated", values={"model": stated.name, "source": stated.provenance.source})
        if stated
        else Note(code="memory_only", values={"repo": row.repo})
    )
    subject = Subject(
        model_id=model_id,
        model_name=name,
        hf_repo=row.repo,
        total_params_b=round(row.params / 1e9, 2),
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        gpu_count=count,
        gpu_memory_gb=float(round(gpu.memory_bytes / GIB)),
        quant=main,
        notes=(note,),
    )
    return memory_only_reply(
        name,
        row.repo,
        row.params,
        label,
        rows,
        verdict,
        main,
        need,
        usable,
        stated,
        subject,
        answers.catalog,
        lang,
        echo,
    )


def usable_bytes(gpu: GpuSpec, count: int) -> int:
    """The memory the weights may fill: every card's, or the GPU's share of a unified pool."""
    share = unified_fraction(gpu) if gpu.unified_memory else 1.0
    return round(gpu.memory_bytes * share) * count
