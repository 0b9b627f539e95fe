"""Every launch command on generated fit cards, checked against the engines' stored argument lists.

    .venv/bin/python bench/launch_commands.py [--quick] [--fails N]

The questions: every catalog model x a set of devices x the engines (llama.cpp, vLLM, Ollama) x the vLLM
quants (FP8, AWQ, NVFP4). Each card's commands must run as written (issue 35, item 2):

* llama-server: every option in ``catalog/engines/llama_cpp_args.txt`` (common/arg.cpp), values where
  arg.cpp checks them;
* vllm serve: every flag in ``catalog/engines/vllm_engine_args.txt`` (EngineArgs), values in their
  literal lists; the model a repository the catalog names for that quant (the model's own repo for BF16,
  its native format and online FP8; a ``quant_repos.toml`` row for AWQ, GPTQ, NVFP4 and a published FP8
  checkpoint); the quant one vLLM runs on that GPU (``catalog/engines/vllm_quant_hardware.md``, restated
  here on its own so that the check does not reuse the code it checks);
* Ollama: environment variables of ``catalog/engines/ollama_settings.txt`` with their values, ``ollama run``
  of a library tag in ``ollama_tags.toml``, or ``hf.co/<repo>:<QUANT>`` of a GGUF repository the catalog
  names, never for gpt-oss or a vision model (that path fails in Ollama);
* a card about vLLM leads with a vLLM block, never a llama.cpp line.

Prints the share of cards whose every command passes; ``--fails`` lists that many failures. The same
check is the test ``tests/bot/test_launch_generated.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shlex
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ROOT / "catalog" / "engines"
FACTS = ROOT / "catalog" / "facts"

DEVICES = ("rtx-4090", "rtx-3090", "h100-sxm", "rtx-5090", "t4", "mi300x", "b200")
QUICK_DEVICES = ("rtx-4090", "h100-sxm", "t4")
ENGINE_WORDS = ("", " vllm", " ollama")
VLLM_QUANTS = ("fp8", "awq", "nvfp4")

# vllm_quant_hardware.md, restated: compute capability per chip generation and the minimum per quant
CAPABILITY = {"volta": 7.0, "turing": 7.5, "ampere-dc": 8.0, "ampere": 8.6, "orin": 8.7, "ada": 8.9, "hopper": 9.0}
CAPABILITY |= {"blackwell-dc": 10.0, "blackwell-soc": 11.0, "blackwell": 12.0, "pascal": 6.1, "maxwell": 5.2}
MIN_CAPABILITY = {"": 7.0, "FP8": 8.0, "NVFP4": 10.0, "AWQ": 7.5, "GPTQ": 7.0, "MXFP4": 8.0}
AMD_RUNS = {"cdna3": {"FP8", "MXFP4", "BF16", ""}, "cdna4": {"FP8", "MXFP4", "BF16", ""}}


def option_table(path: Path) -> dict[str, frozenset[str] | None]:
    """Option name -> the values it accepts (None: any), from a stored argument list."""
    table: dict[str, frozenset[str] | None] = {}
    removed: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("["):
            continue
        if line.startswith("!"):  # a spelling the newer commit removed
            removed.add(line[1:].split()[0])
            continue
        words = line.split()
        values = next((frozenset(w[1:].split(",")) for w in words if w.startswith("=")), None)
        for w in words:
            if not w.startswith("="):
                table[w] = values
    return {name: values for name, values in table.items() if name not in removed}


def ollama_settings() -> tuple[dict[str, frozenset[str] | None], set[str]]:
    env: dict[str, frozenset[str] | None] = {}
    params: set[str] = set()
    section = ""
    for line in (ENGINES / "ollama_settings.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        words = line.split()
        if section == "env":
            env[words[0]] = frozenset(words[1][1:].split(",")) if len(words) > 1 else None
        elif section == "parameter":
            params.add(words[0])
    return env, params


@dataclass
class Lists:
    llama: dict[str, frozenset[str] | None]
    vllm: dict[str, frozenset[str] | None]
    ollama_env: dict[str, frozenset[str] | None]
    tags: set[str]
    quant_repos: dict[tuple[str, str], str]  # (model, QUANT) -> repo
    gguf_repos: set[str]

    @classmethod
    def load(cls) -> Lists:
        repos = tomllib.loads((FACTS / "quant_repos.toml").read_text(encoding="utf-8"))["repo"]
        tags = tomllib.loads((FACTS / "ollama_tags.toml").read_text(encoding="utf-8"))["tag"]
        sizes = tomllib.loads((FACTS / "gguf_sizes.toml").read_text(encoding="utf-8"))["size"]
        models = tomllib.loads((FACTS / "models.toml").read_text(encoding="utf-8"))["model"]
        gguf = {str(r["repo"]) for r in sizes if "repo" in r} | {
            str(m["gguf_repo"]) for m in models if m.get("gguf_repo")
        }
        env, _ = ollama_settings()
        return cls(
            llama=option_table(ENGINES / "llama_cpp_args.txt"),
            vllm=option_table(ENGINES / "vllm_engine_args.txt"),
            ollama_env=env,
            tags={str(t["tag"]) for t in tags},
            quant_repos={(str(r["model"]), str(r["quant"]).upper()): str(r["repo"]) for r in repos},
            gguf_repos=gguf,
        )


@dataclass
class Card:
    question: str
    engine: str  # asked: "llama.cpp", "vllm", "ollama"
    problems: list[str] = field(default_factory=list)
    commands: int = 0


def check_options(argv: list[str], start: int, table: dict[str, frozenset[str] | None], tool: str) -> list[str]:
    out: list[str] = []
    i = start
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-"):
            out.append(f"{tool}: stray word {word!r}")
            i += 1
            continue
        if word not in table:
            out.append(f"{tool}: unknown option {word}")
            i += 1
            continue
        values = table[word]
        takes_value = i + 1 < len(argv) and not argv[i + 1].startswith("--")
        if takes_value:
            if values is not None and argv[i + 1] not in values:
                out.append(f"{tool}: {word} {argv[i + 1]} not one of {sorted(values)}")
            i += 2
        else:
            i += 1
    return out


def vllm_runs(quant: str, gpu: object) -> bool:
    backend, arch = getattr(gpu, "backend", ""), getattr(gpu, "arch", "")
    if str(backend) == "rocm":
        return quant in AMD_RUNS.get(arch, set())
    cap = CAPABILITY.get(arch)
    if cap is None:
        return True
    return cap >= MIN_CAPABILITY.get("", 7.0) and cap >= MIN_CAPABILITY.get(quant, 0.0)


def check_vllm(line: str, model: object, gpu: object, lists: Lists) -> list[str]:
    argv = shlex.split(line)
    if argv[:2] != ["vllm", "serve"] or len(argv) < 3:
        return [f"vllm: not a vllm serve line: {line}"]
    out = check_options(argv, 3, lists.vllm, "vllm")
    ref = argv[2]
    model_id, hf_repo = getattr(model, "id", ""), getattr(model, "hf_repo", None)
    native = str(getattr(model, "native_dtype", "bf16")).upper()
    online = argv[argv.index("--quantization") + 1].upper() if "--quantization" in argv else ""
    held = [q for (m, q), repo in lists.quant_repos.items() if m == model_id and repo == ref]
    if ref == hf_repo:
        loaded = online or native
        if online and online != "FP8":
            out.append(
                f"vllm: --quantization {online.lower()} on the {native} repository {ref} (vLLM quantizes only to fp8)"
            )
    elif held:
        loaded = held[0]
        if online:
            out.append(f"vllm: --quantization {online.lower()} on the pre-quantized {ref}")
    else:
        return [*out, f"vllm: {ref} is not a stored repository of {model_id}"]
    loaded = "" if loaded in ("BF16", "FP16", "F16") else loaded
    if "--tensor-parallel-size" in argv:  # vLLM: attention heads must divide by it
        tp = int(argv[argv.index("--tensor-parallel-size") + 1])
        if getattr(model, "n_heads", tp) % tp:
            out.append(f"vllm: --tensor-parallel-size {tp} does not divide {getattr(model, 'n_heads', '?')} heads")
    if gpu is not None and not vllm_runs(loaded or "", gpu):
        out.append(f"vllm: {loaded or 'the checkpoint'} does not run in vLLM on {getattr(gpu, 'name', '?')}")
    old_gpu = gpu is not None and CAPABILITY.get(getattr(gpu, "arch", ""), 9.0) < 8.0
    if loaded == "" and native == "BF16" and old_gpu and "--dtype" not in argv:
        out.append("vllm: BF16 checkpoint below compute capability 8.0 without --dtype half")
    return out


def check_ollama(text: str, model: object, vision: bool, lists: Lists) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line)
        if words[-2:] == ["ollama", "serve"]:
            for w in words[:-2]:
                name, _, value = w.partition("=")
                if name not in lists.ollama_env:
                    out.append(f"ollama: unknown variable {name}")
                elif (values := lists.ollama_env[name]) is not None and value not in values:
                    out.append(f"ollama: {name}={value} not one of {sorted(values)}")
        elif words[:2] == ["ollama", "run"] and len(words) == 3:
            tag = words[2]
            if tag.startswith("hf.co/"):
                repo = tag.removeprefix("hf.co/").partition(":")[0]
                if repo not in lists.gguf_repos:
                    out.append(f"ollama: {tag}: not a stored GGUF repository")
                family = str(getattr(model, "family", "")).lower()
                if family.startswith("gpt-oss") or vision:
                    out.append(f"ollama: {tag}: a Hugging Face GGUF of this model fails in Ollama")
            elif tag not in lists.tags:
                out.append(f"ollama: {tag}: not a stored library tag")
        else:
            out.append(f"ollama: unexpected line {line!r}")
    return out


def check_card(card: Card, reply: object, model: object, gpu: object, vision: bool, lists: Lists) -> Card:
    blocks = list(getattr(reply, "code", ()))
    if card.engine == "vllm" and blocks and not blocks[0].label.startswith("vllm"):
        card.problems.append(f"vllm card leads with {blocks[0].label}")
    for block in blocks:
        text = block.text
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if block.label == "Ollama":
            card.commands += 1
            card.problems += check_ollama(text, model, vision, lists)
            continue
        for line in lines:
            if line.startswith("llama-server"):
                card.commands += 1
                card.problems += check_options(shlex.split(line), 1, lists.llama, "llama-server")
            elif line.startswith("vllm "):
                card.commands += 1
                card.problems += check_vllm(line, model, gpu, lists)
    return card


# the same model and device asked the other ways people ask (several GPUs and users, a KV cache type, a
# long context, llama.cpp's own fitting, LM Studio, a draft model, images, German)
VARIANTS = (
    ("/fit {model} 2x {device} 8 users details", "llama.cpp"),
    ("/fit {model} 2x {device} 8 users vllm details", "vllm"),
    ("/fit {model} 3x {device} vllm details", "vllm"),
    ("/fit {model} {device} ctx 32k kv q8_0 details", "llama.cpp"),
    ("/fit {model} {device} ctx 32k kv fp8 vllm details", "vllm"),
    ("{model} on {device} with llama.cpp auto fit", "llama.cpp"),
    ("{model} on {device} in lm studio", "llama.cpp"),
    ("{model} with a draft model on {device}", "llama.cpp"),
    ("{model} with 2 images on {device}", "llama.cpp"),
    ("läuft {model} mit ollama auf {device}?", "ollama"),
)


def questions(models: Iterable[str], devices: Iterable[str]) -> list[tuple[str, str, str, str]]:
    """(question, asked engine, model id, device id) for the generator's product."""
    out = []
    for model, device in itertools.product(models, devices):
        for word in ENGINE_WORDS:
            out.append((f"/fit {model} {device}{word} details", word.strip() or "llama.cpp", model, device))
        for quant in VLLM_QUANTS:
            out.append((f"/fit {model} {device} {quant} vllm details", "vllm", model, device))
        for text, engine in VARIANTS:
            out.append((text.format(model=model, device=device), engine, model, device))
    return out


async def run(devices: Iterable[str], limit: int | None = None) -> list[Card]:
    from bot.cards.launch import takes_images
    from bot.service import Service
    from catalog.facts import load_facts

    catalog = load_facts().model_copy(update={"version": "bench"})
    service = Service(catalog)
    lists = Lists.load()
    models = [m.id for m in catalog.models][:limit]
    cards: list[Card] = []
    for question, engine, model_id, device_id in questions(models, devices):
        model, gpu = catalog.model(model_id), catalog.gpu(device_id)
        reply = await service.answer(question, locale="en")
        vision = model is not None and takes_images(model)
        cards.append(check_card(Card(question, engine), reply, model, gpu, vision, lists))
    return cards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three devices, the first 40 models")
    parser.add_argument("--fails", type=int, default=0, help="list this many failing cards")
    args = parser.parse_args()
    devices = QUICK_DEVICES if args.quick else DEVICES
    cards = asyncio.run(run(devices, 40 if args.quick else None))
    with_commands = [c for c in cards if c.commands or c.problems]
    passed = [c for c in with_commands if not c.problems]
    share = 100 * len(passed) / max(len(with_commands), 1)
    print(f"{len(cards)} generated cards; {len(passed)}/{len(with_commands)} with commands pass ({share:.1f} %)")
    for engine in ("llama.cpp", "vllm", "ollama"):
        mine = [c for c in with_commands if c.engine == engine]
        ok = [c for c in mine if not c.problems]
        print(f"  {engine:9} {len(ok)}/{len(mine)}")
    for card in [c for c in with_commands if c.problems][: args.fails]:
        print(card.question, "->", "; ".join(card.problems[:3]))


if __name__ == "__main__":
    main()
