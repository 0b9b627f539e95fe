"""The launch commands people use, beside llama.cpp's and vLLM's: Ollama, LM Studio, llama.cpp ``--fit``.

A question that names Ollama or LM Studio gets that tool's settings first (the phone card shows only
the first command); the details page shows all of them. vLLM commands for AWQ/GPTQ/NVFP4 load the
pre-quantized repository (``catalog/facts/quant_repos.toml``) or are not written (the card says that none
is known); FP8 loads a published FP8 checkpoint where one is known. Ollama gets a library tag, else
``hf.co/<repo>`` only for a model whose Hugging Face GGUF works in Ollama (``core.launch.ollama.hf_blocked``).
"""

from __future__ import annotations

from functools import cache

from bot.reply import CodeBlock, Reply
from catalog.extra_facts import ollama_tags, quant_repos
from catalog.model_files.vision import vision_of
from core.analysis import Advice, Analysis
from core.estimate import FitEstimate
from core.launch.commands import LaunchCommand
from core.launch.ollama import hf_blocked, ollama_command, ollama_default_context, ollama_tag
from core.launch.tools import fit_command, lm_studio_settings, manual_flags, quantized_repo, with_repo
from core.launch.vllm_hardware import PREQUANTIZED
from core.models import Catalog, Engine, Lang, ModelSpec
from core.query.asks import Asks
from locales import context_label, t


@cache
def checkpoints() -> frozenset[tuple[str, str]]:
    """(model id, QUANT) of every pre-quantized repository known (``quant_repos.toml``): the vLLM fixes that
    need a checkpoint are offered only where one exists."""
    return frozenset((r.model_id, r.quant.upper()) for r in quant_repos())


def takes_images(model: ModelSpec) -> bool:
    """A vision model: a vision tower in its config (``catalog.model_files.vision.vision_of``), in the catalog
    row, or the vision variant."""
    return model.vision_params is not None or model.variant == "vision" or vision_of(model) is not None


def with_quantized_repos(analysis: Analysis) -> Analysis:
    """vLLM commands of a pre-quantized format load that checkpoint, not the full-precision repository;
    one for which no checkpoint is known is dropped (the card says so instead: ``with_tools``)."""
    advice, model = analysis.advice, analysis.scenario.model
    if advice is None:
        return analysis
    repos = quant_repos()

    def fix(cmd: LaunchCommand) -> LaunchCommand | None:
        if cmd.engine is not Engine.VLLM:
            return cmd
        found = quantized_repo(model.id, cmd.quant, repos)
        if found is not None and model.native_dtype != cmd.quant.lower():
            return with_repo(cmd, found.repo)
        return None if _needs_checkpoint(cmd, model) else cmd

    commands = tuple(c for c in (fix(c) for c in advice.commands) if c is not None)
    fixed = fix(advice.fix_command) if advice.fix_command else None
    advice = advice.model_copy(update={"commands": commands, "fix_command": fixed})
    return analysis.model_copy(update={"advice": advice})


def with_tools(
    reply: Reply,
    est: FitEstimate,
    advice: Advice,
    model: ModelSpec,
    catalog: Catalog,
    lang: Lang,
    asks: Asks,
) -> Reply:
    """The fit card with the Ollama / LM Studio / ``--fit`` block the question asks for, first (the phone
    card shows only the first command). The details page always carries the Ollama command too, after
    the llama.cpp and vLLM ones, since most people who ask run Ollama without saying so."""
    first: list[CodeBlock] = []
    extra: list[CodeBlock] = []
    fix = advice.fix
    lacking = est.quant if _lacks_checkpoint(est.quant, model) else None
    if lacking is None and fix is not None and fix.kind == "quant" and advice.fix_command is None:
        lacking = fix.value if _lacks_checkpoint(fix.value, model) else None  # the nearest setup's quant
    if est.engine is Engine.VLLM and lacking is not None:
        # no vllm serve line: the card's first block says which checkpoint is missing
        note = t(lang, "tools.no_checkpoint", quant=lacking.upper(), repo=model.hf_repo or model.id)
        first.append(CodeBlock(label="vllm", text=note))
    # Ollama and LM Studio run GGUF files with llama.cpp: a vLLM (or no-fit) estimate is not theirs
    if est.verdict.value != "no_fit" and est.engine is Engine.LLAMA_CPP:
        if asks.ollama:
            first.append(_ollama_block(est, model, catalog, lang))
        elif asks.details:
            extra.append(_ollama_block(est, model, catalog, lang))
        if asks.lm_studio:
            first.append(_lm_studio_block(est, lang))
        llama = next((c for c in advice.commands if c.engine is Engine.LLAMA_CPP), None)
        if asks.auto_fit and llama is not None and (auto := _fit_block(llama, lang)) is not None:
            first.append(auto)
    if not first and not extra:
        return reply
    code = reply.code
    if est.engine is Engine.VLLM and lacking is not None:  # the missing checkpoint says it: no second "no line"
        code = tuple(c for c in code if not (c.label == Engine.VLLM.value and c.text.startswith("#")))
    return reply.model_copy(update={"code": (*first, *code, *extra)})


def _needs_checkpoint(cmd: LaunchCommand, model: ModelSpec) -> bool:
    """A vLLM command of a pre-quantized format that still names the base repository."""
    return cmd.engine is Engine.VLLM and _lacks_checkpoint(cmd.quant, model)


def _lacks_checkpoint(quant: str, model: ModelSpec) -> bool:
    """AWQ, GPTQ or NVFP4 of a model that does not ship in it, with no repository known to hold it (FP8 is
    quantized online where none is known)."""
    return (
        quant.upper() in PREQUANTIZED
        and model.native_dtype != quant.lower()
        and quantized_repo(model.id, quant, quant_repos()) is None
    )


def _ollama_block(est: FitEstimate, model: ModelSpec, catalog: Catalog, lang: Lang) -> CodeBlock:
    blocked = hf_blocked(model, takes_images(model))
    choice = ollama_tag(model, est.quant, ollama_tags(), catalog.size(model.id, est.quant), blocked=blocked)
    cmd = ollama_command(est.context, est.kv_cache, choice)
    lines = list(cmd.lines)
    if choice.tag is None and choice.hf_blocked:
        lines.append(t(lang, f"tools.ollama_no_hf_{choice.hf_blocked}", model=model.name, quant=est.quant))
    elif choice.tag is None:
        lines.append(t(lang, "tools.ollama_no_tag", model=model.name, quant=est.quant))
    elif choice.kind == "gguf_repo":
        lines.append(t(lang, "tools.ollama_same_repo"))
    elif choice.unverified:
        lines.append(t(lang, "tools.ollama_unverified", quant=est.quant))
    default = ollama_default_context(est.hardware.memory_bytes // max(est.hardware.count, 1))
    if default != est.context:
        lines.append(t(lang, "tools.ollama_default_ctx", context=context_label(default)))
    if est.offload.mode == "experts":
        lines.append(t(lang, "tools.ollama_layers_only"))
    return CodeBlock(label="Ollama", text="\n".join(lines))


def _lm_studio_block(est: FitEstimate, lang: Lang) -> CodeBlock:
    lines = [f"{t(lang, f'tools.lms.{s.code}')}: {s.value}" for s in lm_studio_settings(est)]
    if est.offload.mode == "experts":
        lines.append(t(lang, "tools.lms_experts_note"))
    return CodeBlock(label="LM Studio", text="\n".join(lines))


def _fit_block(cmd: LaunchCommand, lang: Lang) -> CodeBlock | None:
    auto = fit_command(cmd)
    if auto is None:
        return None
    lines = list(auto.lines)
    for flag, value in manual_flags(cmd):
        lines.append(t(lang, f"tools.manual.{flag.lstrip('-').replace('-', '_')}", value=value))
    return CodeBlock(label=t(lang, "tools.fit_label"), text="\n".join(lines))


__all__ = ["checkpoints", "takes_images", "with_quantized_repos", "with_tools"]
