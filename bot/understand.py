"""``understand``: one message read once into a frozen ``Question``.

Everything the answer needs from the words is read here: the /command, what kind of message it is (a
question, a settings command, a pasted command or log, a pasted benchmark run, models side by side), the
parsed query (for a paste: the user's words around it; side by side: the question without its side
models), the words after a name the catalog lacks, the model a repo id is a copy of. After it, the
message's text travels only to be echoed (``echo``) or, for a paste, to its reader (``paste``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot import commands
from bot.question_kinds import PASTE_PREFIX, asks_together, is_paste
from catalog.extra_facts import side_models
from core.diagnose.flags import MAX_PASTE_CHARS, join_lines, ollama_model_name, split_paste
from core.diagnose.log import looks_like_log
from core.models import Catalog, ModelSpec
from core.multi_model import SideModel
from core.notes import Note
from core.query.names import MODEL_VARIANTS
from core.query.parse import Query, Vocabulary, parse
from core.runs.paste import looks_like_runs

MAX_QUESTION_CHARS = 2000  # a question longer than this is answered "too long" (a paste may be longer)
Kind = Literal["question", "session", "runs", "paste", "together", "too_long"]
_LLM_WORD = re.compile(r"\b(?:an?\s+)?(?:llm|language model|sprachmodell|chat ?model)\b", re.I)
# the words that name a side model's kind and get the default model of that kind (the card says which)
SIDE_DEFAULT_WORDS = frozenset(
    {"whisper", "embedder", "embedding model", "embeddings", "embedding", "einbettungsmodell"}
)
# what quantizers append to a model's repo name (bartowski, unsloth, mlx-community, RedHatAI, the publishers)
_COPY_SUFFIX = re.compile(
    r"(?:[-_.](?:gguf|awq|gptq(?:[-_]int[48])?|fp8(?:[-_]dynamic)?|w4a16|w8a8|nvfp4|mlx|bnb|\d+[-_]?bits?))+$", re.I
)


@dataclass(frozen=True)
class Question:
    """One message as read. ``text`` is kept to be echoed (and, for a paste, read by the paste's reader)."""

    text: str
    kind: Kind
    command: commands.Command
    query: Query
    session: str | None = None  # /mygpu, /lang, ... or a session sentence ("vergiss mich")
    paste: str = ""  # a pasted command, log or run, without a leading /diagnose
    sides: tuple[SideModel, ...] = ()  # side models named next to the LLM (speech, embeddings)
    side_defaults: tuple[str, ...] = ()  # the side models taken as the default of their kind
    unknown_name: str | None = None  # a model name the catalog lacks, as typed ("olmo 2 7b")
    index_phrase: str | None = None  # that name with the variant words after it, for the offline index
    offline: tuple[Query, Note] | None = None  # a repo id the catalog lacks read as the catalog model it copies

    @property
    def language(self) -> Literal["de", "en"] | None:
        return self.query.language


def understand(text: str, vocab: Vocabulary, catalog: Catalog, max_chars: int = MAX_QUESTION_CHARS) -> Question:
    """The one reading of a message (pure: the same text gives the same Question)."""
    command = commands.read(text)
    if looks_like_runs(text):  # a pasted benchmark run calibrates the user's answers (issue 38)
        return Question(text, "runs", command, Query(), paste=text)
    if is_paste(text):
        body = PASTE_PREFIX.sub("", text, count=1)
        return Question(text, "paste", command, parse(paste_prose(body[:MAX_PASTE_CHARS]), vocab), paste=body)
    if asks_together(text) and len(text) <= max_chars:
        sides, rest, defaults = _sides(text)
        return Question(text, "together", command, parse(_LLM_WORD.sub(" ", rest), vocab), sides=sides,
                        side_defaults=defaults)  # fmt: skip
    if len(text) > max_chars:
        return Question(text, "too_long", command, Query())
    query = parse(command.rest, vocab, command.intent)
    if (session := _session(command, query, text)) is not None:
        return Question(text, "session", command, query, session=session)
    phrase = _unknown_model(query)
    return Question(
        text,
        "question",
        command,
        query,
        unknown_name=phrase or None,
        index_phrase=_with_variants(phrase, text) if phrase else None,
        offline=_offline(query.hf_repo, text, vocab, catalog) if query.hf_repo else None,
    )


def paste_prose(body: str) -> str:
    """The user's own words around a paste: what is neither the command nor log output (log lines go
    first, so a log pasted under the command does not hide the words next to it)."""
    log = looks_like_log(body)
    lines = [line for line in join_lines(body).splitlines() if not log or not looks_like_log(line)]
    rest = "\n".join(lines)
    found = split_paste(rest)
    return " ".join((found[2] if found else rest).splitlines())[:500]


def _copy_of(catalog: Catalog, repo: str) -> ModelSpec | None:
    """The catalog model a repo is a copy of, by name alone: a row's own GGUF repo, or a repo whose
    name is a row's repo name plus what quantizers append ("-GGUF", "-AWQ", "-FP8-dynamic", "-4bit")."""
    low = repo.lower()
    name = _COPY_SUFFIX.sub("", low.rsplit("/", 1)[-1])
    for model in catalog.models:
        if (model.gguf_repo or "").lower() == low:
            return model
    return next((m for m in catalog.models if (m.hf_repo or "").lower().rsplit("/", 1)[-1] == name), None)


def in_catalog(catalog: Catalog, repo: str) -> bool:
    return any((m.hf_repo or "").lower() == repo.lower() for m in catalog.models)


def _session(command: commands.Command, q: Query, text: str) -> str | None:
    """The settings command (/mygpu, /lang, ...) or sentence the text is, if any."""
    if command.session:
        return command.name
    session = commands.session_sentence(text) if command.name is None else None
    if session == "mygpu" and (q.gpu is None or q.model is not None or "intent" in q.explicit):
        return None  # "I have a question about qwen3 on a 4090", "ich hab zwei 3090er, was kann ich laufen lassen?"
    return session


def _unknown_model(q: Query) -> str | None:
    """The phrase of a model the catalog does not have (a name it resolved or asked about is not one)."""
    if q.model is not None:
        return q.model.text if q.model.unknown else None
    return q.model_text


def _with_variants(phrase: str, text: str) -> str:
    """The typed name with the variant words written right after it ("llama 3.2 90b" + "vision"), so
    the index finds that variant and not the family's plain model; a "+" right after it is "plus"
    ("command r+" is Command R Plus, not Command R)."""
    m = re.search(re.escape(phrase) + r"(\+(?!\w))?((?:[\s-]+[^\W\d_]+)*)", text, re.IGNORECASE)
    words: list[str] = ["plus"] if m and m.group(1) else []
    for word in re.split(r"[\s-]+", m.group(2).strip(" -")) if m else ():
        if word.lower() not in MODEL_VARIANTS:
            break
        words.append(word)
    return " ".join([phrase, *words])


def _sides(text: str) -> tuple[tuple[SideModel, ...], str, tuple[str, ...]]:
    """The side models named (longest alias first, one per kind), the text without them, defaults taken."""
    low = text.lower()
    found: list[SideModel] = []
    defaults: list[str] = []
    aliases = sorted(((a, s) for s in side_models() for a in s.aliases), key=lambda x: -len(x[0]))
    for alias, side in aliases:
        pattern = re.compile(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", re.I)
        if pattern.search(low) and all(f.kind != side.kind for f in found):
            found.append(side)
            if alias in SIDE_DEFAULT_WORDS:
                defaults.append(side.name)
            low = pattern.sub(" ", low)
    return tuple(found), low, tuple(defaults)


def _offline(repo: str, text: str, vocab: Vocabulary, catalog: Catalog) -> tuple[Query, Note] | None:
    """A repo id the catalog lacks, read without the hub as the model it names ("unsloth/Qwen3.5-27B-GGUF
    Q6_K" is Qwen3.5-27B at Q6_K, "Qwen/Qwen3-14B-AWQ" Qwen3-14B at AWQ) when that is a catalog model;
    with a note naming the repo and the model it was read as. The service uses it when the hub is not
    there or fails."""
    if in_catalog(catalog, repo):
        return None
    typed = re.compile(
        r"(?:https?://)?(?:www\.)?(?:(?:hf\.co|huggingface\.co)/)?(?:models/)?" + re.escape(repo) + r"(?::([\w.-]+))?",
        re.I,
    )
    m = typed.search(text)
    if m is None:
        return None
    copied = _copy_of(catalog, repo)
    if copied is not None:  # its id, and what the copy's name says of its format ("awq", "fp8 dynamic", "4bit")
        suffix = _COPY_SUFFIX.search(repo.rsplit("/", 1)[-1])
        words = f"{copied.id} {suffix[0].replace('-', ' ').replace('_', ' ') if suffix else ''}"
    else:
        words = ollama_model_name(f"hf.co/{repo}").replace("_", " ")
    command = commands.read(f"{text[: m.start()]} {words} {m[1] or ''} {text[m.end() :]}")
    q = parse(command.rest, vocab, command.intent)
    if q.model is None or not q.model.id or q.hf_repo:
        return None
    model = catalog.model(q.model.id)
    name = model.name if model else q.model.id
    return q, Note(code="repo_offline", values={"repo": repo, "model": name})


__all__ = ["Question", "in_catalog", "paste_prose", "understand"]
