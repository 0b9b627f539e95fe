"""A fit question that mentions images gets the projector's memory, the image tokens and the longer
time to first token; the launch commands name ``--mmproj`` (llama.cpp) and the image limit (vLLM)."""

from __future__ import annotations

import re
import shlex

from bot.reply import CodeBlock, Reply, Row, Section
from catalog.extra_facts import vision_facts
from core.analysis import Advice
from core.estimate import FitEstimate, Request, estimate
from core.fit import Verdict
from core.models import Catalog, Engine, GpuSpec, ModelSpec
from core.vision import DEFAULT_IMAGE_SIDE, image_tokens, mmproj_bytes, vision_fact
from locales import Lang, context_label, gib, integer, num, t

_ASKS = re.compile(r"\b(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?|vision)\b", re.I)
_COUNT = re.compile(r"\b(\d{1,3})\s*(?:images?|pictures?|photos?|screenshots?|bilder?n?|fotos?)\b", re.I)
MAX_IMAGES = 64


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
    fact = vision_fact(model, vision_facts())
    if fact is None:
        row = Row(label="–", value=t(lang, "vision.text_only", model=model.name))
        return reply.model_copy(
            update={"sections": (*reply.sections, Section(title=t(lang, "vision.section"), rows=(row,)))}
        )
    count_match = _COUNT.search(text)
    images = min(int(count_match.group(1)), MAX_IMAGES) if count_match else 1
    per_image = image_tokens(fact)
    tokens = images * per_image
    projector = mmproj_bytes(model, fact)
    quant = catalog.quant(est.quant)
    assert quant is not None
    request = Request(
        quant=est.quant,
        context=est.context,
        kv_cache=est.kv_cache,
        engine=est.engine,
        gpu_count=est.hardware.count,
        prompt_tokens=est.speed.prompt_tokens + tokens,
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
                "vision.tokens_value",
                n=images,
                per=integer(per_image, lang),
                tokens=integer(tokens, lang),
                side=DEFAULT_IMAGE_SIDE,
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
        Row(label=t(lang, "quality.source"), value=fact.provenance.source),
    ]
    if tokens + est.speed.prompt_tokens > est.context:
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
            "code": (*_commands(advice, images, lang), *reply.code),
            "assumptions": assumptions,
        }
    )


def _commands(advice: Advice, images: int, lang: Lang) -> list[CodeBlock]:
    out = []
    for cmd in advice.commands:
        if cmd.engine is Engine.LLAMA_CPP:
            argv = list(cmd.argv)
            if "-hf" in argv:
                model_file = argv[argv.index("-hf") + 1].split("/")[-1].replace("-GGUF:", "-") + ".gguf"
                argv[argv.index("-hf") : argv.index("-hf") + 2] = ["-m", model_file]
            argv += ["--mmproj", "mmproj-F16.gguf"]
            out.append(
                CodeBlock(label=t(lang, "vision.llama_label"), text=f"{shlex.join(argv)}\n{t(lang, 'vision.hf_note')}")
            )
        elif cmd.engine is Engine.VLLM:
            limit = f'{{"image": {images}}}'
            out.append(CodeBlock(label="vllm + images", text=shlex.join([*cmd.argv, "--limit-mm-per-prompt", limit])))
    return out


__all__ = ["asks_images", "with_vision"]
