"""The MCP tools' typed arguments, their answer model, and the one path from a tool call to ``Service.answer``.

Each tool writes its arguments as the question a chat user would type (``bot.commands.question``, the
grammar the cards' buttons use), so a tool answers exactly what ``fitbot ask`` answers for that text:
the same ``Reply``, whose ``subjects`` carry the card's numbers (``figures``). A card that asks back or
refuses (an unknown name with its "did you mean" choices, a value out of range, a slow-down) is an MCP
tool error (``isError``) with the same text and choices.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field

from bot.render.text import to_console
from bot.reply import CodeBlock, Lang, Reply, Subject, Table
from bot.service import BACKEND_CHOICES, ENGINE_CHOICES, KV_CACHE_CHOICES, QUANT_CHOICES, Service, User
from bot.users.limits import Limits

if TYPE_CHECKING:  # the closed sets are the service's own tuples; a type checker sees plain strings
    QuantName = str
    KvCacheName = str
    EngineName = str
    BackendName = str
else:
    QuantName = Literal[QUANT_CHOICES]
    KvCacheName = Literal[KV_CACHE_CHOICES]
    EngineName = Literal[ENGINE_CHOICES]
    BackendName = Literal[BACKEND_CHOICES]

# Numbers are only checked to be positive here: their upper limits are the estimator's, and a value past one gets
# the service's answer that names it, in the asked language (as a tool error).
# Cards that answer nothing: they ask back (which model? did you mean?) or refuse (out of range, slow down).
UNANSWERED = frozenset({"suggest", "error", "slow_down"})
MAX_NAME_CHARS = 200
MAX_PASTE_CHARS = 8000  # what the diagnosis reads of a pasted command or log (README, issue 26)

ModelName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="The model, as people write it: a catalog name or alias ('qwen3-32b', 'llama 3.1 8b', "
        "'gpt-oss-120b', 'glm 4.5 air') or a Hugging Face repo id ('Qwen/Qwen3-14B-AWQ'). Typos get "
        "'did you mean' choices.",
    ),
]
Hardware = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="The hardware, as people say it: a GPU ('rtx 4090', 'rtx 4060 ti 16gb', 'h100'), several "
        "('2x 3090'), a mixed rig ('4090 + 3090'), a Mac ('m3 max 128gb', 'mac studio m2 ultra 192gb'), an APU "
        "('ryzen ai max+ 395'), or generic memory ('a 24 GB GPU', 'cpu only with 64 GB RAM').",
    ),
]
GpuCount = Annotated[int | None, Field(ge=1, description="How many of these GPUs (default 1).")]
ContextTokens = Annotated[int | None, Field(ge=1, description="Context length in tokens, e.g. 32768 (default 8192).")]
Quant = Annotated[
    QuantName | None,
    Field(description="Weight quantization (default Q4_K_M for llama.cpp; FP8/AWQ/NVFP4 switch to vLLM)."),
]
KvCache = Annotated[KvCacheName | None, Field(description="KV cache type (default f16 for llama.cpp, bf16 for vLLM).")]
EngineChoice = Annotated[EngineName | None, Field(description="Inference engine (default llama.cpp).")]
BackendChoice = Annotated[
    BackendName | None, Field(description="llama.cpp backend, when not the device's usual one (e.g. vulkan).")
]
Users = Annotated[int | None, Field(ge=1, description="Concurrent users served together (batching; default 1).")]
RamGb = Annotated[float | None, Field(gt=0, description="System RAM in GB, for offloading (default 64).")]
Language = Annotated[
    Literal["en", "de"] | None,
    Field(description="Language of the text: 'en' or 'de' (default English; `ask` follows the question)."),
]


class ToolAnswer(BaseModel):
    """What every tool returns: the card's numbers, plus its text in the asked language."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="The answer's kind: fit, speed, cloud, quant, gpus, models, finetune, compare, ...")
    language: Literal["en", "de"]
    title: str
    text: str = Field(description="The whole answer as plain text in `language`; quote or summarise it.")
    subjects: tuple[Subject, ...] = Field(
        default=(),
        description="Each model x hardware the answer is about, with `figures`: the numbers the text shows "
        "(memory in GiB, verdict, decode/prefill tok/s with bands, time to first token in s, $ per million tokens).",
    )
    table: Table | None = Field(default=None, description="The ranking or per-quant table of a list answer.")
    commands: tuple[CodeBlock, ...] = Field(default=(), description="Launch commands that reproduce the estimate.")
    suggestions: tuple[str, ...] = Field(default=(), description="'Did you mean' choices when a name was unclear.")
    follow_ups: tuple[str, ...] = Field(
        default=(), description="Questions the answer offers next (e.g. each suggestion); pass one to `ask`."
    )


def tool_answer(reply: Reply) -> ToolAnswer:
    return ToolAnswer(
        kind=reply.kind,
        language=reply.locale,
        title=reply.title,
        text=to_console(reply),
        subjects=reply.subjects,
        table=reply.table,
        commands=reply.code,
        suggestions=reply.suggestions,
        follow_ups=tuple(a.question for a in reply.actions),
    )


STDIO = "mcp:stdio"  # the one local user of a stdio server (a desktop client starts its own)


def client_of(ctx: Context | None) -> str:
    """Who calls, as a user id: the HTTP client's address ("mcp:10.0.0.7"; behind a reverse proxy on this host,
    the address it forwards), or the local user of a stdio server."""
    request = ctx.request_context.request if ctx is not None else None
    client = getattr(request, "client", None)
    return f"mcp:{client.host}" if client is not None and getattr(client, "host", None) else STDIO


async def answer(service: Service, text: str, language: Lang | None, ctx: Context | None) -> CallToolResult:
    """The tool's result for a question: the card as text and structured content, or a tool error. HTTP clients
    get the service's per-user limits; the stdio user is the machine's owner and is not limited. Nothing is
    saved for either (/mygpu, /lang say so): each tool call names its whole setup."""
    user = User(id=client_of(ctx), lang=language, anonymous=True)
    with Limits.free_of_charge() if user.id == STDIO else nullcontext():
        reply = await service.answer(text, user=user)
    result = tool_answer(reply)
    return CallToolResult(
        content=[TextContent(type="text", text=result.text)],
        structured_content=result.model_dump(mode="json"),
        is_error=reply.kind in UNANSWERED,
    )
