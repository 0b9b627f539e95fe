"""Every launch command on generated fit cards runs as written (issue 35, item 2): each flag in the stored
argument lists of its engine (``catalog/engines/``), each vLLM model a repository that holds that quant,
each Ollama reference a stored library tag or a GGUF repository that works in Ollama, each quant one the
GPU runs in vLLM. The generator and the check are ``bench/launch_commands.py``."""

from __future__ import annotations

import pytest

from bench.launch_commands import DEVICES, Card, Lists, check_card, run


@pytest.fixture(scope="module")
def cards() -> list[Card]:
    import asyncio

    return asyncio.run(run(DEVICES))


def test_every_command_on_every_generated_card_passes_the_argument_lists(cards):
    failing = [f"{c.question}: {'; '.join(c.problems[:2])}" for c in cards if c.problems]
    assert not failing, "\n".join(failing[:20])
    with_commands = [c for c in cards if c.commands]
    assert len(with_commands) > 5000  # every catalog model x devices x engines x vLLM quants
    assert {c.engine for c in with_commands} == {"llama.cpp", "vllm", "ollama"}


def test_the_check_catches_what_issue_35_found():
    lists = Lists.load()

    class Block:
        def __init__(self, label: str, text: str) -> None:
            self.label, self.text = label, text

    class Reply:
        def __init__(self, *blocks: Block) -> None:
            self.code = blocks

    class Spec:
        def __init__(self, **kw: object) -> None:
            self.__dict__.update(kw)

    gemma = Spec(id="gemma-3-27b-it", hf_repo="google/gemma-3-27b-it", native_dtype="bf16", family="Gemma 3")
    gpt_oss = Spec(id="gpt-oss-20b", hf_repo="openai/gpt-oss-20b", native_dtype="mxfp4", family="gpt-oss")
    h100 = Spec(name="H100", backend="cuda", arch="hopper")
    cases = [
        (Block("vllm", "vllm serve google/gemma-3-27b-it --quantization awq"), gemma, h100, "quantizes only to fp8"),
        (Block("vllm", "vllm serve google/gemma-3-27b-it --max-model-len 8192 --frobnicate 1"), gemma, h100, "unknown"),
        (Block("vllm", "vllm serve nvidia/Qwen3-32B-NVFP4 --max-model-len 8192"), gemma, h100, "not a stored"),
        (Block("llama.cpp", "llama-server -hf a/b:Q4_K_M --cache-type-k q9_9"), gemma, h100, "not one of"),
        (Block("Ollama", "ollama run hf.co/ggml-org/gpt-oss-20b-GGUF:MXFP4"), gpt_oss, h100, "fails in Ollama"),
        (Block("Ollama", "OLLAMA_CTX=8192 ollama serve"), gpt_oss, h100, "unknown variable"),
    ]
    for block, model, gpu, expected in cases:
        card = check_card(Card("q", "vllm"), Reply(block), model, gpu, False, lists)
        assert any(expected in p for p in card.problems), (block.text, card.problems)
    led = check_card(Card("q", "vllm"), Reply(Block("llama.cpp", "llama-server -m x.gguf")), gemma, h100, False, lists)
    assert any("leads with" in p for p in led.problems)
