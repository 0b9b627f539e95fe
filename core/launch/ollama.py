"""Ollama: the tag that pulls a model in a quant, its default context, and the command for an estimate.

Ollama runs llama.cpp underneath, so an estimate's memory and speed hold for it; what differs is how
it is told the settings. The context comes from ``OLLAMA_CONTEXT_LENGTH`` (or ``num_ctx``), the KV
cache type from ``OLLAMA_KV_CACHE_TYPE``, which only works with ``OLLAMA_FLASH_ATTENTION=1``
(docs/faq.md), and without a context setting Ollama picks one by VRAM: 4K below 24 GiB, 32K up to
48 GiB, 256K above (docs/context-length.mdx @948f693). A tag is taken from the library rows
(``catalog/facts/ollama_tags.toml``) or, for a GGUF repository the catalog measured, written as
``hf.co/<repo>:<QUANT>`` (Hugging Face hub docs, "Use Ollama with any GGUF Model"), else from the GGUF
repository the llama.cpp command loads (the same file, said so on the card).
"""

from __future__ import annotations

from typing import Literal

from core.launch.safety import is_repo_id, shell_line
from core.models import GIB, Frozen, KvCacheType, ModelSpec, Provenance, QuantSize

OLLAMA_CTX_BY_VRAM = ((24 * GIB, 4096), (48 * GIB, 32768))  # (below this VRAM, this default context)
OLLAMA_CTX_LARGE = 262144


class OllamaTag(Frozen):
    model_id: str
    quant: str
    tag: str
    provenance: Provenance


class TagChoice(Frozen):
    tag: str | None
    # a library row; hf.co/<repo> of a measured file; hf.co/<the GGUF repo the llama.cpp command loads>; none
    kind: Literal["library", "hf", "gguf_repo", "unknown"]
    source: str = ""
    unverified: tuple[str, ...] = ()  # fields of the library row its source does not show (e.g. the quant)
    # why no hf.co/ path is offered although a GGUF repository is known ("gpt_oss", "vision"), else ""
    hf_blocked: str = ""


class ToolCommand(Frozen):
    """What to type for one tool: shell lines, and the settings each line carries."""

    tool: Literal["ollama", "lmstudio", "llama.cpp-fit"]
    lines: tuple[str, ...]
    tag: TagChoice | None = None


def ollama_default_context(vram_bytes: int) -> int:
    """The context Ollama allocates when none is set, by the GPU's VRAM."""
    for limit, context in OLLAMA_CTX_BY_VRAM:
        if vram_bytes < limit:
            return context
    return OLLAMA_CTX_LARGE


def hf_blocked(model: ModelSpec, vision: bool) -> str:
    """Why a Hugging Face GGUF of this model does not work in Ollama, or "" when it does.

    * gpt-oss: Ollama runs its own gpt-oss implementation; GGUFs converted by llama.cpp fail to load
      ("unknown model architecture: 'gpt-oss'", "invalid ggml type 39": ollama/ollama#11816, #11714).
    * vision models: Ollama's engine wants the vision tower in the same GGUF; Hugging Face repos ship it as
      a separate mmproj file, so the model loads without image input (unslothai/unsloth#2248, #2290,
      ollama/ollama#9967).
    """
    if model.native_dtype == "mxfp4" and model.family.lower().startswith("gpt-oss"):
        return "gpt_oss"
    return "vision" if vision else ""


def ollama_tag(
    model: ModelSpec, quant: str, tags: tuple[OllamaTag, ...], size: QuantSize | None, *, blocked: str = ""
) -> TagChoice:
    """The tag that exists for this model and quant: a library tag, else the measured GGUF repo, else none;
    ``blocked`` (``hf_blocked``) rules the hf.co/ path out."""
    for row in tags:
        if row.model_id == model.id and row.quant.upper() == quant.upper():
            return TagChoice(
                tag=row.tag, kind="library", source=row.provenance.source, unverified=row.provenance.unverified
            )
    if blocked:
        return TagChoice(tag=None, kind="unknown", hf_blocked=blocked)
    if (
        size is not None
        and size.repo
        and "/" in size.repo
        and is_repo_id(size.repo)
        and size.quant_id.upper() == quant.upper()
    ):
        return TagChoice(tag=f"hf.co/{size.repo}:{quant.upper()}", kind="hf", source=size.provenance.source)
    if model.gguf_repo and "/" in model.gguf_repo and is_repo_id(model.gguf_repo):
        return TagChoice(tag=f"hf.co/{model.gguf_repo}:{quant.upper()}", kind="gguf_repo", source=model.gguf_repo)
    return TagChoice(tag=None, kind="unknown")


def ollama_command(context: int, kv_cache: KvCacheType, choice: TagChoice) -> ToolCommand:
    """The server environment that reproduces the estimate, then the run line (when a tag is known)."""
    env = [f"OLLAMA_CONTEXT_LENGTH={context}", "OLLAMA_FLASH_ATTENTION=1"]
    if kv_cache in (KvCacheType.Q8_0, KvCacheType.Q4_0):
        env.append(f"OLLAMA_KV_CACHE_TYPE={kv_cache.value}")
    lines: tuple[str, ...] = (" ".join((*env, "ollama", "serve")),)
    run = shell_line(("ollama", "run", choice.tag)) if choice.tag is not None else None
    if run is not None:  # the one quoting rule of every suggested command (``core.launch.safety``)
        lines += (run,)
    return ToolCommand(tool="ollama", lines=lines, tag=choice)


__all__ = [
    "OllamaTag",
    "TagChoice",
    "ToolCommand",
    "hf_blocked",
    "ollama_command",
    "ollama_default_context",
    "ollama_tag",
]
