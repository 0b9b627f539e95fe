"""``fitbot mcp``: FitBot as an MCP server (the official SDK's ``MCPServer``), for ChatGPT, Claude, LM Studio
and Open WebUI. One ``Service`` answers every tool, as it answers the chat bots; each tool writes its typed
arguments as the question a user would type (``bot.commands.question``) and returns the card's numbers and
text (``bot.adapters.mcp.tools``). Resources: the catalog's GPUs and models, and the formulas page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import metadata
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from bot import commands
from bot.adapters.mcp.tools import (
    MAX_PASTE_CHARS,
    BackendChoice,
    ContextTokens,
    EngineChoice,
    GpuCount,
    Hardware,
    KvCache,
    Language,
    ModelName,
    Quant,
    RamGb,
    ToolAnswer,
    Users,
    answer,
)
from bot.cards.menu import formulas_page, formulas_title
from bot.commands import backend_part, context_part, kv_part, ram_part, users_part
from bot.listing import CatalogRows
from bot.reply import setup_label
from bot.service import Service

INSTRUCTIONS = (
    "FitBot answers 'can I run this model on this hardware?' for local LLMs: memory (weights, KV cache, "
    "overhead) against the device, the fit verdict, decode/prefill speed with a range, time to first token, "
    "cloud cost per million tokens, the quant that fits, fine-tuning memory and launch commands. Every tool "
    "returns the numbers as structured `subjects[].figures` plus the answer as text; prefer the typed tools, "
    "use `ask` for anything else in the user's own words. Numbers are estimates from a catalog of facts."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
Result = Annotated[CallToolResult, ToolAnswer]


def build_server(service: Service, rows: CatalogRows) -> MCPServer:
    """The MCP server over ``service``, with the catalog's ``rows`` as resources (no transport yet)."""
    server = MCPServer("fitbot", title="FitBot", instructions=INSTRUCTIONS, version=_version())

    def tool(description: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return server.tool(description=description, annotations=READ_ONLY, structured_output=True)

    def on(hardware: str, count: int | None) -> str:
        return setup_label(hardware, count) if count else hardware

    @tool("Does a model fit this hardware, and how fast does it run? Memory breakdown (weights, KV cache, "
          "overhead, GPU and system RAM), fit verdict (fits, tight, offload, no_fit), decode and prefill speed "
          "with range, time to first token, per-user speed when serving users, and the launch command.")  # fmt: skip
    async def fit(
        model: ModelName,
        hardware: Hardware,
        gpu_count: GpuCount = None,
        quant: Quant = None,
        context: ContextTokens = None,
        kv_cache: KvCache = None,
        engine: EngineChoice = None,
        backend: BackendChoice = None,
        users: Users = None,
        ram_gb: RamGb = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        parts = (quant, context_part(context), kv_part(kv_cache), engine, ram_part(ram_gb), users_part(users))
        text = commands.question("fit", model, on(hardware, gpu_count), *parts, backend_part(backend))
        return await answer(service, text, language, ctx)

    @tool("Speed of a model on this hardware: decode tok/s and its range at several context lengths, prefill "
          "and time to first token, and tok/s per user and in total for concurrent users.")  # fmt: skip
    async def speed(
        model: ModelName,
        hardware: Hardware,
        gpu_count: GpuCount = None,
        quant: Quant = None,
        context: ContextTokens = None,
        engine: EngineChoice = None,
        backend: BackendChoice = None,
        users: Users = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        parts = (quant, context_part(context), engine, users_part(users), backend_part(backend))
        return await answer(service, commands.question("speed", model, on(hardware, gpu_count), *parts), language, ctx)

    @tool("Cheapest cloud GPU offers that run a model: price per hour, tok/s on each offer's own hardware and "
          "$ per million tokens (batched over the users), with where each price was seen.")  # fmt: skip
    async def cloud_cost(
        model: ModelName,
        quant: Quant = None,
        context: ContextTokens = None,
        users: Users = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        text = commands.question("cloud", model, quant, context_part(context), users_part(users))
        return await answer(service, text, language, ctx)

    @tool("Which quantizations of a model fit this hardware: memory, verdict and speed per quant, published "
          "quality loss where known, and the best quant that fits.")  # fmt: skip
    async def quants(
        model: ModelName,
        hardware: Hardware,
        gpu_count: GpuCount = None,
        context: ContextTokens = None,
        kv_cache: KvCache = None,
        engine: EngineChoice = None,
        ram_gb: RamGb = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        parts = (context_part(context), kv_part(kv_cache), engine, ram_part(ram_gb))
        return await answer(service, commands.question("quant", model, on(hardware, gpu_count), *parts), language, ctx)

    @tool("Which GPUs and Macs run a model, ranked: fit and speed on each, the cheapest and the fastest.")
    async def gpus_for_model(
        model: ModelName,
        quant: Quant = None,
        context: ContextTokens = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        return await answer(service, commands.question("gpus", model, quant, context_part(context)), language, ctx)

    @tool("Which models to run on this hardware, ranked by capability, recency, popularity and speed here "
          "(MoE models with experts in RAM included), optionally only coding, reasoning, vision or small ones.")  # fmt: skip
    async def models_for_gpu(
        hardware: Hardware,
        gpu_count: GpuCount = None,
        context: ContextTokens = None,
        quant: Quant = None,
        focus: Annotated[
            Literal["coding", "reasoning", "vision", "small"] | None, Field(description="Only models of this kind.")
        ] = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        text = commands.question("models", on(hardware, gpu_count), context_part(context), quant, focus)
        return await answer(service, text, language, ctx)

    @tool("Memory for fine-tuning a model on this hardware with QLoRA, LoRA or full fine-tuning (weights, "
          "gradients, optimizer, activations), whether it fits, and the smallest hardware that does.")  # fmt: skip
    async def finetune(
        model: ModelName,
        hardware: Hardware,
        gpu_count: GpuCount = None,
        method: Annotated[
            Literal["qlora", "lora", "full"] | None, Field(description="Fine-tuning method (default: all three).")
        ] = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        return await answer(
            service, commands.question("finetune", model, on(hardware, gpu_count), method), language, ctx
        )

    @tool("Compare two to four GPUs for one model, or two to four models on one GPU: fit and speed side by side.")
    async def compare(
        options: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=200)]],
            Field(min_length=2, max_length=4, description="The GPUs (or the models) to compare, 2 to 4."),
        ],
        model: Annotated[
            str | None, Field(max_length=200, description="The model, when the options are hardware.")
        ] = None,
        hardware: Annotated[
            str | None, Field(max_length=200, description="The hardware, when the options are models.")
        ] = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        text = commands.question("compare", " vs ".join(options), model, f"on {hardware}" if hardware else None)
        return await answer(service, text, language, ctx)

    @tool("Diagnose a pasted launch command or log (llama-server/llama-cli, vllm serve, ollama run or a Modelfile, "
          "a llama.cpp/vLLM/Ollama load or out-of-memory log): what goes on each GPU and in RAM, whether it fits, "
          "the speed, and the corrected command.")  # fmt: skip
    async def diagnose(
        pasted: Annotated[
            str, Field(min_length=1, max_length=MAX_PASTE_CHARS, description="The command line or log, as pasted.")
        ],
        hardware: Annotated[
            str | None, Field(max_length=200, description="The hardware it runs on, when the paste does not say.")
        ] = None,
        ram_gb: RamGb = None,
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        setup = " ".join(
            p for p in (f"on {hardware}" if hardware else "", f"with {ram_gb:g} GB RAM" if ram_gb else "") if p
        )
        return await answer(service, f"{pasted}\n{setup}" if setup else pasted, language, ctx)

    @tool("Ask FitBot anything in the user's own words, in English or German, as in the chat bots: "
          "'can I run gpt-oss-120b on a mac studio with 128gb?', 'passt GLM 4.5 Air auf meine 4090 mit 64 GB RAM?', "
          "'cheapest gpu for qwen3 32b', or any /command ('/tco qwen3-32b rtx 4090').")  # fmt: skip
    async def ask(
        question: Annotated[
            str, Field(min_length=1, max_length=MAX_PASTE_CHARS, description="The question, or a pasted command.")
        ],
        language: Language = None,
        ctx: Context | None = None,
    ) -> Result:
        return await answer(service, question, language, ctx)

    @server.resource("fitbot://catalog/gpus", name="gpus", mime_type="application/json",
                     description="Every GPU, Mac and APU in the catalog: id, name, memory (GiB), bandwidth, source.")  # fmt: skip
    def gpus() -> str:
        return json.dumps([r.model_dump(mode="json") for r in rows.gpus], ensure_ascii=False)

    @server.resource("fitbot://catalog/models", name="models", mime_type="application/json",
                     description="Every model in the catalog: id, name, repo, parameters (B), max context, source.")  # fmt: skip
    def models() -> str:
        return json.dumps([r.model_dump(mode="json") for r in rows.models], ensure_ascii=False)

    for lang in ("en", "de"):
        server.resource(f"fitbot://formulas/{lang}", name=f"formulas-{lang}", mime_type="text/markdown",
                        description=formulas_title(lang))(_page(lang))  # fmt: skip
    return server


def _version() -> str:
    """FitBot's installed version, as the server tells clients (empty when run from a tree not installed)."""
    try:
        return metadata.version("fitbot")
    except metadata.PackageNotFoundError:
        return ""


def _page(lang: Literal["en", "de"]) -> Callable[[], str]:
    """The formulas page in one language, as a resource function."""

    def formulas() -> str:
        return formulas_page(lang)

    return formulas
