"""Every recorded log and docker line (tests/data/pasted_logs.toml, each copied from an issue thread or the
projects' docs) is read into the figures it states, answered with a diagnosis, and no figure it does not
state appears on the card."""

from __future__ import annotations

import asyncio
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from bot.render.text import to_console
from bot.service import Service, User
from catalog.facts import load_facts
from core.diagnose.flags import LaunchFlags, parse_command
from core.diagnose.log import looks_like_log, read_log
from core.models import GIB, MIB

DATA = Path(__file__).resolve().parents[1] / "data" / "pasted_logs.toml"
PASTES: list[dict[str, Any]] = tomllib.loads(DATA.read_text(encoding="utf-8"))["paste"]
LOGS = [p for p in PASTES if p.get("kind") != "docker"]
DOCKER = [p for p in PASTES if p.get("kind") == "docker"]
CATALOG = load_facts()
UNITS = {"GiB": GIB, "MiB": MIB, "KiB": 1024}
_FIGURE = re.compile(r"(\d[\d,]*(?:\.\d+)?) ?(GiB|MiB|KiB)")


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(CATALOG.model_copy(update={"version": "test"}))


def ask(service: Service, paste: dict[str, Any], prefix: str = "") -> Any:
    text = f"{prefix}{paste.get('words', '')}\n{paste['text']}".strip()
    return asyncio.run(service.answer(text, None, User()))


def test_every_paste_names_its_source() -> None:
    assert len(LOGS) >= 10 and len(DOCKER) >= 4
    assert {p["engine"] for p in LOGS} == {"llama.cpp", "vllm", "ollama"}
    for paste in PASTES:
        assert re.match(r"^https://github\.com/[^/]+/[^/]+/(issues|pull|blob)/", paste["source"]), paste["id"]


@pytest.mark.parametrize("paste", LOGS, ids=[p["id"] for p in LOGS])
def test_each_log_reads_into_the_figures_it_states(paste: dict[str, Any]) -> None:
    assert looks_like_log(paste["text"]), paste["id"]
    facts = read_log(paste["text"])
    want = paste["expect"]
    if paste["engine"] == "vllm" or "torch_device" in want:
        assert facts.engine in ("vllm", "pytorch")
    else:
        assert facts.engine == paste["engine"]
    checks = {
        "failed_device": facts.failed_device,
        "failed_mib": facts.failed_bytes / MIB if facts.failed_bytes else None,
        "failed_part": facts.failed_part,
        "kv_total_mib": facts.kv_total_bytes / MIB if facts.kv_total_bytes else None,
        "layers_offloaded": list(facts.layers_offloaded) if facts.layers_offloaded else None,
        "model_mib": sum(b.model_mib for b in facts.buffers) if facts.buffers else None,
        "no_cache_blocks": facts.no_cache_blocks,
        "context": facts.context,
        "kv_tokens": facts.kv_tokens,
        "max_seq_len": facts.max_seq_len,
        "torch_device": facts.torch_device,
        "tried_mib": facts.tried_bytes / MIB if facts.tried_bytes else None,
        "device_total_gib": facts.device_total_gib,
        "device_free_mib": facts.device_free_bytes / MIB if facts.device_free_bytes is not None else None,
        "in_use_gib": facts.in_use_bytes / GIB if facts.in_use_bytes else None,
        "gpu_available_gib": [b / GIB for b in facts.gpu_available_bytes],
        "required_full_gib": facts.required_full_bytes / GIB if facts.required_full_bytes else None,
        "required_kv_gib": facts.required_kv_bytes / GIB if facts.required_kv_bytes else None,
        "system_total_gib": facts.system_total_bytes / GIB if facts.system_total_bytes else None,
        "system_free_gib": facts.system_free_bytes / GIB if facts.system_free_bytes else None,
    }
    for key, value in want.items():
        if key == "model":
            continue
        expected = value if isinstance(value, str | bool) else pytest.approx(value, rel=1e-3)
        assert checks[key] == expected, (paste["id"], key, checks[key])
    if "system_total_gib" not in want:
        assert facts.system_total_bytes is None and facts.system_ram_needed_bytes is None


@pytest.mark.parametrize("paste", DOCKER, ids=[p["id"] for p in DOCKER])
def test_each_docker_line_reads_as_the_command_its_image_runs(paste: dict[str, Any]) -> None:
    flags = parse_command(paste["text"])
    assert isinstance(flags, LaunchFlags), (paste["id"], flags)
    assert flags.engine == paste["engine"]
    want = paste["expect"]
    assert flags.model_ref == want["model_ref"]
    for key in ("context", "gpu_layers", "tensor_parallel"):
        if key in want:
            assert getattr(flags, key) == want[key], (paste["id"], key)
    assert "docker" not in flags.unknown and "--gpus" not in flags.unknown and "-v" not in flags.unknown


@pytest.mark.parametrize("paste", PASTES, ids=[p["id"] for p in PASTES])
def test_each_paste_gets_a_diagnosis_not_the_error_card(service: Service, paste: dict[str, Any]) -> None:
    reply = ask(service, paste)
    assert reply.kind == "diagnose", (paste["id"], reply.kind, reply.title)
    text = to_console(reply)
    assert "no llama-server, llama-cli, vllm serve or ollama command" not in text, paste["id"]
    if model_id := paste["expect"].get("model"):
        model = CATALOG.model(model_id)
        assert model is not None and model.name in text, (paste["id"], reply.title)


def _figures(text: str) -> list[float]:
    return [float(v.replace(",", "")) * UNITS[u] for v, u in _FIGURE.findall(text)]


@pytest.mark.parametrize("paste", LOGS, ids=[p["id"] for p in LOGS])
def test_a_log_card_states_only_the_logs_figures(service: Service, paste: dict[str, Any]) -> None:
    reply = ask(service, paste)
    if not reply.title.startswith("What the"):
        return  # a full diagnosis (model and hardware known): its figures are the estimate's
    stated = _figures(paste["text"])
    stated += [int(n) for n in re.findall(r"buffer of size (\d+)", paste["text"])]
    for shown in _figures(to_console(reply)):
        assert any(abs(shown - s) <= max(0.006 * GIB, 0.006 * s) for s in stated), (paste["id"], shown / GIB)
    if "system memory" not in paste["text"]:
        assert "System RAM" not in to_console(reply), paste["id"]


def test_german_words_get_a_german_log_card(service: Service) -> None:
    paste = next(p for p in LOGS if p["id"] == "vllm_no_cache_blocks")
    reply = ask(service, paste, prefix="mein vllm startet nicht, was mache ich falsch:\n")
    assert reply.locale == "de" and reply.title.startswith("Was das vLLM-Log sagt")
    assert "--gpu-memory-utilization" in (reply.summary or "")


def test_a_modelfile_reads_the_quant_of_its_gguf_file() -> None:
    paste = next(p for p in DOCKER if p["id"] == "modelfile_gguf_num_gpu")
    flags = parse_command(paste["text"])
    assert isinstance(flags, LaunchFlags) and flags.quant == "Q4_K_M"


def test_a_torch_oom_with_model_and_gpu_shows_no_ram_it_does_not_state(service: Service) -> None:
    """issue 35: a torch OOM showed "System RAM 0.00 GiB of 158.32 GiB" with no RAM given."""
    paste = next(p for p in LOGS if p["id"] == "torch_oom_vllm_worker")
    reply = ask(service, paste, prefix="vllm serve Qwen/Qwen3-8B on 2x rtx 4090\n")
    text = to_console(reply)
    assert reply.kind == "diagnose" and "System RAM" not in text


def test_an_ollama_log_with_the_model_named_uses_the_logs_ram_and_the_library_tag(service: Service) -> None:
    paste = next(p for p in LOGS if p["id"] == "ollama_offload_library_cuda")
    reply = ask(service, paste, prefix="gemma 3 12b on my rtx 3080 ti, ollama says:\n")
    text = to_console(reply)
    assert reply.title.startswith("Diagnosis: Gemma 3 12B") and "system RAM read from the log: 33.2 GB" in text
    assert "ollama run gemma3:12b" in text and "64 GB system RAM" not in text
    assert "25.40 GiB free of 30.90 GiB" in text  # the log's own line, next to the placement
