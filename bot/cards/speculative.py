"""A fit question that mentions a draft model, speculative decoding or MTP gets its memory and speed-up.

The draft is the one the question names by size ("with a 0.6b draft"), else the smallest model of
the same family with the same vocabulary (speculative decoding needs the target's tokenizer); models
whose checkpoint carries MTP layers (DeepSeek V3/R1, GLM-4.5) use those when asked for "MTP" or
when no draft exists. Numbers from ``core.speculative``; the answer to "is it worth it?" is whether
the best sourced speed-up is at least ``WORTH_IT`` and the draft still fits.
"""

from __future__ import annotations

import re
import shlex

from bot.reply import CodeBlock, Reply, Row, Section
from catalog.extra_facts import mtp_facts, spec_acceptance
from core.analysis import Advice
from core.estimate import FitEstimate, Request, estimate
from core.fit import Verdict
from core.models import Catalog, Engine, GpuSpec, ModelSpec
from core.query.parse import Query
from core.speculative import DraftMemory, draft_memory, mtp_memory, mtp_speed, spec_speeds, verification_time
from locales import Lang, gib, num, t, tokens_per_s

_MTP = re.compile(r"\b(?:mtp|multi[- ]token)\b", re.I)
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*b\b(?=[^.?!]{0,40}\bdraft)|\bdraft\b[^.?!]{0,40}?(\d+(?:\.\d+)?)\s*b\b", re.I)
WORTH_IT = 1.2  # a speed-up below 20 % is not worth a second model's memory
SMALL_DRAFT = 2e9  # drafts up to 2B parameters run at Q8_0, larger ones at Q4_K_M


def pick_draft(model: ModelSpec, catalog: Catalog, text: str) -> ModelSpec | None:
    """The draft the question names by size, else the smallest same-family model with the same vocabulary."""
    candidates = [
        m
        for m in catalog.models
        if m.id != model.id
        and m.family == model.family
        and m.vocab_size == model.vocab_size
        and m.total_params * 4 <= model.total_params
        and m.variant not in ("vision", "embedding")
    ]
    if not candidates:
        return None
    size = _SIZE.search(text)
    if size:
        want = float(size.group(1) or size.group(2)) * 1e9
        return min(candidates, key=lambda m: (abs(m.total_params - want), m.variant == "base", m.id))
    return min(candidates, key=lambda m: (m.total_params, m.variant == "base", m.id))  # instruct before base


def same_tokenizer(model: ModelSpec, draft: ModelSpec) -> bool:
    """llama.cpp drafts only with a model of the target's vocabulary (``common/speculative.cpp``,
    ``common_speculative_are_compatible``: same vocab type and special tokens, sizes within 128)."""
    return model.family == draft.family and abs(model.vocab_size - draft.vocab_size) <= 128


def with_speculative(
    reply: Reply,
    est: FitEstimate,
    advice: Advice,
    model: ModelSpec,
    gpu: GpuSpec,
    catalog: Catalog,
    lang: Lang,
    q: Query,
    text: str,
) -> Reply:
    """The draft section of a fit card that asks for speculative decoding: the draft the user named
    (when it shares the model's tokenizer), else the smallest same-family model, else MTP layers."""
    if not q.speculative or est.verdict is Verdict.NO_FIT:
        return reply
    quant = catalog.quant(est.quant)
    assert quant is not None
    mtp = next((f for f in mtp_facts() if model.id in f.models), None)
    named = catalog.model(q.draft.id) if q.draft is not None and q.draft.id else None
    refused = named is not None and not same_tokenizer(model, named)
    if mtp and _MTP.search(text):
        draft = None
    elif named is not None and not refused:
        draft = named
    else:
        draft = pick_draft(model, catalog, text)
    if refused and named is not None:
        reply = reply.model_copy(
            update={"summary": f"{reply.summary}\n{t(lang, 'spec.named_refused', draft=named.name, model=model.name)}"}
        )
    target_tps = est.speed.decode_tokens_per_s
    verify = verification_time(target_tps, est.speed.prefill_tokens_per_s)
    rows: list[Row] = []
    code: list[CodeBlock] = []
    if draft is not None:
        dq = catalog.quant("Q8_0" if draft.total_params <= SMALL_DRAFT else "Q4_K_M")
        assert dq is not None
        extra = draft_memory(draft, dq, catalog.size(draft.id, dq.id), est.context, est.kv_cache)
        request = Request(
            quant=dq.id, context=est.context, kv_cache=est.kv_cache, engine=est.engine, gpu_count=est.hardware.count
        )
        draft_tps = estimate(draft, gpu, dq, request, catalog.size(draft.id, dq.id)).speed.decode_tokens_per_s
        speeds = spec_speeds(target_tps, draft_tps, verify, spec_acceptance())
        title = t(lang, "spec.title_draft", draft=draft.name, quant=dq.id)
        rows.append(Row(label=t(lang, "spec.draft_speed"), value=tokens_per_s(draft_tps, lang)))
        code += _commands(advice, draft, dq.id, max(s.draft_tokens for s in speeds))
        source_note = t(lang, "spec.assumption_draft")
    elif mtp is not None:
        extra = mtp_memory(model, quant, catalog.size(model.id, quant.id), mtp.layers, est.context, est.kv_cache)
        speed = mtp_speed(target_tps, mtp.layers, model.n_layers, mtp.accept, verify(1))
        speeds = (speed.model_copy(update={"source": mtp.provenance.source}),)
        title = t(lang, "spec.title_mtp", layers=mtp.layers)
        code += _mtp_command(advice)
        source_note = t(lang, "spec.assumption_mtp", accept=f"{mtp.accept:.0%}")
    else:
        section = Section(
            title=t(lang, "spec.section"), rows=(Row(label="–", value=t(lang, "spec.no_draft", family=model.family)),)
        )
        return reply.model_copy(update={"sections": (*reply.sections, section)})
    rows = _memory_rows(est, extra, lang) + rows
    rows.append(Row(label=t(lang, "spec.without"), value=tokens_per_s(target_tps, lang)))
    for s in speeds:
        rows.append(
            Row(
                label=t(lang, f"spec.task.{s.task}"),
                value=t(
                    lang,
                    "spec.speed",
                    tps=tokens_per_s(s.tokens_per_s, lang),
                    x=num(s.speedup, lang, 2),
                    k=s.draft_tokens,
                    alpha=f"{s.alpha:.0%}",
                ),
            )
        )
    fits = est.gpu_bytes + extra.total_bytes <= est.memory.usable_bytes
    best = max(s.speedup for s in speeds)
    verdict = "worth_it" if fits and best >= WORTH_IT else "no_room" if not fits else "not_worth_it"
    rows.append(Row(label=t(lang, "spec.worth"), value=t(lang, f"spec.{verdict}", x=num(best, lang, 2))))
    rows.append(Row(label=t(lang, "quality.source"), value="; ".join(dict.fromkeys(s.source for s in speeds))))
    section = Section(title=title, rows=tuple(rows))
    assumptions = f"{reply.assumptions}; {source_note}" if reply.assumptions else source_note
    return reply.model_copy(
        update={"sections": (*reply.sections, section), "code": (*code, *reply.code), "assumptions": assumptions}
    )


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


def _commands(advice: Advice, draft: ModelSpec, quant: str, k: int) -> list[CodeBlock]:
    out = []
    for cmd in advice.commands:
        if cmd.engine is Engine.LLAMA_CPP and draft.gguf_repo:
            argv = [*cmd.argv, "-hfd", f"{draft.gguf_repo}:{quant}", "-ngld", "999", "--spec-draft-n-max", str(k)]
            out.append(CodeBlock(label="llama.cpp + draft", text=shlex.join(argv)))
        elif cmd.engine is Engine.VLLM and draft.hf_repo:
            config = f'{{"model": "{draft.hf_repo}", "method": "draft_model", "num_speculative_tokens": {k}}}'
            out.append(CodeBlock(label="vllm + draft", text=shlex.join([*cmd.argv, "--speculative-config", config])))
    return out


def _mtp_command(advice: Advice) -> list[CodeBlock]:
    return [
        CodeBlock(label="llama.cpp + MTP", text=shlex.join([*cmd.argv, "--spec-type", "draft-mtp"]))
        for cmd in advice.commands
        if cmd.engine is Engine.LLAMA_CPP
    ]


__all__ = ["pick_draft", "same_tokenizer", "with_speculative"]
