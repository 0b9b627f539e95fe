"""A fit question that mentions images gets the projector's memory, the image tokens at the asked
resolution and the longer time to first token; the launch commands name ``--mmproj`` (llama.cpp) and the
image limit (vLLM). The tower is the model's own (``catalog.model_files.vision``: its config's vision_config);
where mainline llama.cpp has no projector for it (Llama 3.2 Vision), the card says so and names vLLM."""

from __future__ import annotations

import re
import shlex

from bot.reply import CodeBlock, Reply, Row, Section
from catalog.model_files.vision import runs_instead, vision_of
from core.analysis import Advice
from core.estimate import FitEstimate, Request, estimate
from core.fit import Verdict
from core.launch.vllm_hardware import needs_half, vllm_quant_problem
from core.models import Catalog, Engine, GpuSpec, Lang, ModelSpec
from core.vision import DEFAULT_IMAGE_SIDE, VisionFact, image_tokens, mmproj_bytes
from locales import context_label, gib, integer, num, t

_ASKS = re.compile(r"\b(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?|vision)\b", re.I)
_COUNT = re.compile(r"\b(\d{1,3})\s*(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?)\b", re.I)
_SIZE = re.compile(r"\b(\d{3,4})\s*[x×]\s*(\d{3,4})\b")
_SIDE = re.compile(r"\b(\d{3,4})\s*(?:px|pixels?|pixeln?)\b", re.I)
MAX_IMAGES = 64
MAX_SIDE = 8192


def asked_size(text: str) -> tuple[int, int]:
    """The image size the question names ("1920x1080", "768 px"), else the default square."""
    if (m := _SIZE.search(text)) and max(int(m[1]), int(m[2])) <= MAX_SIDE:
        return int(m[1]), int(m[2])
    if (m := _SIDE.search(text)) and int(m[1]) <= MAX_SIDE:
        return int(m[1]), int(m[1])
    return DEFAULT_IMAGE_SIDE, DEFAULT_IMAGE_SIDE


def asks_images(text: str) -> bool:
    return bool(_ASKS.search(text))


def with_vision(
    reply: Reply,
    est: FitEstimate,
    advice: Advice,
    model: ModelSpec,
    gpu: GpuSpec,
    catalog: Catalog,
    lang: Lang,
    text: str,
) -> Reply:
    if not asks_images(text) or est.verdict is Verdict.NO_FIT:
        return reply
    fact = vision_of(model)
    if fact is None:
        row = Row(label="–", value=t(lang, "vision.text_only", model=model.name))
        return reply.model_copy(
            update={"sections": (*reply.sections, Section(title=t(lang, "vision.section"), rows=(row,)))}
        )
    count_match = _COUNT.search(text)
    images = min(int(count_match.group(1)), MAX_IMAGES) if count_match else 1
    width, height = asked_size(text)
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


__all__ = ["asked_size", "asks_images", "with_vision"]
