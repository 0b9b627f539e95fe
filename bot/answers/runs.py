"""A pasted benchmark run (issue 38, "calibrate to my rig"): which setup it timed, whether it can be true
of that setup, and what is kept of it.

Which setup, the most specific reading first: the user's own words around the paste ("my 4090, qwen3
8b"), then what the paste names (llama-bench's JSON file name and ``gpu_info``, its model label with the
exact parameter count, a log's model file and device lines), then the device saved with /mygpu. A run
whose model, device or quant cannot be told is not used, and the card says what to add. Each run is
estimated on its own setup (its depth and prompt length, llama.cpp on the backend the paste names) and
checked against that setup's physics (``core.runs.check``); only runs that pass are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from bot.users.user import User
from catalog.extra_facts import ollama_tags
from core.diagnose.log import looks_like_log, read_log
from core.estimate import EstimateError, Request, estimate_of, prompt_of, scenario
from core.launch.ollama import OllamaTag
from core.models import BACKEND_NAMES, Backend, Engine, GpuSpec, Lang, ModelSpec
from core.query.parse import Query, parse
from core.runs.calibrate import AcceptedRun
from core.runs.check import bounds, check
from core.runs.paste import Paste, PastedRun, read_paste, size_label
from core.weights import weights

if TYPE_CHECKING:
    from bot.answers.route import Answers

PARAMS_TOLERANCE = 0.03  # llama-bench counts the GGUF's tensors; a catalog row may add a vision tower or MTP layer
MIN_PREFILL_TOKENS = 128  # a shorter prompt times launch overhead, not the prompt kernels
OLLAMA_QUANT = "Q4_K_M"  # what an Ollama library tag without a quant pulls
MAX_KEPT = 16  # runs kept of one paste
_OLLAMA_RUN = re.compile(r"\bollama run ([\w.:/-]{1,80})")


class Setup(NamedTuple):
    model: ModelSpec
    gpu: GpuSpec
    gpu_count: int
    backend: Backend | None  # None: the device's own
    quant: str


@dataclass
class RunsRead:
    """What a paste held, run by run: what was read and kept, what was not used and why (locale keys with
    their values), and the notes on what was assumed."""

    setup: Setup | None = None
    problem: str | None = None  # runs.<key>: nothing could be used at all
    kept: list[AcceptedRun] = field(default_factory=list)
    rejected: list[tuple[str, dict[str, str | float]]] = field(default_factory=list)  # rates in tokens/s
    assumed: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    build: str = ""
    source: str = ""
    language: Lang | None = None  # of the user's own words around the paste


def read_runs(answers: Answers, paste: str, user: User) -> RunsRead:
    """The pasted runs, identified and checked (pure: nothing is stored here)."""
    found = read_paste(paste)
    read = RunsRead(language=parse(found.words, answers.vocab).language if found.words else None)
    if found.problem is not None:
        read.problem = found.problem
        return read
    first = found.runs[0]
    read.build, read.source = first.build, first.source
    setup = _setup(answers, found, paste, user, read)
    if setup is None:
        return read
    read.setup = setup
    for run in found.runs:
        _check_run(answers, setup, run, read)
    read.kept = read.kept[:MAX_KEPT]
    return read


def _setup(answers: Answers, paste: Paste, text: str, user: User, read: RunsRead) -> Setup | None:
    words = parse(paste.words, answers.vocab) if paste.words else None
    facts = read_log(text) if looks_like_log(text) else None
    run = paste.runs[0]
    tag = _ollama_tag(text) if run.source == "ollama" else None
    model = answers.catalog.model(tag.model_id) if tag is not None else None
    model = model or _model(answers, words, run, facts.model_file or facts.model_name if facts else None, read)
    if model is None:
        read.problem = "no_model"
        return None
    gpu, count = _device(answers, words, paste, run, facts.device_names if facts else (), user)
    if gpu is None:
        read.problem = "no_device"
        return None
    quant = (
        run.quant
        or (words.quant if words else None)
        or (facts.quant if facts else None)
        or (tag.quant if tag else None)
    )
    if quant is None and run.source == "ollama":
        quant = OLLAMA_QUANT
        read.assumed.append(("assumed_quant", {"quant": quant}))
    if quant is None or answers.catalog.quant(quant) is None:
        read.problem = "no_quant"
        return None
    return Setup(model, gpu, count, _backend(run.backend), quant)


def _ollama_tag(text: str) -> OllamaTag | None:
    """The library tag of an ``ollama run <tag> --verbose`` line in the paste ("qwen3:8b"), if the catalog lists it."""
    m = _OLLAMA_RUN.search(text)
    if m is None:
        return None
    name = m.group(1).lower().removesuffix(":latest")
    return next((tag for tag in ollama_tags() if tag.tag.lower() == name), None)


def _model(
    answers: Answers, words: Query | None, run: PastedRun, log_model: str | None, read: RunsRead
) -> ModelSpec | None:
    """The user's words, then the paste's file or log name, then llama-bench's label and parameter count."""
    catalog = answers.catalog
    named = [words.model] if words is not None else []
    named += [parse(_file_words(name), answers.vocab).model for name in (run.model_file, log_model) if name]
    for match in named:
        if match is not None and match.id and not match.unknown and (m := catalog.model(match.id)) is not None:
            return m
    if not run.model_text:
        return None
    found = _by_label(answers, run)
    if found is not None:
        read.assumed.append(("assumed_model", {"text": run.model_text, "model": found.name}))
    return found


def _file_words(name: str) -> str:
    """A file or repo name as words ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf" -> "Llama 3.1 8B Instruct Q4_K_M")."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".gguf")
    stem = re.sub(r"-\d{5}-of-\d{5}$", "", stem)  # a split file's part
    return re.sub(r"^Meta[-_ ]", "", stem).replace("-", " ").replace("_", " ")


def _by_label(answers: Answers, run: PastedRun) -> ModelSpec | None:
    """llama-bench's "llama 8B Q4_K - Medium" with 8.03 B parameters: the most downloaded catalog model of
    that architecture within ``PARAMS_TOLERANCE`` of the count (rows of one architecture and size run alike)."""
    arch = _squash(run.model_text.split(" ", 1)[0])
    params = run.params
    if params is None and (label := size_label(run.model_text)) is not None:
        params = round(float(label[:-1]) * (1e9 if label.endswith("B") else 1e6))
    if not arch or not params:
        return None
    near = [
        m
        for m in answers.catalog.models
        if abs(m.total_params - params) <= PARAMS_TOLERANCE * params and _same_arch(arch, m.architecture)
    ]
    return max(near, key=lambda m: (m.hf_downloads or 0, m.id), default=None)


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _same_arch(gguf_arch: str, hf_arch: str) -> bool:
    """llama.cpp's architecture name against the config's: "qwen3moe" ~ Qwen3MoeForCausalLM, "gptoss" ~ GptOss."""
    name = _squash(re.sub(r"For(?:CausalLM|ConditionalGeneration)$", "", hf_arch))
    return bool(name) and (name == gguf_arch or name.startswith(gguf_arch) or gguf_arch.startswith(name))


def _device(
    answers: Answers, words: Query | None, paste: Paste, run: PastedRun, log_devices: tuple[str, ...], user: User
) -> tuple[GpuSpec | None, int]:
    """The user's words, then the devices the paste names, then the saved /mygpu device."""
    catalog = answers.catalog
    named = words.gpu if words is not None else None
    if words is not None and named is not None and named.id and (gpu := catalog.gpu(named.id)) is not None:
        return gpu, words.gpu_count
    printed = [n for n in (run.gpu_info, *paste.devices, *log_devices) if n]
    for name in printed:
        match = parse(re.sub(r"^(?:NVIDIA|AMD|Intel\(R\)|Apple)\s+", "", name), answers.vocab).gpu
        if match is not None and match.id and (gpu := catalog.gpu(match.id)) is not None:
            return gpu, max(1, len(set(paste.devices)))
    if user.gpu_id and (gpu := catalog.gpu(user.gpu_id)) is not None:
        return gpu, user.gpu_count
    return None, 1


def _backend(printed: str) -> Backend | None:
    """llama-bench's backend column ("CUDA", "Metal,BLAS", "ROCm"): the first one FitBot models."""
    for word in re.split(r"[,\s/+]+", printed.lower()):
        if word in BACKEND_NAMES:
            return BACKEND_NAMES[word]
    return None


def _check_run(answers: Answers, setup: Setup, run: PastedRun, read: RunsRead) -> None:
    label: dict[str, str | float] = {"test": run.test, "measured": run.tokens_per_s}
    if run.source == "vllm":
        read.rejected.append(("vllm", label))
        return
    if run.kind == "prefill" and run.n_tokens < MIN_PREFILL_TOKENS:
        read.rejected.append(("short_prompt", {**label, "tokens": str(run.n_tokens)}))
        return
    if run.n_gpu_layers is not None and 0 <= run.n_gpu_layers < setup.model.n_layers:
        layers = {"layers": str(run.n_gpu_layers), "total": str(setup.model.n_layers)}
        read.rejected.append(("partial_layers", {**label, **layers}))
        return
    context = max(run.depth + run.n_tokens, 1)
    request = Request(
        quant=setup.quant,
        context=context,
        engine=Engine.LLAMA_CPP,
        gpu_count=setup.gpu_count,
        prompt_tokens=run.n_tokens if run.kind == "prefill" else None,
        backend=setup.backend,
    )
    try:
        s = scenario(setup.model, setup.gpu, request, answers.catalog)
    except EstimateError:
        read.rejected.append(("no_quant", label))
        return
    est = estimate_of(s)
    device = s.gpu.short_name if s.gpu else setup.gpu.short_name
    if est.offload.mode != "none":
        read.rejected.append(("offload", {**label, "device": device}))
        return
    speed, share = est.speed, 0.0
    if run.kind == "prefill":  # its own prompt length and depth (pp2048 at d32768 is mostly attention)
        prompt = prompt_of(s, run.n_tokens, run.depth)
        estimated, share = run.n_tokens / prompt.seconds, prompt.attention_share
    else:
        estimated = speed.decode_tokens_per_s_at_context if run.depth else speed.decode_tokens_per_s
    assert s.gpu is not None
    limits = bounds(setup.model, weights(s.model, s.quant, s.measured), s.gpu, setup.gpu_count)
    verdict = check(run.kind, run.tokens_per_s, estimated, limits)
    if verdict != "ok":
        bound = limits.decode_tokens_per_s if run.kind == "decode" else limits.prefill_tokens_per_s
        read.rejected.append((verdict, {**label, "device": device, "bound": bound, "estimated": estimated}))
        return
    read.kept.append(
        AcceptedRun(
            gpu_id=s.gpu.id.split("@", 1)[0],
            gpu_count=setup.gpu_count,
            backend=s.gpu.backend.value,
            model_id=setup.model.id,
            quant=s.quant.id,
            kind=run.kind,
            test=run.test,
            measured=run.tokens_per_s,
            estimated=estimated,
            attention_share=share,
            build=run.build[:60],
            source=run.source,
        )
    )
