"""A fit question that mentions images gets the projector's memory, the image tokens at the asked
resolution and the longer time to first token; the launch commands name ``--mmproj`` (llama.cpp) and the
image limit (vLLM). The tower is the model's own (``catalog.model_files.vision``: its config's vision_config);
where mainline llama.cpp has no projector for it (Llama 3.2 Vision), the card says so and names vLLM."""

from __future__ import annotations

import shlex

from bot.reply import CodeBlock, Reply, Row, Section
from catalog.model_files.vision import runs_instead, vision_of
from core.analysis import Advice
from core.estimate import FitEstimate, Request, estimate
from core.fit import Verdict
from core.launch.vllm_hardware import needs_half, vllm_quant_problem
from core.models import Catalog, Engine, GpuSpec, Lang, ModelSpec
from core.query.asks import Asks
from core.vision import DEFAULT_IMAGE_SIDE, VisionFact, image_tokens, mmproj_bytes
from locales import context_label, gib, integer, num, t


def with_vision(
    reply: Reply,
    est: FitEstimate,
    advice: Advice,
    model: ModelSpec,
    gpu: GpuSpec,
    catalog: Catalog,
    lang: Lang,
    asks: Asks,
) -> Reply:
    if not asks.images or est.verdict is Verdict.NO_FIT:
        return reply
    fact = vision_of(model)
    if fact is None:
        row = Row(label="–", value=t(lang, "vision.text_only", model=model.name))
        return reply.model_copy(
            update={"sections": (*reply.sections, Section(title=t(lang, "vision.section"), rows=(row,)))}
        )
    images = asks.image_count
    width, height = asks.image_size or (DEFAULT_IMAGE_SIDE, DEFAULT_IMAGE_SIDE)
    per_image = image_tokens(fact, width, height)
    tokens = images * per_image
    in_context = 0 if fact.cross_attention else tokens  # cross-attention: the image states sit apart
    projector = mmproj_bytes(model, fact)
    quant = catalog.quant(est.quant)
    assert quant is not None
    request = Request(
        quant=est.quant,
        context=est.context,
        kv_cache=est.kv_cache,
        engine=est.engine,
        gpu_count=est.hardware.count,
        prompt_tokens=est.speed.prompt_tokens + in_context,
    )
    with_images = estimate(model, gpu, quant, request, catalog.size(model.id, quant.id)).speed
    total = est.gpu_bytes + projector
    rows = [
        Row(label=t(lang, "spec.target_gpu"), value=gib(est.gpu_bytes, lang)),
        Row(label=t(lang, "vision.projector"), value=gib(projector, lang)),
        Row(
            label=t(lang, "spec.total"),
            value=t(lang, "spec.total_value", total=gib(total, lang), usable=gib(est.memory.usable_bytes, lang)),
        ),
        Row(
            label=t(lang, "vision.tokens"),
            value=t(
                lang,
                "vision.tokens_value_cross" if fact.cross_attention else "vision.tokens_value",
                n=images,
                per=integer(per_image, lang),
                tokens=integer(tokens, lang),
                side=f"{width}x{height}",
            ),
        ),
        Row(
            label=t(lang, "vision.ttft"),
            value=t(
                lang,
                "vision.ttft_value",
                seconds=num(with_images.ttft_s, lang, 1),
                without=num(est.speed.ttft_s, lang, 1),
                prompt=context_label(est.speed.prompt_tokens),
            ),
        ),
        *_engine_rows(fact, lang),
        Row(label=t(lang, "quality.source"), value=fact.provenance.source),
    ]
    if in_context + est.speed.prompt_tokens > est.context:
        rows.append(
            Row(
                label="⚠",
                value=t(lang, "vision.over_context", tokens=integer(tokens, lang), context=context_label(est.context)),
            )
        )
    if total > est.memory.usable_bytes:
        rows.append(Row(label="⚠", value=t(lang, "vision.no_room")))
    section = Section(title=t(lang, "vision.title", model=model.name), rows=tuple(rows))
    note = t(lang, "vision.assumption")
    assumptions = f"{reply.assumptions}; {note}" if reply.assumptions else note
    return reply.model_copy(
        update={
            "sections": (*reply.sections, section),
            "code": (*_commands(advice, images, lang, fact, model, gpu), *reply.code),
            "assumptions": assumptions,
        }
    )


def _engine_rows(fact: VisionFact, lang: Lang) -> list[Row]:
    """Which engine runs the tower's images: llama.cpp's projector type, or the engine that does instead."""
    if not fact.projector_known:
        return []
    if fact.projector:
        return [Row(label="llama.cpp", value=t(lang, "vision.llama_runs", projector=fact.projector))]
    return [Row(label="⚠", value=t(lang, "vision.llama_cannot", kind=fact.family, engine=runs_instead()))]


def _commands(
    advice: Advice, images: int, lang: Lang, fact: VisionFact, model: ModelSpec, gpu: GpuSpec
) -> list[CodeBlock]:
    out = []
    limit = f'{{"image": {images}}}'
    llama_runs = fact.projector is not None or not fact.projector_known
    runs = vllm_quant_problem("BF16", gpu) is None and not gpu.unified_memory  # core.launch.vllm_hardware (issue 35)
    if not llama_runs and model.hf_repo and runs and not any(c.engine is Engine.VLLM for c in advice.commands):
        half = ["--dtype", "half"] if needs_half("BF16", model.native_dtype, gpu) else []
        argv = ["vllm", "serve", model.hf_repo, *half, "--limit-mm-per-prompt", limit]
        out.append(CodeBlock(label="vllm + images", text=shlex.join(argv)))
    for cmd in advice.commands:
        if cmd.engine is Engine.LLAMA_CPP and llama_runs:
            argv = list(cmd.argv)
            if "-hf" in argv:
                model_file = argv[argv.index("-hf") + 1].split("/")[-1].replace("-GGUF:", "-") + ".gguf"
                argv[argv.index("-hf") : argv.index("-hf") + 2] = ["-m", model_file]
            argv += ["--mmproj", "mmproj-F16.gguf"]
            out.append(
                CodeBlock(label=t(lang, "vision.llama_label"), text=f"{shlex.join(argv)}\n{t(lang, 'vision.hf_note')}")
            )
        elif cmd.engine is Engine.VLLM:
            out.append(CodeBlock(label="vllm + images", text=shlex.join([*cmd.argv, "--limit-mm-per-prompt", limit])))
    return out


__all__ = ["with_vision"]
