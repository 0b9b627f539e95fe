"""What a pasted log states, as card rows, and what its failure means: only the log's own figures.

Used twice: as the "Your log says" section of a diagnosis (model and hardware known), and as a card of
its own when the log names no model the catalog knows (a vLLM traceback, an Ollama server log with a
blob hash, a torch OOM). No figure is computed or assumed here: every value is one the log printed.
"""

from __future__ import annotations

from bot.cards.parts import footer
from bot.reply import Reply, Row, Section, Tone
from core.diagnose.log import LogFacts
from core.models import GIB, MIB, Catalog, Lang
from locales import context_label, gib, integer, num, t


def size(value: float, lang: Lang) -> str:
    """A log's figure in the unit that keeps its digits: 270.00 MiB stays MiB, 448 KiB stays KiB."""
    if value >= GIB:
        return gib(value, lang)
    if value >= MIB:
        return f"{num(value / MIB, lang, 2)} MiB"
    return f"{num(value / 1024, lang, 2)} KiB"


_ENGINES = {"llama.cpp": "llama.cpp", "vllm": "vLLM", "ollama": "Ollama", "pytorch": "PyTorch"}


def log_rows(facts: LogFacts, lang: Lang) -> tuple[Row, ...]:
    """Every figure the log states, one row each (none when it states none)."""
    rows: list[Row] = []
    if facts.model_name or facts.model_file:
        rows.append(Row(label=t(lang, "diagnose.logx.model"), value=str(facts.model_name or facts.model_file)))
    for i, name in enumerate(facts.device_names):
        if name:
            rows.append(Row(label=t(lang, "diagnose.gpu", n=i), value=name))
    if facts.context:
        rows.append(Row(label=t(lang, "diagnose.logx.context"), value=context_label(facts.context)))
    if facts.layers_offloaded:
        done, total = facts.layers_offloaded
        rows.append(
            Row(
                label=t(lang, "diagnose.logx.layers"),
                value=t(lang, "diagnose.logx.layers_value", done=done, total=total),
            )
        )
    for b in facts.buffers:  # only the buffers the log printed for that device
        parts = (("model", b.model_mib), ("kv", b.kv_mib), ("compute", b.compute_mib))
        value = ", ".join(t(lang, f"diagnose.logx.buf_{k}", size=size(mib * MIB, lang)) for k, mib in parts if mib)
        rows.append(Row(label=b.device, value=value))
    if facts.kv_total_bytes:
        rows.append(Row(label=t(lang, "diagnose.logx.kv_self"), value=size(facts.kv_total_bytes, lang)))
    if facts.failed_device and facts.failed_bytes:
        value = t(lang, "diagnose.log_failed_value", size=size(facts.failed_bytes, lang), device=facts.failed_device)
        if facts.failed_part:
            value += f" ({t(lang, f'diagnose.logx.part_{facts.failed_part}')})"
        rows.append(Row(label=t(lang, "diagnose.log_failed"), value=value))
    rows += _vllm_rows(facts, lang)
    rows += _ollama_rows(facts, lang)
    return tuple(rows)


def _vllm_rows(facts: LogFacts, lang: Lang) -> list[Row]:
    rows: list[Row] = []
    if facts.kv_needed_bytes and facts.kv_available_bytes:
        need, have = size(facts.kv_needed_bytes, lang), size(facts.kv_available_bytes, lang)
        rows.append(Row(label=t(lang, "diagnose.log_kv"), value=t(lang, "diagnose.log_kv_value", need=need, have=have)))
    if facts.kv_tokens:
        value = t(lang, "diagnose.kv_tokens", tokens=integer(facts.kv_tokens, lang))
        rows.append(Row(label=t(lang, "diagnose.kv_room"), value=value))
    if facts.max_seq_len:
        rows.append(Row(label=t(lang, "diagnose.logx.max_seq_len"), value=integer(facts.max_seq_len, lang)))
    if facts.device_total_gib is not None and facts.device_free_bytes is not None:
        n = facts.torch_device if facts.torch_device is not None else 0
        value = t(
            lang,
            "diagnose.logx.gpu_free_value",
            free=size(facts.device_free_bytes, lang),
            total=size(round(facts.device_total_gib * 1024**3), lang),
        )
        rows.append(Row(label=t(lang, "diagnose.gpu", n=n), value=value))
    if facts.tried_bytes:
        rows.append(Row(label=t(lang, "diagnose.logx.tried"), value=size(facts.tried_bytes, lang)))
    if facts.in_use_bytes:
        rows.append(Row(label=t(lang, "diagnose.logx.in_use"), value=size(facts.in_use_bytes, lang)))
    return rows


def _ollama_rows(facts: LogFacts, lang: Lang) -> list[Row]:
    rows: list[Row] = []
    if facts.gpu_available_bytes:
        value = " + ".join(size(b, lang) for b in facts.gpu_available_bytes)
        rows.append(Row(label=t(lang, "diagnose.logx.available"), value=value))
    for key, amount in (
        ("required_full", facts.required_full_bytes),
        ("required_partial", facts.required_partial_bytes),
        ("required_kv", facts.required_kv_bytes),
    ):
        if amount is not None:
            rows.append(Row(label=t(lang, f"diagnose.logx.{key}"), value=size(amount, lang)))
    if facts.system_total_bytes is not None and facts.system_free_bytes is not None:
        value = t(
            lang,
            "diagnose.logx.system_value",
            free=size(facts.system_free_bytes, lang),
            total=size(facts.system_total_bytes, lang),
        )
        rows.append(Row(label=t(lang, "diagnose.ram"), value=value))
    if facts.system_ram_needed_bytes and facts.system_ram_available_bytes:
        need, have = size(facts.system_ram_needed_bytes, lang), size(facts.system_ram_available_bytes, lang)
        rows.append(
            Row(label=t(lang, "diagnose.log_ram"), value=t(lang, "diagnose.log_kv_value", need=need, have=have))
        )
    return rows


def log_findings(facts: LogFacts, lang: Lang) -> tuple[str, ...]:
    """What the log's failure means and what to change, each with the log's own figures."""
    out: list[str] = []
    if facts.failed_device and facts.failed_bytes:
        part = facts.failed_part or "alloc"
        out.append(
            t(lang, f"diagnose.logx.why_{part}", size=size(facts.failed_bytes, lang), device=facts.failed_device)
        )
    if facts.kv_tokens:
        asked = facts.max_seq_len or facts.context
        if asked:
            out.append(
                t(
                    lang,
                    "diagnose.logx.why_kv_tokens",
                    tokens=integer(facts.kv_tokens, lang),
                    asked=integer(asked, lang),
                    fix=facts.kv_tokens,
                )
            )
    elif facts.no_cache_blocks:
        out.append(t(lang, "diagnose.logx.why_no_blocks"))
    if facts.tried_bytes and facts.device_free_bytes is not None:
        out.append(
            t(
                lang,
                "diagnose.logx.why_torch",
                tried=size(facts.tried_bytes, lang),
                free=size(facts.device_free_bytes, lang),
                n=facts.torch_device if facts.torch_device is not None else 0,
            )
        )
    if facts.engine == "ollama" and facts.layers_offloaded:
        done, total = facts.layers_offloaded
        full = size(facts.required_full_bytes, lang) if facts.required_full_bytes else "–"
        available = " + ".join(size(b, lang) for b in facts.gpu_available_bytes) or "–"
        key = "why_ollama_all" if done >= total else "why_ollama_partial"
        out.append(t(lang, f"diagnose.logx.{key}", done=done, total=total, full=full, available=available))
    return tuple(out)


def log_card(
    facts: LogFacts, catalog: Catalog, lang: Lang, model: str | None = None, known: str | None = None
) -> Reply:
    """The card of a log FitBot cannot place (no model it knows: ``model`` names the unknown one; or no
    hardware: ``known`` is the model): its figures, its failure, what to change."""
    findings = log_findings(facts, lang)
    sections = [Section(title=t(lang, "diagnose.log"), rows=log_rows(facts, lang))]
    if len(findings) > 1:  # one finding is the summary itself
        sections.append(
            Section(title=t(lang, "diagnose.logx.what"), rows=tuple(Row(label="⚠", value=f) for f in findings))
        )
    if known:
        ask = t(lang, "diagnose.logx.no_gpu", model=known)
    elif model:
        ask = t(lang, "diagnose.logx.unknown_model", model=model)
    else:
        ask = t(lang, "diagnose.logx.no_model")
    tone = Tone.BAD if facts.out_of_memory or findings else Tone.INFO
    return Reply(
        kind="diagnose",
        locale=lang,
        title=t(lang, "diagnose.logx.title", engine=_ENGINES[facts.engine]),
        tone=tone,
        summary=f"{findings[0] if findings else t(lang, 'diagnose.logx.nothing')}\n{ask}",
        sections=tuple(s for s in sections if s.rows),
        footer=footer(catalog, lang),
    )


def has_figures(facts: LogFacts) -> bool:
    """Whether a log states anything the card can show."""
    return bool(log_rows(facts, "en") or log_findings(facts, "en"))


__all__ = ["has_figures", "log_card", "log_findings", "log_rows"]
