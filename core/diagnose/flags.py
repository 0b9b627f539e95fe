"""Reads a pasted launch command into settings: llama.cpp, vLLM and Ollama. Never executes anything.

The text is split with ``shlex`` (POSIX rules; line continuations ``\\``, ``^`` and PowerShell's
backtick are joined first), environment assignments in front (``CUDA_VISIBLE_DEVICES=0,1``,
``OLLAMA_KV_CACHE_TYPE=q8_0``) are read, and every flag is looked up in the engine's table. A flag the
table does not know is listed as unknown, never guessed; a value that does not parse is listed too.

Flag names and defaults: llama.cpp ``tools/server/README.md`` (ggml-org/llama.cpp @00dc805, read
2026-12-01: ``-c`` default 0 = from the model, ``-ngl`` default auto, ``--fit`` default on with a
1024 MiB margin and ``--fit-ctx`` 4096, ``--draft-max`` removed in favour of ``--spec-draft-n-max``);
vLLM engine arguments (docs.vllm.ai, ``vllm serve``); Ollama ``docs/faq.md`` and ``docs/modelfile.md``.
"""

from __future__ import annotations

import re
import shlex
from typing import Literal

from pydantic import Field

from core.diagnose.docker import DOCKER_START, container_command, engine_of_image
from core.diagnose.tables import LLAMA_REMOVED, LLAMA_SWITCH, LLAMA_VALUE, VLLM_SWITCH, VLLM_VALUE
from core.models import Frozen

MAX_PASTE_CHARS = 8000  # a Telegram message is 4096; a log excerpt of a few screens
MAX_TOKENS = 300
MAX_PATTERN_CHARS = 200  # one -ot pattern

EngineName = Literal["llama.cpp", "vllm", "ollama"]

_LLAMA_PROGRAMS = ("llama-server", "llama-cli", "llama-run", "llama-bench", "server", "main", "llama-mtmd-cli")
_CONTINUATION = re.compile(r"(?:\\|\^|`)[ \t]*\r?\n")
_PROMPT_PREFIX = re.compile(r"^\s*(?:\$|>|#|PS [^>]*>)\s+")
_ENV = re.compile(r"^([A-Z_][A-Z0-9_]{0,63})=(.*)$")
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
QUANT_IN_NAME = re.compile(
    r"(?<![A-Za-z0-9])(UD-[A-Z0-9_]+|I?Q\d_[A-Z0-9_]+|Q\d_\d|Q\d_K(?:_[SMLX]{1,2})?|IQ\d_[A-Z]+|MXFP4(?:_MOE)?|"
    r"BF16|F16|FP16|F32|FP8|NVFP4|AWQ|GPTQ(?:-INT[48])?|INT4|INT8|W4A16|bnb-4bit)(?![A-Za-z0-9])",
    re.I,
)


class LaunchFlags(Frozen):
    """What one pasted command asks for; None means "not given" (the engine's default applies)."""

    engine: EngineName
    program: str
    argv: tuple[str, ...]  # the tokens, environment assignments first, as pasted
    model_ref: str | None = None  # a path, "repo[:quant]", or an Ollama tag
    quant: str | None = None  # read from the file name, the -hf suffix, the repo name or --quantization
    context: int | None = Field(default=None, ge=0)  # -c / --max-model-len / num_ctx; 0 = from the model
    gpu_layers: int | None = None  # -ngl / num_gpu; None = auto; 999 = all
    n_cpu_moe: int | None = Field(default=None, ge=0)
    cpu_moe_all: bool = False
    overrides: tuple[tuple[str, str], ...] = ()  # -ot (pattern, buffer type)
    tensor_split: tuple[float, ...] = ()
    cache_k: str | None = None
    cache_v: str | None = None
    flash_attn: Literal["on", "off", "auto"] | None = None
    parallel: int | None = None
    batch: int | None = None
    ubatch: int | None = None
    fit: bool | None = None  # --fit on/off; None = the default (on)
    no_kv_offload: bool = False
    mmproj: str | None = None
    draft_model: str | None = None
    draft_max: int | None = None
    tensor_parallel: int | None = None
    pipeline_parallel: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str | None = None
    max_num_seqs: int | None = None
    cpu_offload_gb: float | None = None
    visible_devices: int | None = None  # CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES: how many
    env: tuple[tuple[str, str], ...] = ()
    unknown: tuple[str, ...] = ()  # flags the engine's table does not have
    removed: tuple[tuple[str, str], ...] = ()  # (flag, what replaces it)
    bad_values: tuple[str, ...] = ()  # flags whose value does not parse


class ParseFailure(Frozen):
    """Why a paste could not be read: ``reason`` is a locale code (``diagnose.fail.<reason>``)."""

    reason: Literal["too_long", "no_command", "quotes", "too_many_tokens", "no_model"]


def join_lines(text: str) -> str:
    """One logical command: continuation backslashes, carets and backticks joined, prompts dropped."""
    return _CONTINUATION.sub(" ", text)


_ENV_WORDS = r"(?:[A-Z_][A-Z0-9_]{0,63}=\S*\s+)*"
_START = re.compile(
    r"(?:^|(?<=\s))" + _ENV_WORDS + r"(?:"
    r"(?:\S*[/\\])?(?:llama-server|llama-cli|llama-run|llama-mtmd-cli)(?:\.exe)?\s"
    r"|\S*[/\\](?:server|main)(?:\.exe)?\s"  # a bare "main"/"server" is a word, "./main" a program
    r"|vllm\s+serve\s|python3?\s+-m\s+vllm\.entrypoints\.openai\.api_server"
    r"|ollama\s+(?:run|pull|create)\s)",
    re.I,
)
# where the user's words start again after a command on the same line ("... -c 8192 on my 4090")
_TAIL = re.compile(
    r"(?<!-fa)(?<!--flash-attn)(?<!--fit)\s+(?:on|auf|with|mit|using|bei|für|for)\s+"
    r"(?:my|a|an|the|meiner|meinem|meine|einer|einem|\d|rtx|gtx|rx|radeon|mac|m\d|two|zwei|dual)",
    re.I,
)


def split_paste(text: str) -> tuple[EngineName, str, str] | None:
    """(engine, the command, the user's words around it) of the first launch command; None if none."""
    lines = join_lines(text).splitlines()
    for n, raw in enumerate(lines):
        line = _PROMPT_PREFIX.sub("", raw).strip()
        if docker := _docker_line(line):
            rest = [x for i, x in enumerate(lines) if i != n and not x.lstrip().startswith("-")]
            return docker[0], docker[1], " ".join([docker[2], *rest]).strip()
        m = _START.search(line)
        if m is None:
            if re.match(r"^FROM\s+\S+$", line, re.I) and (
                re.search(r"[:/]|\.gguf$", line) or re.search(r"^\s*PARAMETER\s", text, re.I | re.M)
            ):
                return "ollama", line, " ".join([*lines[:n], *_modelfile_prose(lines[n + 1 :])])  # a Modelfile
            continue
        command, before = line[m.start() :], line[: m.start()]
        for tail in _TAIL.finditer(command):
            head = command[: tail.start()]
            if head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
                command, before = head, f"{before} {command[tail.start() :]}"
                break
        words = m.group(0).lower()
        engine: EngineName = "vllm" if "vllm" in words else "ollama" if "ollama" in words else "llama.cpp"
        rest = [x for i, x in enumerate(lines) if i != n and not x.lstrip().startswith("-")]
        return engine, command.strip(), " ".join([before, *rest]).strip()
    return None


# a Modelfile's instructions (ollama docs/modelfile.md): the lines that are no words of the user's
_MODELFILE_LINE = re.compile(r"^\s*(?:FROM|PARAMETER|TEMPLATE|SYSTEM|ADAPTER|LICENSE|MESSAGE|REQUIRES)\b|^\s*#", re.I)


def _modelfile_prose(lines: list[str]) -> list[str]:
    """The lines after a Modelfile's FROM that are neither an instruction nor inside a triple-quoted value."""
    words, quoted = [], False
    for line in lines:
        if quoted or _MODELFILE_LINE.match(line):
            quoted ^= line.count('"""') % 2 == 1
            continue
        words.append(line)
    return words


def _docker_line(line: str) -> tuple[EngineName, str, str] | None:
    """(engine, the docker command, the words after it) of a ``docker run`` line of an engine's image."""
    m = DOCKER_START.search(line)
    if m is None:
        return None
    command, after = line[m.start() :], ""
    for tail in _TAIL.finditer(command):
        head = command[: tail.start()]
        if head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            command, after = head, command[tail.start() :]
            break
    image = next((w for w in command.split() if engine_of_image(w.strip("'\"")) is not None), None)
    if image is None:
        return None
    engine = engine_of_image(image.strip("'\""))
    assert engine is not None
    return engine, command.strip(), f"{line[: m.start()]} {after}".strip()


def find_command(text: str) -> tuple[EngineName, str] | None:
    """The first launch command in ``text`` with its engine; None when there is none."""
    found = split_paste(text)
    return (found[0], found[1]) if found else None


def spoken_command(text: str) -> bool:
    """Whether a message's one launch command is the user's words, not a command they ran ("vllm serve
    llama 3.1 8b on a 4090 with 8 users", "how many users can vllm serve with qwen3 32b"): one line, and
    after the program come two words or more, none of them a flag, a path, a repo id or a tag. A command
    an engine accepts names its model in one word (``-m x.gguf``, ``Qwen/Qwen3-32B``, ``qwen3:8b``)."""
    if "\n" in text.strip() or (found := split_paste(text)) is None or found[1].lower().startswith(("docker", "from")):
        return False
    start = _START.match(found[1])
    words = found[1][start.end() :].split() if start else []
    return len(words) >= 2 and not any(w.startswith("-") or re.search(r"[/\\:=]|\.(?:gguf|json)$", w) for w in words)


def parse_command(text: str) -> LaunchFlags | ParseFailure:
    """The settings of the first launch command in ``text`` (never raises, never runs anything)."""
    if len(text) > MAX_PASTE_CHARS:
        return ParseFailure(reason="too_long")
    found = find_command(text)
    if found is None:
        return ParseFailure(reason="no_command")
    engine, line = found
    if re.search(r"(?<![A-Za-z])[A-Za-z]:\\", line):  # a Windows path: its backslashes are separators
        line = line.replace("\\", "/")
    try:
        tokens = shlex.split(line, comments=False, posix=True)
    except ValueError:
        return ParseFailure(reason="quotes")
    if len(tokens) > MAX_TOKENS:
        return ParseFailure(reason="too_many_tokens")
    env: list[tuple[str, str]] = []
    while tokens and (m := _ENV.match(tokens[0])):
        env.append((m.group(1), m.group(2)))
        tokens = tokens[1:]
    if tokens and tokens[0] == "sudo":
        tokens = tokens[1:]
    if tokens and tokens[0] in ("docker", "podman"):
        inside = container_command(tokens, text)
        if inside is None:
            return ParseFailure(reason="no_command")
        engine, tokens, docker_env = inside
        env += docker_env
    if engine == "ollama":
        return _ollama(tokens, env, text)
    if engine == "vllm":
        return _vllm(tokens, env)
    return _llama(tokens, env)


def _lookup(tables: tuple[dict[str, tuple[str, ...]], ...]) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for arity, table in enumerate(tables):
        for key, names in table.items():
            for name in names:
                out[name] = (key, 1 - arity)  # first table takes a value, second does not
    return out


_LLAMA_FLAGS = _lookup((LLAMA_VALUE, LLAMA_SWITCH))
_VLLM_FLAGS = _lookup((VLLM_VALUE, VLLM_SWITCH))


def _scan(
    tokens: list[str], flags: dict[str, tuple[str, int]], removed: dict[str, str], optional: frozenset[str]
) -> tuple[dict[str, list[str]], list[str], list[str], list[tuple[str, str]]]:
    """Walks the argv: (values per key, positionals, unknown flags, removed flags).

    ``optional`` keys take a value only when the next token is not a flag ("-fa" alone was a switch).
    """
    values: dict[str, list[str]] = {}
    positional: list[str] = []
    unknown: list[str] = []
    gone: list[tuple[str, str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("-") or _NUMBER.match(token) or token == "-":
            positional.append(token)
            continue
        name, eq, inline = token.partition("=")
        if name in removed:
            gone.append((name, removed[name]))
            if not eq and i < len(tokens) and not tokens[i].startswith("-"):
                i += 1
            continue
        if name not in flags:
            unknown.append(name)
            if not eq and i < len(tokens) and not tokens[i].startswith("-") and len(unknown) < 50:
                i += 1  # its value, if any, is not a positional either
            continue
        key, arity = flags[name]
        if arity == 0:
            values.setdefault(key, []).append("on")
            continue
        if eq:
            values.setdefault(key, []).append(inline)
        elif i < len(tokens) and not (key in optional and tokens[i].startswith("-")):
            values.setdefault(key, []).append(tokens[i])
            i += 1
        elif key in optional:
            values.setdefault(key, []).append("on")
        else:
            values.setdefault(key, []).append("")
    return values, positional, unknown, gone


def _last(values: dict[str, list[str]], key: str) -> str | None:
    found = values.get(key)
    return found[-1] if found else None


def _int(values: dict[str, list[str]], key: str, bad: list[str], words: dict[str, int] | None = None) -> int | None:
    """The flag's last value as an integer; a value that is no number is listed in ``bad``."""
    raw = _last(values, key)
    if raw is None:
        return None
    low = raw.strip().lower()
    if words and low in words:
        return words[low]
    try:
        return int(float(low))
    except ValueError:
        bad.append(key)
        return None


def _float(values: dict[str, list[str]], key: str, bad: list[str]) -> float | None:
    raw = _last(values, key)
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        bad.append(key)
        return None


def quant_of(name: str) -> str | None:
    """The quant a file, repo or tag names ("Qwen3-8B-Q4_K_M.gguf" -> "Q4_K_M"), if any."""
    hits: list[str] = QUANT_IN_NAME.findall(name.rsplit("/", 1)[-1]) or QUANT_IN_NAME.findall(name)
    if not hits:
        return None
    q = str(hits[-1]).upper().replace("FP16", "F16")
    return {"MXFP4_MOE": "MXFP4", "BNB-4BIT": "NF4", "W4A16": "GPTQ"}.get(q, q)


def _visible(env: list[tuple[str, str]]) -> int | None:
    for key, value in env:
        if key in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
            ids = [v for v in value.split(",") if v.strip()]
            return len(ids)
    return None


def _overrides(raw: list[str], bad: list[str]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for item in raw:
        for part in item.split(","):
            pattern, eq, buffer = part.rpartition("=")
            if not eq or not pattern or len(pattern) > MAX_PATTERN_CHARS:
                bad.append("ot")
                continue
            out.append((pattern, buffer.strip()))
    return tuple(out)


def _llama(tokens: list[str], env: list[tuple[str, str]]) -> LaunchFlags | ParseFailure:
    program = tokens[0].rsplit("/", 1)[-1] if tokens else "llama-server"
    values, positional, unknown, gone = _scan(tokens[1:], _LLAMA_FLAGS, LLAMA_REMOVED, frozenset({"fa"}))
    bad: list[str] = []
    model = _last(values, "model")
    hf = _last(values, "hf")
    ref = hf or model or _last(values, "hf_file")
    quant = None
    if hf and ":" in hf:
        ref, quant = hf.rsplit(":", 1)
        quant = quant.upper()
    elif ref:
        quant = quant_of(_last(values, "hf_file") or ref)
    if ref is None:
        return ParseFailure(reason="no_model")
    split: tuple[float, ...] = ()
    if ts := _last(values, "ts"):
        try:
            split = tuple(float(x) for x in re.split(r"[,/]", ts) if x.strip())
        except ValueError:
            bad.append("ts")
    fa = (_last(values, "fa") or "").lower()
    flash: Literal["on", "off", "auto"] | None = None
    if fa:
        flash = "on" if fa in ("on", "1", "true", "enabled") else "off" if fa in ("off", "0", "false") else "auto"
        if fa not in ("on", "1", "true", "enabled", "off", "0", "false", "auto"):
            bad.append("fa")
    fit_raw = _last(values, "fit")
    ngl = _int(values, "ngl", bad, {"all": 999, "auto": -1, "-1": -1})
    return LaunchFlags(
        engine="llama.cpp",
        program=program,
        argv=tuple(f"{k}={v}" for k, v in env) + tuple(tokens),
        model_ref=ref,
        quant=quant,
        context=_nonneg(_int(values, "ctx", bad), bad, "ctx"),
        gpu_layers=None if ngl is None or ngl < 0 else ngl,
        n_cpu_moe=_nonneg(_int(values, "n_cpu_moe", bad), bad, "n_cpu_moe"),
        cpu_moe_all="cpu_moe" in values,
        overrides=_overrides(values.get("ot", []), bad),
        tensor_split=split,
        cache_k=(_last(values, "ctk") or "").lower() or None,
        cache_v=(_last(values, "ctv") or "").lower() or None,
        flash_attn=flash,
        parallel=_int(values, "np", bad),
        batch=_int(values, "batch", bad),
        ubatch=_int(values, "ubatch", bad),
        fit=None if fit_raw is None else fit_raw.lower() in ("on", "1", "true", "enabled"),
        no_kv_offload="no_kv_offload" in values,
        mmproj=_last(values, "mmproj"),
        draft_model=_last(values, "draft_model") or _last(values, "draft_hf"),
        draft_max=_int(values, "draft_max", bad),
        visible_devices=_visible(env),
        env=tuple(env),
        unknown=tuple(dict.fromkeys(unknown)),
        removed=tuple(gone),
        bad_values=tuple(dict.fromkeys(bad)),
    )


def _nonneg(value: int | None, bad: list[str], key: str) -> int | None:
    if value is not None and value < 0:
        bad.append(key)
        return None
    return value


def _vllm(tokens: list[str], env: list[tuple[str, str]]) -> LaunchFlags | ParseFailure:
    start = 2 if len(tokens) > 1 and tokens[1] == "serve" else 1
    if tokens and tokens[0].startswith("python"):
        start = next((i + 1 for i, t in enumerate(tokens) if t.endswith("api_server")), len(tokens))
    values, positional, unknown, gone = _scan(tokens[start:], _VLLM_FLAGS, {}, frozenset())
    bad: list[str] = []
    ref = positional[0] if positional else _last(values, "model")
    if ref is None:
        return ParseFailure(reason="no_model")
    qflag = _last(values, "quantization")
    return LaunchFlags(
        engine="vllm",
        program="vllm serve",
        argv=tuple(f"{k}={v}" for k, v in env) + tuple(tokens),
        model_ref=ref,
        quant=quant_of(ref) or (qflag.upper() if qflag else None),
        context=_nonneg(_int(values, "max_model_len", bad), bad, "max_model_len"),
        tensor_parallel=_int(values, "tp", bad),
        pipeline_parallel=_int(values, "pp", bad),
        gpu_memory_utilization=_float(values, "gmu", bad),
        kv_cache_dtype=(_last(values, "kv_dtype") or "").lower() or None,
        max_num_seqs=_int(values, "max_num_seqs", bad),
        cpu_offload_gb=_float(values, "cpu_offload_gb", bad),
        draft_model=_last(values, "speculative_config"),
        visible_devices=_visible(env),
        env=tuple(env),
        unknown=tuple(dict.fromkeys(unknown)),
        removed=tuple(gone),
        bad_values=tuple(dict.fromkeys(bad)),
    )


_MODELFILE_PARAM = re.compile(r"^\s*PARAMETER\s+(num_ctx|num_gpu|num_batch|num_thread)\s+(\d+)\s*$", re.I | re.M)
_MODELFILE_FROM = re.compile(r"^\s*FROM\s+(\S+)\s*$", re.I | re.M)
_SET_PARAM = re.compile(r"/set\s+parameter\s+(num_ctx|num_gpu)\s+(\d+)", re.I)


def _ollama(tokens: list[str], env: list[tuple[str, str]], text: str) -> LaunchFlags | ParseFailure:
    """``ollama run TAG`` (with ``/set parameter num_ctx N``) or a Modelfile (FROM + PARAMETER lines)."""
    ref: str | None = None
    if tokens and tokens[0].lower() == "from" and len(tokens) > 1:
        ref = tokens[1]
    elif len(tokens) > 2 and tokens[1] in ("run", "pull"):
        ref = next((t for t in tokens[2:] if not t.startswith("-")), None)
    if ref is None and (m := _MODELFILE_FROM.search(text)):
        ref = m.group(1)
    if ref is None:
        return ParseFailure(reason="no_model")
    params = {k.lower(): int(v) for k, v in _MODELFILE_PARAM.findall(text)}
    params.update({k.lower(): int(v) for k, v in _SET_PARAM.findall(text)})
    env_map = dict(env)
    ctx_env = env_map.get("OLLAMA_CONTEXT_LENGTH")
    context = params.get("num_ctx") or (int(ctx_env) if ctx_env and ctx_env.isdigit() else None)
    fa_env = env_map.get("OLLAMA_FLASH_ATTENTION")
    kv = env_map.get("OLLAMA_KV_CACHE_TYPE")
    tag = ref.rsplit(":", 1)[1] if ":" in ref.rsplit("/", 1)[-1] else ""
    return LaunchFlags(
        engine="ollama",
        program="ollama",
        argv=tuple(f"{k}={v}" for k, v in env) + tuple(tokens),
        model_ref=ref,
        quant=quant_of(tag) if tag else quant_of(ref) if ref.lower().endswith(".gguf") else None,
        context=context,
        gpu_layers=params.get("num_gpu"),
        cache_k=kv.lower() if kv else None,
        cache_v=kv.lower() if kv else None,
        flash_attn=None if fa_env is None else "on" if fa_env in ("1", "true") else "off",
        visible_devices=_visible(env),
        env=tuple(env),
    )


def ollama_model_name(ref: str) -> str:
    """ "hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M" -> "Qwen3-8B"; "qwen3:30b-a3b" -> "qwen3 30b a3b"."""
    name = ref.removeprefix("hf.co/").removeprefix("huggingface.co/")
    if "/" in name:
        name = name.rsplit("/", 1)[-1].split(":", 1)[0]
        return re.sub(r"[-_.]GGUF$", "", name, flags=re.I)
    base, _, tag = name.partition(":")
    tag = QUANT_IN_NAME.sub("", tag).strip("-_")
    return f"{base} {tag.replace('-', ' ')}".strip()


def model_words(flags: LaunchFlags) -> str:
    """The model reference as words the name matcher reads ("Qwen3-30B-A3B" from a path or repo)."""
    ref = flags.model_ref or ""
    if flags.engine == "ollama":
        return ollama_model_name(ref)
    name = ref.replace("\\", "/").rsplit("/", 1)[-1]
    name = re.sub(r"-\d{5}-of-\d{5}", "", name)
    name = re.sub(r"\.gguf$", "", name, flags=re.I)
    name = QUANT_IN_NAME.sub("", name)
    name = re.sub(r"[-_.]GGUF$|[-_.]GGUF[-_.]|[-_.](?:instruct|it|chat)$", " ", name, flags=re.I)
    return re.sub(r"[-_]+", " ", name).strip()


__all__ = [
    "MAX_PASTE_CHARS",
    "LaunchFlags",
    "ParseFailure",
    "find_command",
    "model_words",
    "parse_command",
    "quant_of",
    "spoken_command",
]
