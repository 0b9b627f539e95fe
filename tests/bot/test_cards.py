"""Issue 14, point by point: cards that tell the truth, in the user's language, on a phone."""

from __future__ import annotations

import re

import pytest

from bot.answers.lists import COMMON_GPUS, recommend_models
from bot.render.telegram_html import to_telegram
from bot.render.text import to_console
from bot.reply import Tone
from bot.service import Service
from catalog.facts import load_facts
from core.estimate import Request
from core.notes import Note
from core.regions import REGION_RESTRICTED
from locales import messages


@pytest.fixture(scope="module")
def service():
    return Service(load_facts().model_copy(update={"version": "test"}))


def rows(reply, section: int = 0) -> dict[str, str]:
    return {r.label: r.value for r in reply.sections[section].rows}


async def ask(service, text: str, lang: str = "en"):
    return await service.answer(text, locale=lang)


# 1. memory rows that add up ------------------------------------------------------------------


async def test_offload_card_splits_gpu_and_ram_and_never_shows_a_negative_reserve(service):
    reply = await ask(service, "/fit gpt-oss-120b rtx 4090")
    memory = rows(reply)
    assert memory["On GPU"].startswith("21.") and "of 23.99 GiB" in memory["On GPU"]
    assert "In system RAM" in memory and "experts of" in memory["In system RAM"]
    assert "-" not in memory["On GPU"].replace("–", "")
    assert "59" not in memory["On GPU"]  # the whole file is not "on the GPU"


async def test_no_fit_names_what_is_really_missing_and_the_nearest_setup_with_its_command(service):
    reply = await ask(service, "/fit llama-3.3-70b-instruct rtx 4090 ram 16gb")
    assert "missing 7.53 GiB of system RAM" in reply.summary  # not the GPU's ~20 GiB deficit
    assert "➜" in reply.summary  # the smallest change that makes it run, with numbers
    nearest = reply.sections[1]
    assert nearest.title.startswith("Nearest setup that runs")
    assert any(r.label.startswith("Decode") for r in nearest.rows)
    assert reply.code and reply.code[0].label.endswith("for the nearest setup that runs")
    assert reply.code[0].text.startswith("llama-server")


async def test_tight_and_offload_cards_lead_with_the_smallest_fix(service):
    tight = await ask(service, "/fit qwen3-32b rtx 4090 ctx 20k")
    assert tight.summary.startswith("🟡")
    fix = tight.summary.split("\n")[2]
    assert fix.startswith("➜ KV cache q8_0 → Fits") and "spare" in fix
    assert any(a.label == "Make it fit" and "kv q8_0" in a.query for a in tight.actions)


# 2. model limits -----------------------------------------------------------------------------


async def test_context_beyond_training_is_warned_and_both_limits_are_shown(service):
    reply = await ask(service, "/fit phi-4 rtx 4090 64k")
    assert "⚠ 64K is beyond the model's trained 16K" in reply.summary
    assert rows(reply)["Max context"] == "16K (model 16K)"  # the phone's short form; details: the sentence
    german = await ask(service, "/fit phi-4 rtx 4090 64k", "de")
    assert "trainierten Maximum von 16K" in german.summary


# 3. advice a practitioner would give ---------------------------------------------------------


async def test_details_page_labels_each_hardware_row_by_what_it_ranks(service):
    reply = await ask(service, "/fit glm-4.5-air rtx 4090 ram 128gb details")
    assert reply.kind == "fit_details"
    todo = rows(reply, 2)
    for label in ("Fastest GPU that fits", "Cheapest that fits", "Most tok/s per dollar", "Cheapest Mac that fits"):
        assert label in todo
    assert not any(gid in str(todo).lower() for gid in ("h800", "h20", "4090 d"))


async def test_a_recommended_setup_slower_than_the_users_own_says_so(service):
    reply = await ask(service, "/fit llama-3.1-8b-instruct h200 details")
    todo = rows(reply, 2)
    slower = [v for k, v in todo.items() if "slower than yours" in v]
    assert slower  # the cheapest card that fits is far slower than an H200
    assert "slower than yours" not in todo["Fastest GPU that fits"]


async def test_best_quant_is_a_k_or_iq_quant_and_says_why(service):
    reply = await ask(service, "/quant qwen3-32b rtx 4090")
    assert "Q4_K_M" in reply.summary and "best quality per byte" in reply.summary
    assert reply.summary.split(":")[0].split()[-1] == "Q4_K_M"  # the pick itself, never legacy Q4_0/Q5_1


# 4. money ------------------------------------------------------------------------------------


async def test_cloud_table_is_narrow_marks_prices_and_never_charges_more_per_token_for_batching(service):
    reply = await ask(service, "/cloud qwen3-32b")
    assert reply.table is not None and len(reply.table.headers) == 3
    assert "*" in reply.table.rows[0][1] or "~" in reply.table.rows[0][1]  # unverified / spot marked
    assert "unverified" in reply.assumptions
    monthly = await ask(service, "/cloud qwen3-32b monthly")
    assert monthly.table is not None and monthly.table.headers[-1] == "$/month"
    assert "Per month" in monthly.summary
    from core.cost import quote_offers
    from core.estimate import Request, scenario

    catalog = service.catalog
    for users in (2, 8, 32):  # a batch never makes a token dearer, on any offer
        asked = scenario(catalog.model("qwen3-32b"), None, Request(quant="Q4_K_M", concurrent=users), catalog)
        quotes = quote_offers(asked, catalog)
        assert quotes and all(q.usd_per_million_tokens_at_users <= q.usd_per_million_tokens for q in quotes)


async def test_tco_only_for_hardware_that_runs_and_macs_have_a_power_bill(service):
    no_fit = await ask(service, "/tco deepseek-v3 rtx 5090")
    assert "cannot run this model" in no_fit.summary and not no_fit.sections
    mac = await ask(service, "/tco qwen3-32b m3 ultra 96")
    power = rows(mac)["Electricity per month"]
    assert not power.startswith("$0.00") and "150 W*" in power


# 5. wording in locales only ------------------------------------------------------------------


async def test_estimate_errors_are_localized_notices(service):
    reply = await ask(service, "/fit qwen3-32b rtx 4090 awq llama.cpp", "de")
    assert reply.kind == "error" and reply.tone is Tone.WARN
    assert "AWQ lässt sich mit llama.cpp nicht ausführen" in reply.summary
    assert "cannot be served" not in reply.summary


def test_every_note_code_core_emits_has_a_message_in_both_languages():
    from pathlib import Path

    import core.advice
    import core.cost
    import core.estimate
    import core.finetune
    import core.recommend

    codes: set[str] = set()
    for module in (core.advice, core.cost, core.estimate, core.finetune, core.recommend):
        source = Path(str(module.__file__)).read_text(encoding="utf-8")
        codes |= set(re.findall(r'note\(\s*"([a-z_]+)"', source))
        codes |= set(re.findall(r'EstimateError\(\s*"([a-z_]+)"', source))
    codes |= {f"tag_{t}" for t in ("coding", "reasoning", "vision")}
    codes |= {"capable", "quick", "generic"}
    assert len(codes) > 30
    for lang in ("en", "de"):
        missing = sorted(c for c in codes if f"note.{c}" not in messages(lang))  # type: ignore[arg-type]
        assert missing == [], (lang, missing)


def test_a_note_renders_its_values_by_name():
    from bot.cards.notes import note_text

    note = Note(code="ram_default", values={"value": 64.0, "share": 0.85})
    assert note_text(note, "en") == "64 GB system RAM (default), 85 % usable for offload"
    assert note_text(note, "de") == "64 GB Arbeitsspeicher (Standard), 85 % davon zum Auslagern"


# 6. phone first ------------------------------------------------------------------------------


async def test_fit_card_is_one_phone_screen_and_details_has_the_rest(service):
    card = await ask(service, "/fit qwen3-32b rtx 4090")
    details = await ask(service, card.actions[0].query)
    assert card.actions[0].label == "Details" and details.kind == "fit_details"
    assert len(to_console(card).splitlines()) < len(to_console(details).splitlines())
    (message,) = to_telegram(card)
    plain = re.sub(r"<[^>]+>", "", message.text)
    assert plain.count("\n") <= 30 and len(plain) < 1500
    assert len(card.code) == 1  # one command on the phone card
    assert {s.title for s in details.sections} >= {"Memory", "Speed", "What to do", "Cost"}
    assert details.actions[0].label == "Summary"


async def test_list_answers_start_with_one_line_and_show_a_top_ten_with_more(service):
    gpus = await ask(service, "/gpus llama-3.1-8b-instruct")
    assert re.match(r"Any GPU with \d+ GiB or more works \(smallest: .+\); fastest: .+", gpus.summary)
    assert gpus.table is not None and len(gpus.table.rows) == 10
    more = next(a for a in gpus.actions if a.label == "More")
    full = await ask(service, more.query)
    assert full.table is not None and len(full.table.rows) > 50
    assert any(r[0] in ("H800", "H20 96GB", "RTX 4090 D") for r in full.table.rows)  # region-restricted under More
    assert not any(r[0] in ("H800", "RTX 4090 D") for r in gpus.table.rows)


async def test_fine_tune_footnote_is_short_and_whole(service):
    reply = await ask(service, "/finetune llama-3.1-8b-instruct rtx 4090")
    assert len(reply.assumptions) <= 200 and "…" not in reply.assumptions


# 7. recommendations --------------------------------------------------------------------------


async def test_models_answer_ranks_with_reasons_and_offers_filters(service):
    reply = await ask(service, "/models rtx 3090")
    assert reply.summary.startswith("Best pick:")
    ranked = reply.sections[0].rows
    assert 8 <= len(ranked) <= 10 and all(" · " in r.value for r in ranked)
    assert any("experts in RAM" in r.value for r in ranked)  # MoE-with-offload picks
    labels = [a.label for a in reply.actions]
    assert {"Coding", "Reasoning", "Vision", "Small & fast"} <= set(labels)
    coding = await ask(service, next(a.query for a in reply.actions if a.label == "Coding"))
    assert coding.sections[0].title == "Ranked for coding"


def test_recommend_models_takes_a_device_count_request_and_filter(service):
    catalog = service.catalog
    gpu = catalog.gpu("rtx-3090")
    reply = recommend_models(service.answers, gpu, 2, Request(), "de", "coding")
    assert reply.kind == "models" and "2x RTX 3090" in reply.title
    assert reply.sections[0].title == "Rangliste fürs Programmieren"


# 8. commands ---------------------------------------------------------------------------------


async def test_speed_is_its_own_card(service):
    fit = await ask(service, "/fit llama-3.3-70b-instruct 2x 3090")
    speed = await ask(service, "/speed llama-3.3-70b-instruct 2x 3090")
    assert speed.kind == "speed" and to_console(speed) != to_console(fit)
    assert speed.table is not None and [r[0] for r in speed.table.rows] == ["4K", "8K", "32K", "128K"]
    users = rows(speed, 0)
    assert {"1 user", "4 users", "16 users"} <= set(users)
    others = rows(speed, 1)
    assert 4 <= len(others) <= 5
    names = {service.catalog.gpu(g).short_name for g in COMMON_GPUS}  # type: ignore[union-attr]
    assert set(others) <= names


async def test_finetune_without_hardware_names_the_smallest_setups(service):
    reply = await ask(service, "/finetune qwen3-32b")
    assert reply.kind == "finetune"
    methods = rows(reply)
    assert all("smallest:" in v for v in methods.values())
    assert not any(gid.replace("-", " ") in str(methods).lower() for gid in REGION_RESTRICTED)


async def test_help_lists_every_command_and_the_repo_id_trick(service):
    reply = await ask(service, "/help")
    listed = {r.label for r in reply.sections[0].rows}
    assert {"/fit", "/speed", "/cloud", "/quant", "/gpus", "/models", "/finetune", "/tco", "/compare"} <= listed
    assert {"/mygpu", "/lang", "/settings", "/forget", "/help"} <= listed
    assert "Hugging Face repo id" in reply.sections[1].rows[0].value


async def test_settings_outside_a_chat_is_a_neutral_notice(service):
    reply = await ask(service, "/settings")
    assert reply.kind == "notice" and reply.tone is Tone.INFO
    assert "went wrong" not in reply.title


async def test_details_page_has_no_picture_so_telegram_sends_it_whole(service):
    from bot.render.telegram_html import caption_for_photo

    card = await ask(service, "/fit glm-4.5-air rtx 4090")
    details = await ask(service, card.actions[0].query)
    assert card.chart is not None and details.chart is None
    assert caption_for_photo(details) is None  # the adapter sends the page as text, not a cut caption
