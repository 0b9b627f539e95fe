"""A pasted command or log becomes a diagnosis card: read it, resolve model and hardware, diagnose.

The paste is only read (``core.diagnose.flags``, ``core.diagnose.log``), never run. The model comes
from the command's file, repository or tag (matched like any question, through the one name
matcher); the hardware from the words around the paste ("on my 4090 with 64 GB RAM"), the user's
saved device, or the GPUs a log names. What was assumed is listed on the card.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.answers.resolve import Resolver
from bot.cards.diagnose import diagnosis_card, failure_card
from bot.cards.log import has_figures, log_card
from bot.reply import Reply, Subject
from bot.understand import paste_prose
from bot.users.user import User
from catalog.extra_facts import ollama_tags
from core.diagnose.command import diagnose
from core.diagnose.flags import (
    MAX_PASTE_CHARS,
    LaunchFlags,
    ParseFailure,
    find_command,
    model_words,
    parse_command,
)
from core.diagnose.log import LogFacts, log_settings, looks_like_log, read_log
from core.estimate import DEFAULT_RAM_GB, default_quant
from core.figures import outcome_figures
from core.models import GIB, Engine, Lang, ModelSpec
from core.notes import Note
from core.query.parse import Query, parse

if TYPE_CHECKING:
    from bot.answers.route import Answers

_VENDOR = re.compile(r"\b(?:NVIDIA|GeForce|AMD|Radeon\(TM\)|Intel\(R\)|Apple)\s+", re.I)


def diagnose_answer(answers: Answers, paste: str, words: Query, lang: Lang, user: User, echo: str) -> Reply:
    """The diagnosis card for a paste (pure: the same paste gives the same card); ``words``: the user's own
    words around it as parsed (``bot.understand``), ``echo`` the message for the cards' buttons."""
    notes: list[Note] = []
    if len(paste) > MAX_PASTE_CHARS:
        return failure_card(lang, "too_long", limit=MAX_PASTE_CHARS)
    facts = read_log(paste) if looks_like_log(paste) else None
    flags: LaunchFlags | ParseFailure | None = parse_command(paste) if find_command(paste) else None
    if flags is None or (isinstance(flags, ParseFailure) and facts is not None):
        flags = log_settings(facts) if facts is not None else None
    prose_model = _model_from_words(answers, words) if flags is None and facts is not None else None
    if flags is None and prose_model is not None and facts is not None:
        flags = _flags_for(facts, prose_model)
    if flags is None or isinstance(flags, ParseFailure):
        if facts is not None and has_figures(facts):  # a log without a model FitBot can place: what it says
            return log_card(facts, answers.catalog, lang)
        if flags is None:
            return failure_card(lang, "no_command")
        return failure_card(lang, flags.reason, limit=MAX_PASTE_CHARS)
    resolver = Resolver(answers.catalog)
    model = prose_model or _model(answers, resolver, flags, facts, lang, echo)
    if isinstance(model, Reply) and (from_words := _model_from_words(answers, words)) is not None:
        model = from_words  # the command's file says no name FitBot knows; the user's words name the model
    if isinstance(model, Reply):
        if facts is not None and has_figures(facts):
            return log_card(facts, answers.catalog, lang, model=flags.model_ref)
        return model
    q = words
    named = q.gpu is not None  # the user's own words name the device: their count (1 unless said) stands
    if q.gpu is None and q.gpu_text is None and q.device_kind is None and facts and facts.device_names:
        prose = paste_prose(paste)
        q = parse(f"{prose} {len(facts.device_names)}x {_VENDOR.sub('', facts.device_names[0])}", answers.vocab)
        notes.append(
            Note(code="dx_log_devices", values={"gpu": facts.device_names[0], "n": str(len(facts.device_names))})
        )
    device = resolver.device(q, lang, user, echo)
    if isinstance(device, Reply):
        if facts is not None and has_figures(facts):  # a log without hardware: what it says, and what to add
            return log_card(facts, answers.catalog, lang, known=model.name)
        return device
    gpu, count = device
    count = _count(notes, flags, named, count)
    quant_id = flags.quant or (facts.quant if facts else None)
    engine = Engine.VLLM if flags.engine == "vllm" else Engine.LLAMA_CPP
    quant = answers.catalog.quant(quant_id) if quant_id else None
    if quant is None or engine not in quant.engines:
        fallback = default_quant(model, engine)
        notes.append(Note(code="dx_quant_assumed", values={"quant": fallback, "asked": quant_id or "–"}))
        quant = answers.catalog.quant(fallback)
    assert quant is not None
    ram_gb = q.ram_gb if q.ram_gb is not None else user.ram_gb
    if ram_gb is None and facts is not None and facts.system_total_bytes:  # the RAM the log states
        ram_gb = round(facts.system_total_bytes / 1e9, 1)
        notes.append(Note(code="dx_log_ram", values={"ram": f"{ram_gb:g}"}))
    if ram_gb is None:
        ram_gb = DEFAULT_RAM_GB
        if not gpu.unified_memory:
            notes.append(Note(code="dx_ram_default", values={"ram": f"{ram_gb:g}"}))
    result = diagnose(flags, model, quant, answers.catalog.size(model.id, quant.id), gpu, count, round(ram_gb * 1e9))
    card = diagnosis_card(result, facts, answers.catalog, lang, [*resolver.notes, *notes], echo=_echo(paste))
    subject = Subject(
        model_id=model.id,
        model_name=model.name,
        hf_repo=model.hf_repo,
        total_params_b=round(model.total_params / 1e9, 2),
        gpu_id=gpu.id,
        gpu_name=gpu.short_name,
        gpu_count=count,
        gpu_memory_gb=float(round(gpu.memory_bytes / GIB)),
        ram_gb=ram_gb,
        quant=result.quant,
        context=result.context,
        engine=result.engine,
        notes=(*resolver.notes, *notes, *result.problems, *result.assumptions),
        figures=outcome_figures(result.outcome),
    )
    return card.model_copy(update={"subjects": (subject,)})


def _model(
    answers: Answers, resolver: Resolver, flags: LaunchFlags, facts: LogFacts | None, lang: Lang, echo: str
) -> ModelSpec | Reply:
    """The catalog model the command names: its repo exactly, else its words through the name matcher."""
    if flags.engine == "ollama" and (tagged := _ollama_tag(answers, flags)) is not None:
        return tagged
    ref = (flags.model_ref or "").removeprefix("hf.co/").split(":", 1)[0]
    for m in answers.catalog.models:
        if ref and ref.lower() in {(m.hf_repo or "").lower(), (m.gguf_repo or "").lower()}:
            return m
    words = model_words(flags)
    if facts and facts.model_name and flags.model_ref == facts.model_file:
        words = f"{words} {facts.model_name}"
    q = parse(words, answers.vocab)
    if q.model is None or not q.model.id:
        return failure_card(lang, "unknown_model", model=flags.model_ref or words, unknown=", ".join(flags.unknown))
    return resolver.model(q, lang, echo)


def _model_from_words(answers: Answers, words: Query) -> ModelSpec | None:
    """The catalog model the user's own words around a log name ("gpt-oss-120b on an h100"), if any."""
    if words.model is None or not words.model.id:
        return None
    return answers.catalog.model(words.model.id)


def _flags_for(facts: LogFacts, model: ModelSpec) -> LaunchFlags | None:
    """The settings a log implies, for the model the user named next to it (an Ollama log: its library tag,
    else the GGUF repository Ollama pulls with hf.co/)."""
    ref = model.hf_repo or model.id
    if facts.engine == "ollama":
        tag = next((x.tag for x in ollama_tags() if x.model_id == model.id), None)
        ref = tag or (f"hf.co/{model.gguf_repo}" if model.gguf_repo else model.id)
    named = facts.model_copy(
        update={"model_name": ref, "engine": facts.engine if facts.engine != "pytorch" else "vllm"}
    )
    return log_settings(named)


def _ollama_tag(answers: Answers, flags: LaunchFlags) -> ModelSpec | None:
    """An Ollama library tag ("llama3.2", "qwen3:30b") of a catalog model, from the stored tag list."""
    ref = (flags.model_ref or "").lower().removesuffix(":latest")
    tag = next((x for x in ollama_tags() if x.tag.lower() == ref), None)
    return answers.catalog.model(tag.model_id) if tag else None


def _count(notes: list[Note], flags: LaunchFlags, named: bool, count: int) -> int:
    """The GPU count: the user's words win; else the command's split, parallelism or visible devices."""
    if named or count > 1:
        return count
    implied = len(flags.tensor_split) or (flags.tensor_parallel or 0) or (flags.visible_devices or 0)
    if implied > 1:
        notes.append(Note(code="dx_count_from_command", values={"n": str(implied)}))
        return implied
    return count


def _echo(body: str) -> str:
    found = find_command(body)
    line = found[1] if found else body.strip().splitlines()[0] if body.strip() else ""
    return line[:300]


__all__ = ["diagnose_answer"]
