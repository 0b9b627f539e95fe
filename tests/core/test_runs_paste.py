"""Pasted benchmark runs (issue 38 item 2): the real formats read, hostile or cut-off pastes read as nothing.

Fixtures are the programs' own output as their sources print it: llama-bench's markdown and JSON from
ggml-org/llama.cpp tools/llama-bench/README.md (markdown_printer / json_printer in llama-bench.cpp),
the timing lines of tools/server/server.cpp (print_timings) and llama_perf_context_print, and the
``ollama run --verbose`` statistics block.
"""

from __future__ import annotations

import json

import pytest

from core.runs.check import bounds, check
from core.runs.paste import looks_like_runs, normal_quant, read_paste

MARKDOWN = """\
| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  -1 |           pp512 |      7340.20 ± 23.45 |
| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  -1 |           tg128 |        120.60 ± 0.59 |
| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  -1 |    tg128 @ d512 |        116.71 ± 0.60 |

build: 8a1d9c25 (4305)
"""
JSON_RUN = {
    "build_commit": "8cf427ff",
    "build_number": 5163,
    "gpu_info": "NVIDIA GeForce RTX 4080",
    "backends": "CUDA",
    "model_filename": "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf",
    "model_type": "qwen2 7B Q4_K - Medium",
    "model_size": 4677120000,
    "model_n_params": 7615616512,
    "n_gpu_layers": -1,
    "n_prompt": 512,
    "n_gen": 0,
    "n_depth": 0,
    "avg_ts": 7100.002165,
    "stddev_ts": 140.341520,
    "samples_ts": [6863.1, 7147.55],
}
SERVER = """\
slot print_timing: id  0 | task 0 | prompt eval time =     123.45 ms /   512 tokens (    0.24 ms per token,  4147.39 tokens per second)
slot print_timing: id  0 | task 0 |        eval time =    1234.56 ms /   128 tokens (    9.65 ms per token,   103.68 tokens per second)
"""
OLLAMA = """\
total duration:       2.283625s
prompt eval count:    26 token(s)
prompt eval duration: 51.2803ms
prompt eval rate:     507.02 tokens/s
eval count:           290 token(s)
eval duration:        2.200542s
eval rate:            131.79 tokens/s
"""


def test_llama_bench_markdown():
    paste = read_paste(MARKDOWN + "on my 4090")
    assert [(r.kind, r.n_tokens, r.depth, r.tokens_per_s) for r in paste.runs] == [
        ("prefill", 512, 0, 7340.20),
        ("decode", 128, 0, 120.60),
        ("decode", 128, 512, 116.71),
    ]
    first = paste.runs[0]
    assert (first.quant, first.backend, first.build, first.stddev) == ("Q4_K_M", "CUDA", "8a1d9c25 (4305)", 23.45)
    assert first.params == 7_620_000_000 and "4090" in paste.words


@pytest.mark.parametrize("layout", ["json", "jsonl"])
def test_llama_bench_json_and_jsonl(layout):
    decode = {**JSON_RUN, "n_prompt": 0, "n_gen": 128, "avg_ts": 118.88}
    text = (
        json.dumps([JSON_RUN, decode], indent=2)
        if layout == "json"
        else f"{json.dumps(JSON_RUN)}\n{json.dumps(decode)}"
    )
    runs = read_paste(text).runs
    assert [(r.kind, r.test, r.tokens_per_s) for r in runs] == [
        ("prefill", "pp512", 7100.002165),
        ("decode", "tg128", 118.88),
    ]
    assert runs[0].gpu_info == "NVIDIA GeForce RTX 4080" and runs[0].build == "8cf427ff (5163)"


def test_server_and_ollama_timings():
    server = read_paste(SERVER).runs
    assert [(r.kind, r.n_tokens, r.tokens_per_s) for r in server] == [
        ("prefill", 512, 4147.39),
        ("decode", 128, 103.68),
    ]
    ollama = read_paste(OLLAMA).runs
    assert [(r.kind, r.n_tokens, r.tokens_per_s) for r in ollama] == [("prefill", 26, 507.02), ("decode", 290, 131.79)]


def test_vllm_output_throughput():
    runs = read_paste("Maximum request concurrency: 4\nOutput token throughput (tok/s):         812.33\n").runs
    assert runs[0].source == "vllm" and runs[0].concurrency == 4 and runs[0].tokens_per_s == 812.33


@pytest.mark.parametrize("text", [MARKDOWN, json.dumps([JSON_RUN]), SERVER, OLLAMA])
def test_every_format_is_recognised_and_every_cut_reads_safely(text):
    assert looks_like_runs(text)
    for cut in range(0, len(text), max(1, len(text) // 40)):  # a paste cut anywhere: runs or a problem, never a crash
        paste = read_paste(text[:cut])
        assert paste.runs or paste.problem


def test_hostile_pastes_read_as_nothing():
    assert read_paste('"avg_ts": ' + "[" * 5000).problem == "truncated_json"
    assert read_paste("x" * 20_000).problem == "too_long"
    assert read_paste(MARKDOWN.replace("120.60", "1e999")).skipped == 1
    assert read_paste(json.dumps([{**JSON_RUN, "avg_ts": float("inf")}], allow_nan=True)).problem


@pytest.mark.parametrize(
    ("label", "quant"),
    [("llama 8B Q4_K - Medium", "Q4_K_M"), ("qwen3 14B Q5_K - Small", "Q5_K_S"), ("llama 7B mostly Q4_0", "Q4_0"),
     ("gemma3 27B IQ4_XS - 4.25 bpw", "IQ4_XS"), ("gpt-oss 20B MXFP4 MoE", "MXFP4"), ("llama 8B F16", "F16")],
)  # fmt: skip
def test_llama_bench_type_names(label, quant):
    assert normal_quant(label) == quant


def test_published_runs_pass_the_physical_check():
    from catalog.facts import load_facts
    from core.weights import weights

    catalog = load_facts()
    model, gpu, quant = catalog.model("qwen3-8b"), catalog.gpu("rtx-4090"), catalog.quant("Q4_K_M")
    assert model and gpu and quant
    limits = bounds(model, weights(model, quant, catalog.size(model.id, quant.id)), gpu)
    assert check("decode", 130.0, 140.0, limits) == "ok"
    assert check("decode", limits.decode_tokens_per_s * 1.01, 140.0, limits) == "above_bandwidth"
    assert check("prefill", limits.prefill_tokens_per_s * 1.01, 9000.0, limits) == "above_compute"
    assert check("decode", 20.0, 140.0, limits) == "far_below"
