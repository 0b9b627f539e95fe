"""Backend and device-spec phrases in a question, both languages (core/query/specs.py)."""

from __future__ import annotations

import pytest

from core.models import Backend
from core.query.specs import read_specs


def specs(text: str) -> tuple[dict[str, object], str]:
    found: dict[str, object] = {}
    rest = read_specs(text.lower(), found)
    assert len(rest) == len(text)  # offsets stay valid
    return found, rest


@pytest.mark.parametrize(
    ("text", "backend"),
    [
        ("qwen3 8b on a 7900 xtx on vulkan", Backend.VULKAN),
        ("qwen3 8b auf einer 7900 xtx mit ROCm", Backend.ROCM),
        ("llama 3 8b on rtx 4090 with radv", Backend.VULKAN),
        ("gpt-oss 20b auf der Arc A770 über SYCL", Backend.SYCL),
        ("qwen3 8b with the HIP backend", Backend.ROCM),
        ("qwen3 8b cpu only with 64 GB RAM", None),  # "CPU only" is a device, read elsewhere
    ],
)
def test_backend_phrases(text, backend):
    found, rest = specs(text)
    assert found.get("backend") is backend
    if backend is not None:
        assert "vulkan" not in rest and "rocm" not in rest and "radv" not in rest and "sycl" not in rest


@pytest.mark.parametrize(
    ("text", "memory", "bandwidth", "tflops"),
    [
        ("my GPU has 32 GB at 608 GB/s, can it run qwen3 32b?", 32.0, 608.0, None),
        ("meine GPU hat 32 GB mit 608 GB/s, läuft qwen3 32b?", 32.0, 608.0, None),
        ("Grafikkarte mit 16 GB, 448 GB/s Bandbreite und 40 TFLOPS", 16.0, 448.0, 40.0),
        ("a card with 24 GB VRAM at 1 TB/s", 24.0, 1000.0, None),
        ("gpu with 16 GB and 1,5 TB/s", 16.0, 1500.0, None),
        ("96 GB GPU at 1792 GBps, 64 GB RAM", 96.0, 1792.0, None),
    ],
)
def test_spec_phrases(text, memory, bandwidth, tflops):
    found, _ = specs(text)
    assert found.get("device_memory_gib") == memory
    assert found.get("device_bandwidth_gbps") == bandwidth
    assert found.get("device_tflops") == tflops


def test_memory_alone_is_left_to_the_device_phrases():
    found, rest = specs("qwen3 8b on a gpu with 16 GB")
    assert found == {} and "16 gb" in rest
