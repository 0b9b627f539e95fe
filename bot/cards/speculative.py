"""A fit question that mentions a draft model, speculative decoding, MTP or EAGLE gets its memory and speed-up.

The draft is the model the question names (kept as named; one of another tokenizer is refused, never
replaced), else the one it names by size ("with a 0.6b draft"), else the smallest model of the same
family with the same tokenizer that is at most a quarter of the target's active parameters (no safety,
vision or embedding variants, no MoE larger than a quarter of the target). Models with their own head use it when asked ("MTP", "EAGLE") or when no
draft exists: MTP layers from the stored config (``num_nextn_predict_layers``, ``mtp_num_hidden_layers``)
or ``[[mtp]]`` in speculative.toml, EAGLE-3 heads where a measured row names one. Numbers from
``core.speculative``: acceptance measured for that pair, family or method (``acceptance_for``), times from
the estimator. "Worth it?" is whether the best speed-up is at least ``WORTH_IT`` and the draft fits.
"""

from __future__ import annotations

import json
import shlex
from functools import cache

from bot.cards.notes import percent
from bot.reply import Action, CodeBlock, Reply, Row, Section
from catalog.extra_facts import mtp_facts, spec_measurements
from catalog.importers.model_configs import ConfigSourceError, stored_config
from core.analysis import Advice
from core.estimate import EstimateError, FitEstimate, Request, estimate
from core.fit import Verdict
from core.models import Catalog, Engine, GpuSpec, Lang, ModelSpec
from core.query.parse import Query
from core.speculative import (
    COSTS,
    HEAD_K_MAX,
    MAX_DRAFT,
    DraftMemory,
    Method,
    SpecSpeed,
    acceptance_for,
    draft_memory,
    draft_model_cost,
    head_cost,
    head_memory,
    mtp_memory,
    spec_speeds,
)
from locales import gib, num, t, tokens_per_s

WORTH_IT = 1.2  # a speed-up below 20 % is not worth a second model's memory
SMALL_DRAFT = 2e9  # drafts up to 2B parameters run at Q8_0, larger ones at Q4_K_M (llama.cpp)
NOT_DRAFTS = ("vision", "embedding", "safety")
MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
# families whose MTP layer mainline llama.cpp runs (--spec-type draft-mtp): qwen35/qwen35moe (#22673), glm4moe
# (#26534), glm-dsa (#25980, which lists the in-tree ones); DeepSeek's deepseek2 graph has none
LLAMA_MTP_FAMILIES = frozenset({"Qwen3.5", "Qwen3.6", "GLM"})


def same_tokenizer(model: ModelSpec, draft: ModelSpec) -> bool:
    """llama.cpp drafts only with a model of the target's vocabulary (``common/speculative.cpp``,
    ``common_speculative_are_compatible``: same vocab type and special tokens, sizes within 128)."""
    return model.family == draft.family and abs(model.vocab_size - draft.vocab_size) <= 128


def draft_candidates(model: ModelSpec, catalog: Catalog) -> list[ModelSpec]:
    """Same tokenizer family, at most a quarter of the target's parameters and of its active parameters
    (a draft reads all its weights per token), no special variants."""
    return [
        m
        for m in catalog.models
        if m.id != model.id
        and same_tokenizer(model, m)
        and m.active_params * 4 <= model.active_params
        and m.total_params * 4 <= model.total_params
        and m.variant not in NOT_DRAFTS
    ]


def pick_draft(model: ModelSpec, catalog: Catalog, size_b: float | None) -> ModelSpec | None:
    """The draft the question names by size (within a factor of two), else the smallest candidate."""
    candidates = draft_candidates(model, catalog)
    if not candidates:
        return None
    if size_b is not None:
        want = size_b * 1e9
        near = min(candidates, key=lambda m: (abs(m.total_params - want), m.variant == "base", m.id))
        return near if want / 2 <= near.total_params <= want * 2 else None
    return min(candidates, key=lambda m: (m.total_params, m.variant == "base", m.id))  # instruct before base


@cache
def mtp_layers(model: ModelSpec) -> tuple[int, str] | None:
    """The model's MTP layers and where that is read: its stored config, else ``[[mtp]]``."""
    try:
        config = stored_config(model.hf_repo) if model.hf_repo else {}
    except ConfigSourceError:
        config = {}
    text = config.get("text_config", config)
    layers = next((int(text[k]) for k in MTP_KEYS if isinstance(text.get(k), int)), 0)
    if layers > 0:
        return layers, f"catalog/configs/{model.hf_repo}.json"
    fact = next((f for f in mtp_facts() if model.id in f.models), None)
    return (fact.layers, fact.provenance.source.split(" ", 1)[0]) if fact else None


def eagle_head(model: ModelSpec) -> str | None:
    """An EAGLE-3 head a measured row ran for this model (its repository)."""
    return next((r.draft for r in spec_measurements() if r.method == "eagle3" and r.target == model.id), None)


def with_speculative(
    reply: Reply,
    est: FitEstimate,
    advice: Advice,
    model: ModelSpec,
    gpu: GpuSpec,
    catalog: Catalog,
    lang: Lang,
    q: Query,
    details: bool = True,
) -> Reply:
    """The draft section of a fit card that asks for speculative decoding; the first page (not ``details``)
    keeps what answers the question on a phone: the memory total with the draft, the speeds with and
    without it, whether it is worth it, and the draft's command; the details page adds the memory parts,
    the draft's own speed, the sources and the plain command."""
    if not q.speculative or est.verdict is Verdict.NO_FIT:
        return reply
    named = catalog.model(q.draft.id) if q.draft is not None and q.draft.id else None
    if named is not None and not same_tokenizer(model, named):
        note = t(lang, "spec.named_refused", draft=named.name, model=model.name)
        return reply.model_copy(update={"summary": f"{reply.summary}\n{note}"})
    mtp, eagle = mtp_layers(model), eagle_head(model)
    method: Method | None = None
    draft = named
    if draft is None:
        asked_head = (mtp and q.asks.mtp) or (eagle and q.asks.eagle)
        draft = None if asked_head else pick_draft(model, catalog, q.asks.draft_b)
        if draft is None:
            method = "eagle3" if eagle and (q.asks.eagle or not mtp) else "mtp" if mtp else None
    if draft is None and method is None:
        row = Row(label="–", value=t(lang, "spec.no_draft", family=model.family))
        section = Section(title=t(lang, "spec.section"), rows=(row,))
        return reply.model_copy(update={"sections": (*reply.sections, section)})
    target_tps = est.speed.decode_tokens_per_s_at_context  # the card's own decode figure, at the asked context
    prefill_ratio = target_tps / est.speed.prefill_tokens_per_s if est.speed.prefill_tokens_per_s else 0.0
    verify = COSTS.verify(est.engine.value)
    rows: list[Row] = []
    if draft is not None:
        dq_id, draft_tps = _draft_speed(draft, gpu, catalog, est)
        dq = catalog.quant(dq_id)
        assert dq is not None
        extra = draft_memory(draft, dq, catalog.size(draft.id, dq.id), est.context, est.kv_cache)
        kind: Method = "draft"
        cost, k_max = draft_model_cost(target_tps, draft_tps), MAX_DRAFT
        title = t(lang, "spec.title_draft", draft=draft.name, quant=dq.id)
        rows.append(Row(label=t(lang, "spec.draft_speed"), value=tokens_per_s(draft_tps, lang)))
    elif method == "mtp" and mtp is not None:
        quant = catalog.quant(est.quant)
        assert quant is not None
        size = catalog.size(model.id, quant.id)
        extra = mtp_memory(model, quant, size, mtp[0], est.context, est.kv_cache)
        kind = "mtp"
        cost, k_max = head_cost(model, "mtp"), HEAD_K_MAX
        title = t(lang, "spec.title_mtp", layers=mtp[0])
    else:
        extra = head_memory(model, "eagle3", est.context, est.kv_cache)
        kind = "eagle3"
        cost, k_max = head_cost(model, "eagle3"), HEAD_K_MAX
        title = t(lang, "spec.title_eagle", head=eagle or "")
    speeds = _speeds(
        model, catalog, kind, draft.id if draft else (eagle or ""), target_tps, cost, verify, prefill_ratio, k_max
    )
    k = max(s.draft_tokens for s in speeds)
    code = _commands(advice, model, draft, kind, eagle, k)
    memory = _memory_rows(est, extra, lang)
    rows = memory + rows if details else memory[-1:]
    rows.append(Row(label=t(lang, "spec.without"), value=tokens_per_s(target_tps, lang)))
    for s in speeds:
        value = t(
            lang,
            "spec.speed",
            tps=tokens_per_s(s.tokens_per_s, lang),
            x=num(s.speedup, lang, 2),
            k=s.draft_tokens,
            alpha=percent(s.alpha, lang),
        )
        rows.append(Row(label=t(lang, f"spec.task.{kind}.{s.task}"), value=value))
    fits = est.gpu_bytes + extra.total_bytes <= est.memory.usable_bytes
    best = max(s.speedup for s in speeds)
    verdict = "worth_it" if fits and best >= WORTH_IT else "no_room" if not fits else "not_worth_it"
    rows.append(Row(label=t(lang, "spec.worth"), value=t(lang, f"spec.{verdict}", x=num(best, lang, 2))))
    if details:
        sources = "; ".join(dict.fromkeys(u for s in speeds for u in s.source.split("; ")))
        rows.append(Row(label=t(lang, "quality.source"), value=sources))
    note = t(lang, "spec.assumption_draft" if kind == "draft" else "spec.assumption_head")
    if kind == "eagle3" and est.engine is not Engine.VLLM:
        note = f"{note}; {t(lang, 'spec.eagle_engine')}"
    if kind == "mtp" and est.engine is Engine.LLAMA_CPP and model.family not in LLAMA_MTP_FAMILIES:
        note = f"{note}; {t(lang, 'spec.mtp_engine')}"
    assumptions = f"{reply.assumptions}; {note}" if reply.assumptions else note
    section = Section(title=title, rows=tuple(rows))
    return reply.model_copy(
        update={
            "sections": (*reply.sections, section),
            "code": (*code, *reply.code) if details or not code else tuple(code),
            "assumptions": assumptions,
            "actions": _keep_asking(reply.actions, f"with {draft.id} as draft" if draft else f"with {kind}"),
        }
    )


def _keep_asking(actions: tuple[Action, ...], words: str) -> tuple[Action, ...]:
    """Every fit button of a speculative card asks with the same draft or head (a details page without it
    would be another question)."""
    return tuple(
        a.model_copy(update={"query": f"{a.query} {words}"}) if a.query.startswith("/fit ") else a for a in actions
    )


def draft_quant(draft: ModelSpec, engine: Engine, target_quant: str) -> str:
    """llama.cpp runs a small GGUF of the draft, vLLM its BF16 checkpoint (FP8 where the target runs FP8)."""
    if engine is Engine.VLLM:
        return "FP8" if target_quant == "FP8" else "BF16"
    return "Q8_0" if draft.total_params <= SMALL_DRAFT else "Q4_K_M"


def _draft_speed(draft: ModelSpec, gpu: GpuSpec, catalog: Catalog, est: FitEstimate) -> tuple[str, float]:
    """The draft's quant and decode speed on the same device."""
    quant_id = draft_quant(draft, est.engine, est.quant)
    quant = catalog.quant(quant_id)
    assert quant is not None
    request = Request(quant=quant_id, context=est.context, kv_cache=est.kv_cache, engine=est.engine, gpu_count=1)
    try:
        tps = estimate(draft, gpu, quant, request, catalog.size(draft.id, quant_id)).speed.decode_tokens_per_s
    except EstimateError:
        request = request.model_copy(update={"engine": Engine.LLAMA_CPP})
        tps = estimate(draft, gpu, quant, request, catalog.size(draft.id, quant_id)).speed.decode_tokens_per_s
    return quant_id, tps


def _speeds(
    model: ModelSpec,
    catalog: Catalog,
    method: Method,
    draft_id: str,
    target_tps: float,
    cost: float,
    verify: float,
    prefill_ratio: float,
    k_max: int,
) -> tuple[SpecSpeed, ...]:
    def family_of(model_id: str) -> str:
        m = catalog.model(model_id)
        return m.family if m is not None else ""

    found = []
    for task in ("prose", "code"):
        hit = acceptance_for(spec_measurements(), family_of, model, method, task, draft_id)
        if hit is not None and (task == "prose" or any(r.task == task for r in hit[1])):
            found.append((task, hit[0], "; ".join(dict.fromkeys(r.source_url for r in hit[1]))))
    return spec_speeds(target_tps, cost, verify, prefill_ratio, found, k_max)


def _memory_rows(est: FitEstimate, extra: DraftMemory, lang: Lang) -> list[Row]:
    """Target on the GPU + draft weights + draft KV + draft buffer = total, against usable memory."""
    total = est.gpu_bytes + extra.total_bytes
    return [
        Row(label=t(lang, "spec.target_gpu"), value=gib(est.gpu_bytes, lang)),
        Row(label=t(lang, "spec.draft_weights"), value=gib(extra.weights_bytes, lang)),
        Row(label=t(lang, "spec.draft_kv"), value=gib(extra.kv_bytes, lang)),
        Row(label=t(lang, "spec.draft_buffers"), value=gib(extra.overhead_bytes, lang)),
        Row(
            label=t(lang, "spec.total"),
            value=t(lang, "spec.total_value", total=gib(total, lang), usable=gib(est.memory.usable_bytes, lang)),
        ),
    ]


def _commands(
    advice: Advice, model: ModelSpec, draft: ModelSpec | None, method: Method, head: str | None, k: int
) -> list[CodeBlock]:
    out = []
    for cmd in advice.commands:
        if cmd.engine is Engine.LLAMA_CPP:
            if draft is not None and draft.gguf_repo:
                quant = draft_quant(draft, Engine.LLAMA_CPP, cmd.quant)
                flags = ["-hfd", f"{draft.gguf_repo}:{quant}", "-ngld", "999", "--spec-draft-n-max", str(k)]
                out.append(CodeBlock(label="llama.cpp + draft", text=shlex.join([*cmd.argv, *flags])))
            elif method == "mtp" and model.family in LLAMA_MTP_FAMILIES:
                flags = ["--spec-type", "draft-mtp", "--spec-draft-n-max", str(k)]
                out.append(CodeBlock(label="llama.cpp + MTP", text=shlex.join([*cmd.argv, *flags])))
        elif cmd.engine is Engine.VLLM:
            config: dict[str, object] | None = None
            if draft is not None and draft.hf_repo:
                config = {"model": draft.hf_repo, "method": "draft_model", "num_speculative_tokens": k}
            elif method == "mtp":
                config = {"method": "mtp", "num_speculative_tokens": k}
            elif method == "eagle3" and head:
                config = {"method": "eagle3", "model": head, "num_speculative_tokens": k}
            if config is not None:
                label = {"draft": "vllm + draft", "mtp": "vllm + MTP", "eagle3": "vllm + EAGLE-3"}[method]
                argv = [*cmd.argv, "--speculative-config", json.dumps(config)]
                out.append(CodeBlock(label=label, text=shlex.join(argv)))
    return out


__all__ = [
    "draft_candidates",
    "draft_quant",
    "eagle_head",
    "mtp_layers",
    "pick_draft",
    "same_tokenizer",
    "with_speculative",
]
