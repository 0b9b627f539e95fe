"""Pasted benchmark output, read into runs: pure, bounded, and every pattern linear.

The formats, as their programs print them (fixtures with sources: ``tests/core/data/runs/``):

* llama-bench's markdown table (``tools/llama-bench/llama-bench.cpp``, ``markdown_printer``): a header
  ``| model | size | params | backend | ngl | test | t/s |`` (more columns with more options), rows such
  as ``| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 127.41 ± 0.34 |`` (older builds:
  ``tg 128``; with ``-d``: ``pp512 @ d4096``), and a last line ``build: 8a1d9c25 (4305)``.
* llama-bench ``-o json`` / ``-o jsonl``: objects with ``model_type``, ``model_size``, ``model_n_params``,
  ``backends`` (older: ``backend``), ``gpu_info``, ``n_prompt``, ``n_gen``, ``n_depth``, ``avg_ts``,
  ``stddev_ts``, ``build_commit``, ``build_number``.
* llama-server's and llama-cli's timings (``print_timings`` / ``llama_perf_context_print``):
  ``prompt eval time = 123.45 ms / 512 tokens (0.24 ms per token, 4147.39 tokens per second)`` and
  ``eval time = ... / 127 runs (... tokens per second)``.
* ``ollama run --verbose``: ``prompt eval count: 512 token(s)``, ``prompt eval rate: 1234.56 tokens/s``,
  ``eval count``, ``eval rate``.
* vLLM's serving benchmark: ``Output token throughput (tok/s): 1234.5`` (all requests together, with
  ``Maximum request concurrency`` when it was capped).

Nothing here trusts the paste: it is cut at ``MAX_PASTE_CHARS``, values must be finite and positive
and below ``MAX_TOKENS_PER_S``, a JSON that does not parse is a ``problem`` (never a partial read of
its objects), and the patterns have no nested quantifiers (the text may be hostile).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from core.diagnose.flags import quant_of
from core.models import Frozen

Kind = Literal["decode", "prefill"]
Source = Literal["llama-bench", "llama-server", "ollama", "vllm"]
Problem = Literal["too_long", "truncated_json", "no_runs", "bad_values"]

MAX_PASTE_CHARS = 16_000  # a llama-bench JSON of eight tests; a chat message is 2,000-4,096
MAX_RUNS = 64
MAX_TOKENS_PER_S = 1e7  # no setup reads faster; a larger number is a typo or an attack
MAX_JSON_DEPTH = 8  # llama-bench nests two levels (an array of objects with sample arrays)


class PastedRun(Frozen):
    """One timed test: what ran (as the program named it) and its tokens per second."""

    source: Source
    kind: Kind
    tokens_per_s: float
    n_tokens: int  # tokens the figure timed: pp512 -> 512, a server's eval count
    depth: int = 0  # tokens already in the KV cache (llama-bench -d)
    test: str  # "pp512", "tg128", "pp512 @ d4096", "prompt eval", "eval rate", "output throughput"
    stddev: float | None = None
    model_text: str = ""  # llama-bench's model column / model_type: "llama 8B Q4_K - Medium"
    model_file: str = ""  # llama-bench JSON's model_filename
    quant: str | None = None  # the quant the model text or file names, normalised ("Q4_K_M")
    size_bytes: int | None = None
    params: int | None = None
    backend: str = ""  # as printed: "CUDA", "Vulkan", "ROCm", "Metal,BLAS"
    gpu_info: str = ""
    n_gpu_layers: int | None = None
    build: str = ""  # "8a1d9c25 (4305)"
    concurrency: int | None = None  # vLLM: requests in flight; None where unknown


class Paste(Frozen):
    """What a paste held: its runs, the devices its log lines name, and why nothing was read."""

    runs: tuple[PastedRun, ...] = ()
    devices: tuple[str, ...] = ()  # "NVIDIA GeForce RTX 4090" from ggml_cuda_init / Vulkan / Metal lines
    problem: Problem | None = None
    skipped: int = 0  # rows read but left out (a pp+tg test, a bad number)
    words: str = ""  # the user's own words: the lines that are none of the formats


_NUM = r"(\d{1,9}(?:\.\d{1,9})?)"
# llama-bench markdown
_TS_CELL = re.compile(rf"^{_NUM}(?:\s{{0,4}}±\s{{0,4}}{_NUM})?$")
_TEST_CELL = re.compile(r"^(pp|tg)\s?(\d{1,7})(?:\s{0,4}@\s{0,4}d(\d{1,8}))?$")
_SIZE_CELL = re.compile(rf"^{_NUM}\s?(GiB|MiB|KiB|GB|MB)$")
_PARAMS_CELL = re.compile(rf"^{_NUM}\s?([BMK])$")
_BUILD = re.compile(r"^\s*build:\s{0,4}([0-9a-f]{6,40})\s{0,4}\((\d{1,7})\)", re.M)
# llama-server / llama-cli timings
_TIMING = re.compile(
    r"\b(prompt )?eval time\s{0,8}=\s{0,8}" + _NUM + r"\s{0,4}ms\s{0,4}/\s{0,8}(\d{1,9})\s{0,4}(?:tokens|runs)\s{0,4}"
    r"\(\s{0,8}" + _NUM + r"\s{0,4}ms per token,\s{0,8}" + _NUM + r"\s{0,4}tokens per second\)"
)
# ollama --verbose
_OLLAMA_RATE = re.compile(r"^\W{0,4}(prompt )?eval rate:\s{0,24}" + _NUM + r"\s{0,4}tokens/s", re.M)
_OLLAMA_COUNT = re.compile(r"^\W{0,4}(prompt )?eval count:\s{0,24}(\d{1,9})\s{0,4}token", re.M)
# vLLM benchmark_serving / vllm bench serve
_VLLM_OUTPUT = re.compile(r"Output token throughput \(tok/s\):\s{0,40}" + _NUM)
_VLLM_CONCURRENCY = re.compile(r"Maximum request concurrency:\s{0,40}(\d{1,6})")
# devices a log names
_DEVICE_LINES = (
    re.compile(r"^\s{0,8}Device \d{1,2}: ([^,\n]{2,80}), (?:compute capability|gfx)", re.M),  # CUDA / ROCm
    re.compile(r"ggml_vulkan: \d{1,2} = ([^(|\n]{2,80})", re.M),
    re.compile(r"GPU name:\s{1,20}([^\n]{2,80})", re.M),  # Metal
)
# a program's own log line ("llama_model_loader: ...", "srv  params_from_: ...", "ggml_cuda_init: ..."): not the user's words
_LOG_LINE = re.compile(
    r"^\s{0,8}(?:\w{1,40}_\w{1,40}|srv|slot|main|build|Device \d{1,2}|ggml\w{0,40}|llama\w{0,40})\b.{0,8}[:=]"
)
_FTYPE = re.compile(
    r"\b(mostly )?([A-Z]{1,3}\d?[A-Z0-9_]{0,8})(?: - (Small|Medium|Large|Extra Small|XS|[\d.]{1,5} bpw))?"
)
_SIZE_LABEL = re.compile(r"\b(\d{1,4}(?:\.\d{1,2})?)([BM])(?:-A(\d{1,3}(?:\.\d)?)B)?\b")
_MARKERS = (
    re.compile(r"^\s{0,8}\|\s{0,4}model\s{0,40}\|.{0,400}\bt/s\s{0,40}\|", re.M),
    re.compile(r'"avg_ts"\s{0,4}:'),
    _TIMING,
    _OLLAMA_RATE,
    _VLLM_OUTPUT,
)
_FTYPE_SUFFIX = {"small": "S", "medium": "M", "large": "L", "extra small": "XS", "xs": "XS"}
_UNITS = {"GiB": 1 << 30, "MiB": 1 << 20, "KiB": 1 << 10, "GB": 10**9, "MB": 10**6}
_COUNTS = {"B": 10**9, "M": 10**6, "K": 10**3}


def looks_like_runs(text: str) -> bool:
    """Whether a message carries benchmark output this module reads (cheap: one scan per marker)."""
    head = text[:MAX_PASTE_CHARS]
    return any(m.search(head) for m in _MARKERS)


def read_paste(text: str) -> Paste:
    """The runs of a pasted benchmark; a paste past ``MAX_PASTE_CHARS`` or one that reads as nothing
    is a ``problem``, with no runs."""
    if len(text) > MAX_PASTE_CHARS:
        return Paste(problem="too_long")
    devices = _devices(text)
    runs: list[PastedRun] = []
    skipped = 0
    used: set[int] = set()  # line numbers that belong to a format
    lines = text.splitlines()
    if '"avg_ts"' in text:
        parsed = _json_runs(text)
        if parsed is None:
            return Paste(problem="truncated_json", devices=devices)
        got, bad = parsed
        runs += got
        skipped += bad
        used.update(i for i, line in enumerate(lines) if line.strip()[:1] in ("[", "{", "}", "]", '"'))
    table, bad, table_lines = _markdown_runs(lines, _build_of(text))
    runs += table
    skipped += bad
    used |= table_lines
    for reader in (_timing_runs, _ollama_runs, _vllm_runs):
        got, marked = reader(lines)
        runs += got
        used |= marked
    words = " ".join(
        line.strip()
        for i, line in enumerate(lines)
        if i not in used and not _BUILD.match(line) and not _LOG_LINE.match(line)
    )
    if not runs:
        return Paste(devices=devices, problem="bad_values" if skipped else "no_runs", skipped=skipped, words=words)
    return Paste(runs=tuple(runs[:MAX_RUNS]), devices=devices, skipped=skipped, words=words[:2000])


def normal_quant(model_text: str) -> str | None:
    """The quant a llama-bench model label names: "llama 8B Q4_K - Medium" -> "Q4_K_M", "F16", "MXFP4"."""
    for m in _FTYPE.finditer(model_text):
        base = m.group(2)
        if not re.match(r"^(?:I?Q\d|F16|BF16|F32|MXFP4|TQ\d)", base):
            continue
        suffix = (m.group(3) or "").lower()
        if suffix in _FTYPE_SUFFIX and base.endswith("_K"):
            return f"{base}_{_FTYPE_SUFFIX[suffix]}"
        return base
    return None


def size_label(model_text: str) -> str | None:
    """The size llama-bench's label gives: "llama 8B Q4_K - Medium" -> "8B", "qwen3moe 30B.A3B ..." -> "30B"."""
    m = _SIZE_LABEL.search(model_text)
    return f"{m.group(1)}{m.group(2)}" if m else None


def _devices(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for pattern in _DEVICE_LINES:
        for name in pattern.findall(text):
            name = name.strip()
            if name and name not in found:
                found.append(name)
    return tuple(found[:8])


def _build_of(text: str) -> str:
    m = _BUILD.search(text)
    return f"{m.group(1)} ({m.group(2)})" if m else ""


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and 0 < value < MAX_TOKENS_PER_S else None


def _cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if not (stripped.startswith("|") and stripped.endswith("|")) or len(stripped) > 1000:
        return None
    return [c.strip() for c in stripped[1:-1].split("|")]


def _markdown_runs(lines: list[str], build: str) -> tuple[list[PastedRun], int, set[int]]:
    """Rows of every llama-bench table in the paste (a header with ``model``, ``test`` and ``t/s``)."""
    runs: list[PastedRun] = []
    bad, used = 0, set[int]()
    header: list[str] | None = None
    for i, line in enumerate(lines):
        cells = _cells(line)
        if cells is None:
            header = None
            continue
        names = [c.lower() for c in cells]
        if "model" in names and "t/s" in names and "test" in names:
            header, used = names, used | {i}
            continue
        if header is None:
            continue
        used.add(i)
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the |---|--:| line
        if len(cells) != len(header):
            bad += 1
            continue
        run = _table_run(dict(zip(header, cells, strict=True)), build)
        if run is None:
            bad += 1
        else:
            runs.append(run)
    return runs, bad, used


def _table_run(row: dict[str, str], build: str) -> PastedRun | None:
    test = _TEST_CELL.match(row["test"])
    ts = _TS_CELL.match(row["t/s"])
    if test is None or ts is None or (value := _number(ts.group(1))) is None:
        return None  # a pp512+tg128 (pg) test, a header repeated, a cut-off cell
    ngl = row.get("ngl", "")
    model = row["model"][:120]
    return PastedRun(
        source="llama-bench",
        kind="prefill" if test.group(1) == "pp" else "decode",
        tokens_per_s=value,
        n_tokens=int(test.group(2)),
        depth=int(test.group(3) or 0),
        test=row["test"].replace(" ", "") if "@" not in row["test"] else row["test"],
        stddev=_number(ts.group(2)) if ts.group(2) else None,
        model_text=model,
        quant=normal_quant(model),
        size_bytes=_scaled(_SIZE_CELL.match(row.get("size", "")), _UNITS),
        params=_scaled(_PARAMS_CELL.match(row.get("params", "")), _COUNTS),
        backend=row.get("backend", "")[:40],
        n_gpu_layers=int(ngl) if re.fullmatch(r"-?\d{1,4}", ngl) else None,
        build=build,
    )


def _scaled(m: re.Match[str] | None, units: dict[str, int]) -> int | None:
    return round(float(m.group(1)) * units[m.group(2)]) if m else None


def _json_runs(text: str) -> tuple[list[PastedRun], int] | None:
    """llama-bench ``-o json`` (one array) or ``-o jsonl`` (one object a line); None where neither parses."""
    start = min((i for i in (text.find("["), text.find("{")) if i >= 0), default=-1)
    end = max(text.rfind("]"), text.rfind("}"))
    objects: list[Any] = []
    if start >= 0 and end > start:
        body = text[start : end + 1]
        loaded = _loads(body)
        if isinstance(loaded, list):
            objects = loaded
        elif isinstance(loaded, dict):
            objects = [loaded]
        else:
            lines = [line.strip() for line in body.splitlines() if line.strip()]
            each = [_loads(line) for line in lines]
            if not lines or any(not isinstance(o, dict) for o in each):
                return None
            objects = each
    if not objects:
        return None
    runs, bad = [], 0
    for obj in objects[:MAX_RUNS]:
        run = _json_run(obj) if isinstance(obj, dict) else None
        if run is None:
            bad += 1
        else:
            runs.append(run)
    return runs, bad


def _loads(body: str) -> Any:
    if _depth(body) > MAX_JSON_DEPTH:
        return None  # "[[[[...": no recursion on a hostile paste
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _depth(body: str) -> int:
    """The deepest bracket nesting, strings ignored (a linear scan)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in body:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _json_run(obj: dict[str, Any]) -> PastedRun | None:
    def integer(key: str) -> int | None:
        value = obj.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 50 else None

    value = obj.get("avg_ts")
    ts = _number(str(value)) if isinstance(value, int | float) and not isinstance(value, bool) else None
    n_prompt, n_gen = integer("n_prompt") or 0, integer("n_gen") or 0
    if ts is None or (n_prompt > 0) == (n_gen > 0):
        return None  # no figure, or a pp+tg test whose figure mixes both
    depth = integer("n_depth") or 0
    kind: Kind = "prefill" if n_prompt else "decode"
    label = f"{'pp' if n_prompt else 'tg'}{n_prompt or n_gen}" + (f" @ d{depth}" if depth else "")
    commit, number = _text(obj.get("build_commit"), 40), integer("build_number")
    model = _text(obj.get("model_type"), 120)
    file = _text(obj.get("model_filename"), 300)
    stddev = obj.get("stddev_ts")
    return PastedRun(
        source="llama-bench",
        kind=kind,
        tokens_per_s=ts,
        n_tokens=n_prompt or n_gen,
        depth=depth,
        test=label,
        stddev=_number(str(stddev)) if isinstance(stddev, int | float) and not isinstance(stddev, bool) else None,
        model_text=model,
        model_file=file,
        quant=normal_quant(model) or (quant_of(file) if file else None),
        size_bytes=integer("model_size"),
        params=integer("model_n_params"),
        backend=_text(obj.get("backends", obj.get("backend")), 40),
        gpu_info=_text(obj.get("gpu_info"), 200),
        n_gpu_layers=obj["n_gpu_layers"] if isinstance(obj.get("n_gpu_layers"), int) else None,
        build=f"{commit} ({number})" if commit and number is not None else commit,
    )


def _text(value: object, limit: int) -> str:
    return value.strip()[:limit] if isinstance(value, str) else ""


def _timing_runs(lines: list[str]) -> tuple[list[PastedRun], set[int]]:
    """llama-server's ``print_timings`` and llama-cli's ``llama_perf_context_print`` lines."""
    runs, used = [], set()
    for i, line in enumerate(lines):
        for m in _TIMING.finditer(line[:1000]):
            ms, count, rate = float(m.group(2)), int(m.group(3)), _number(m.group(5))
            used.add(i)
            if rate is None or count <= 0 or ms <= 0:
                continue
            prefill = bool(m.group(1))
            runs.append(
                PastedRun(
                    source="llama-server",
                    kind="prefill" if prefill else "decode",
                    tokens_per_s=rate,
                    n_tokens=count,
                    test="prompt eval" if prefill else "eval",
                )
            )
    return runs, used


def _ollama_runs(lines: list[str]) -> tuple[list[PastedRun], set[int]]:
    """``ollama run --verbose``: each rate with the count printed before it."""
    runs, used = [], set()
    counts: dict[bool, int] = {}
    for i, line in enumerate(lines):
        if (c := _OLLAMA_COUNT.match(line)) is not None:
            counts[bool(c.group(1))] = int(c.group(2))
            used.add(i)
        elif (r := _OLLAMA_RATE.match(line)) is not None:
            used.add(i)
            prefill = bool(r.group(1))
            rate = _number(r.group(2))
            if rate is not None:
                kind: Kind = "prefill" if prefill else "decode"
                test = "prompt eval rate" if prefill else "eval rate"
                runs.append(
                    PastedRun(source="ollama", kind=kind, tokens_per_s=rate, n_tokens=counts.get(prefill, 0), test=test)
                )
        elif re.match(r"^\W{0,4}(?:total duration|load duration|(?:prompt )?eval duration):", line):
            used.add(i)
    return runs, used


def _vllm_runs(lines: list[str]) -> tuple[list[PastedRun], set[int]]:
    """vLLM's serving benchmark: the output throughput of all requests, with the concurrency cap if printed."""
    text = "\n".join(lines)
    m = _VLLM_OUTPUT.search(text)
    if m is None or (rate := _number(m.group(1))) is None:
        return [], set()
    cap = _VLLM_CONCURRENCY.search(text)
    used = {i for i, line in enumerate(lines) if re.search(r"\):\s{0,40}[\d.]{1,20}\s*$|^=+|^-+", line)}
    run = PastedRun(
        source="vllm",
        kind="decode",
        tokens_per_s=rate,
        n_tokens=0,
        test="output throughput",
        concurrency=int(cap.group(1)) if cap else None,
    )
    return [run], used
