"""Ollama tags, LM Studio settings, llama.cpp --fit and pre-quantized vLLM repositories."""

from __future__ import annotations

import re

from catalog.extra_facts import ollama_tags, quant_repos
from catalog.facts import load_facts
from core.estimate import Request, estimate, scenario
from core.launch.commands import launch_commands
from core.launch.ollama import TagChoice, hf_blocked, ollama_command, ollama_default_context, ollama_tag
from core.launch.tools import fit_command, lm_studio_settings, manual_flags, quantized_repo, with_repo
from core.models import GIB, Engine, KvCacheType

CATALOG = load_facts()


def est(model: str, gpu: str, **request):
    m, g = CATALOG.model(model), CATALOG.gpu(gpu)
    assert m is not None and g is not None
    req = Request(**request)
    quant = CATALOG.quant(req.quant or ("MXFP4" if m.native_dtype == "mxfp4" else "Q4_K_M"))
    assert quant is not None
    return estimate(m, g, quant, req, CATALOG.size(m.id, quant.id)), m, g, req


def test_every_fact_row_names_a_catalog_model_and_quant_with_a_source():
    for row in ollama_tags():
        assert CATALOG.model(row.model_id) is not None, row
        assert CATALOG.quant(row.quant) is not None and row.provenance.source.startswith("https://")
        assert re.fullmatch(r"[a-z0-9.\-]+(:[\w.\-]+)?", row.tag), row.tag
    for repo in quant_repos():
        assert CATALOG.model(repo.model_id) is not None and repo.quant in ("AWQ", "GPTQ", "FP8", "NVFP4")
        assert repo.repo.split("/")[-1].upper().find(repo.quant) >= 0 or repo.quant == "GPTQ"


def test_tag_from_the_library_then_a_measured_repo_then_the_gguf_repo():
    llama = CATALOG.model("llama-3.1-8b-instruct")
    assert llama is not None
    assert ollama_tag(llama, "Q4_K_M", ollama_tags(), None) == TagChoice(
        tag="llama3.1", kind="library", source=ollama_tag(llama, "Q4_K_M", ollama_tags(), None).source
    )
    oss = CATALOG.model("gpt-oss-120b")
    assert oss is not None
    library = ollama_tag(oss, "MXFP4", ollama_tags(), CATALOG.size(oss.id, "MXFP4"), blocked=hf_blocked(oss, False))
    assert library.kind == "library" and library.tag == "gpt-oss:120b"  # the library has it: no hf.co/ path
    phi = CATALOG.model("phi-4")
    assert phi is not None and CATALOG.size(phi.id, "Q8_0") is None
    measured = [
        s
        for s in CATALOG.sizes
        if s.repo and "/" in s.repo and ollama_tag(CATALOG.model(s.model_id) or phi, s.quant_id, (), s).kind == "hf"
    ]
    assert measured  # a measured GGUF with no library tag: hf.co/<its repo>
    # gpt-oss and vision models get no hf.co/ path where no tag exists: it fails in Ollama
    safeguard = CATALOG.model("gpt-oss-safeguard-20b")
    assert safeguard is not None and hf_blocked(safeguard, False) == "gpt_oss"
    assert ollama_tag(safeguard, "MXFP4", ollama_tags(), None, blocked="gpt_oss").tag is None
    assert hf_blocked(llama, True) == "vision" and hf_blocked(llama, False) == ""
    q8 = ollama_tag(llama, "Q8_0", ollama_tags(), None)
    assert q8.kind == "gguf_repo" and q8.tag == f"hf.co/{llama.gguf_repo}:Q8_0"
    bare = llama.model_copy(update={"gguf_repo": None})
    assert ollama_tag(bare, "Q8_0", ollama_tags(), None).kind == "unknown"


def test_ollama_default_context_follows_vram():
    assert ollama_default_context(12 * GIB) == 4096
    assert ollama_default_context(round(23.99 * GIB)) == 4096
    assert ollama_default_context(32 * GIB) == 32768
    assert ollama_default_context(80 * GIB) == 262144


def test_ollama_command_sets_context_and_cache_type():
    cmd = ollama_command(16384, KvCacheType.Q8_0, TagChoice(tag="qwen3:32b", kind="library"))
    assert cmd.lines == (
        "OLLAMA_CONTEXT_LENGTH=16384 OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve",
        "ollama run qwen3:32b",
    )
    assert ollama_command(8192, KvCacheType.F16, TagChoice(tag=None, kind="unknown")).lines[-1].endswith("serve")


def test_lm_studio_settings_follow_the_placement():
    moe, _, _, _ = est("gpt-oss-120b", "rtx-4090")
    settings = {s.code: s.value for s in lm_studio_settings(moe)}
    assert settings["gpu_offload"] == "36/36" and settings["experts_on_cpu"] == "on"
    dense, m, _, _ = est("llama-3.1-70b-instruct", "rtx-4090")
    assert dense.offload.mode == "layers"
    layers = {s.code: s.value for s in lm_studio_settings(dense)}["gpu_offload"]
    assert layers == f"{dense.offload.layers_on_gpu}/{m.n_layers}" and "experts_on_cpu" not in layers
    q8, _, _, _ = est("qwen3-8b", "rtx-4090", kv_cache=KvCacheType.Q8_0, context=32768)
    q8_settings = {s.code: s.value for s in lm_studio_settings(q8)}
    assert q8_settings["k_cache"] == "q8_0" and q8_settings["context_length"] == "32768"


def test_fit_command_drops_the_manual_placement_flags():
    e, m, g, req = est("gpt-oss-120b", "rtx-4090")
    llama = next(c for c in launch_commands(scenario(m, g, req, CATALOG), CATALOG) if c.engine is Engine.LLAMA_CPP)
    assert dict(manual_flags(llama)) == {"-ngl": "999", "--n-cpu-moe": str(e.offload.cpu_moe_layers)}
    auto = fit_command(llama)
    assert auto is not None
    words = auto.lines[0].split()
    assert "-ngl" not in words and "--n-cpu-moe" not in words and words[-4:] == ["--fit", "on", "--fit-target", "1024"]
    assert words[words.index("--ctx-size") + 1] == "8192"


def test_vllm_awq_command_points_at_the_awq_repository():
    _, m, g, req = est("qwen3-32b", "rtx-4090", quant="AWQ", engine=Engine.VLLM)
    vllm = next(c for c in launch_commands(scenario(m, g, req, CATALOG), CATALOG) if c.engine is Engine.VLLM)
    assert vllm.argv[2] == "Qwen/Qwen3-32B"  # what the base command names
    repo = quantized_repo(m.id, vllm.quant, quant_repos())
    assert repo is not None
    fixed = with_repo(vllm, repo.repo)
    assert fixed.argv[:3] == ("vllm", "serve", "Qwen/Qwen3-32B-AWQ")
    assert vllm.notes and not fixed.notes  # the "needs a pre-quantized checkpoint" note is gone
    assert quantized_repo("qwen3-32b", "GPTQ", quant_repos()) is None


def test_every_ollama_tag_cites_an_ollama_source_or_is_marked_unverified():
    """Issue 26: a tag comes from Ollama's own list (README at a pinned commit, or an ollama.com page);
    where that source does not show the quant, the row says so."""
    readme = "https://github.com/ollama/ollama/blob/379fd64fa/README.md"
    # the repo's tests and app (issue 35): the tags they pull or list
    tree = ("https://github.com/ollama/ollama/blob/fb3076099/", "https://github.com/ollama/ollama/blob/f8a6e8881/")
    for row in ollama_tags():
        source = row.provenance.source
        assert source.startswith((readme, *tree, "https://ollama.com/library/")), row
        if source.startswith(readme):
            assert row.provenance.unverified == (), row
        elif source.startswith(tree) and "convert_gptoss.go" in source:
            assert row.quant == "MXFP4" and row.provenance.unverified == (), row  # gpt-oss ships MXFP4
        elif row.quant.lower() not in row.tag.lower():
            assert row.provenance.unverified == ("quant",), row
    qwen = CATALOG.model("qwen3-8b")
    assert qwen is not None and ollama_tag(qwen, "Q4_K_M", ollama_tags(), None).unverified == ("quant",)
