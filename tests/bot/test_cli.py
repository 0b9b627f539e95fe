"""The fitbot CLI end to end (in-process): JSON contract, human output, bad input, local files."""

from __future__ import annotations

import json

import pytest

from bot.app.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_json_has_the_promised_fields(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "glm-4.5-air", "--gpu", "rtx 4090", "--ram", "128", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["model"]["id"] == "glm-4.5-air"
    assert data["quant"] == "Q4_K_M" and data["context"] == 8192 and data["engine"] == "llama.cpp"
    assert data["hardware"]["gpu"] == "rtx-4090" and data["hardware"]["count"] == 1
    assert data["hardware"]["usable_bytes"] > 0
    for key in ("weights_bytes", "kv_cache_bytes", "overhead_bytes", "total_bytes", "reserve_bytes"):
        assert isinstance(data["memory"][key], int)
    assert data["memory"]["kv_cache_bytes"] == int(1.4375 * 2**30)
    assert data["verdict"] == "offload"
    assert data["offload"]["mode"] == "experts" and data["offload"]["bytes_in_ram"] > 0
    assert any("default" in a for a in data["assumptions"])


def test_gpu_count_prefix_and_flag(capsys):
    _, out, _ = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "2x 3090", "--json")
    assert json.loads(out)["hardware"]["count"] == 2
    _, out, _ = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "3090", "--gpus", "4", "--json")
    assert json.loads(out)["hardware"]["count"] == 4


def test_human_output_reads_like_a_breakdown(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "llama-3.1-8b-instruct", "--gpu", "4090", "--ctx", "32k")
    assert code == 0
    assert "verdict: fits" in out and "KV cache" in out and "32,768 tokens" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--model", "llama 3 7", "--gpu", "4090"), "did you mean"),
        (("--model", "llama-3.1-8b-instruct", "--gpu", "rtx 9999"), "unknown gpu"),
        (("--model", "llama-3.1-8b-instruct", "--gpu", "mac studio m4 ultra"), "m4 ultra"),
        (("--model", "llama-3.1-8b-instruct", "--gpu", "4090", "--quant", "Q9_X"), "unknown quant"),
        (("--model", "llama-3.1-8b-instruct", "--gpu", "4090", "--quant", "AWQ"), "cannot be served by llama.cpp"),
        (("--model", "/nonexistent/config.json", "--gpu", "4090"), "no such file"),
    ],
)
def test_bad_input_exits_with_one_clear_line(capsys, argv, message):
    code, out, err = run(capsys, "estimate", *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err.lower()
    assert "Traceback" not in err


@pytest.mark.parametrize("ctx", ["-5", "0", "99999999999", "lots"])
def test_absurd_context_is_rejected_by_the_parser(capsys, ctx):
    with pytest.raises(SystemExit) as exc:
        main(["estimate", "--model", "qwen3-8b", "--gpu", "4090", "--ctx", ctx])
    assert exc.value.code == 2
    assert "context" in capsys.readouterr().err


def test_local_config_json(capsys, tmp_path):
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "vocab_size": 128256,
        "intermediate_size": 14336,
        "max_position_embeddings": 131072,
        "torch_dtype": "bfloat16",
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, _ = run(capsys, "estimate", "--model", str(path), "--gpu", "4090", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["memory"]["kv_cache_bytes"] == 1 << 30  # 8K context, 32 layers x 8 heads x 128
    assert 7.9e9 < data["model"]["total_params"] < 8.1e9


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (
            '{"model_type": "llama", "num_hidden_layers": 1000000000000, "hidden_size": 4096,'
            ' "num_attention_heads": 32, "vocab_size": 32000}',
            "out of bounds",
        ),
        (
            '{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,'
            ' "num_attention_heads": -4, "vocab_size": 32000}',
            "out of bounds",
        ),
        ('{"model_type": "mamba_banana", "num_hidden_layers": 32}', "can't estimate"),
    ],
)
def test_malformed_config_is_one_line(capsys, tmp_path, content, message):
    path = tmp_path / "config.json"
    path.write_text(content)
    code, _, err = run(capsys, "estimate", "--model", str(path), "--gpu", "4090")
    assert code == 2 and message in err


def test_local_gguf_header_is_read_without_weights(capsys, tmp_path):
    gguf = pytest.importorskip("gguf")
    import numpy as np

    path = tmp_path / "tiny-Q8_0.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(4)
    writer.add_embedding_length(256)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_context_length(4096)
    writer.add_file_type(7)
    writer.add_tensor("token_embd.weight", np.zeros((1000, 256), dtype=np.float32))
    writer.add_tensor("output.weight", np.zeros((1000, 256), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    code, out, _ = run(capsys, "estimate", "--model", str(path), "--gpu", "4090", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["quant"] == "Q8_0"
    assert data["memory"]["weights_bytes"] == 2 * 1000 * 256 * 4  # measured tensor bytes
    # 4 layers x 2 KV heads x 64 dims x 2 (K and V) x 2 bytes x 4096 tokens (the trained maximum)
    assert data["memory"]["kv_cache_bytes"] == 4 * 2 * 64 * 2 * 2 * 4096


def test_broken_gguf_is_one_line(capsys, tmp_path):
    path = tmp_path / "broken.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00garbage")
    code, _, err = run(capsys, "estimate", "--model", str(path), "--gpu", "4090")
    assert code == 2 and "gguf" in err.lower()


@pytest.mark.parametrize("what", ["gpus", "models", "offers", "quants"])
def test_catalog_listing_shows_sources(capsys, what):
    code, out, _ = run(capsys, "catalog", what, "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) > 5
    assert all(r["provenance"]["source"] and r["provenance"]["as_of"] for r in rows)


def test_ask_answers_in_the_questions_language(capsys):
    code, out, _ = run(capsys, "ask", "passt", "Qwen3", "32B", "auf", "zwei", "3090?")
    assert code == 0
    assert "Qwen3-32B auf 2x RTX 3090" in out and "Gewichte" in out and "GiB" in out


def test_ask_json_is_the_reply_model(capsys):
    code, out, _ = run(capsys, "ask", "/fit qwen3-8b 4090", "--json")
    data = json.loads(out)
    assert code == 0 and data["kind"] == "fit" and data["locale"] == "en"
    assert data["sections"][0]["rows"][0]["label"] == "Weights"


def test_chat_reads_questions_until_eof(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("/fit qwen3-8b 4090\n1\n/quit\n"))
    code, out, _ = run(capsys, "chat")
    assert code == 0
    assert out.count("Qwen3-8B on RTX 4090") == 2  # the question, then button 1 (32K context)
    assert "32K context" in out


def test_health_and_stats_on_a_fresh_data_dir(capsys, tmp_path):
    """``fitbot health`` refuses a directory ``fitbot run`` did not make (naming it, creating nothing)."""
    from bot.app import datadir

    data = tmp_path / "data"
    code, out, err = run(capsys, "health")
    assert code == 1 and str(data) in err and "FITBOT_DATA_DIR" in err and not data.exists()
    data.mkdir()
    datadir.mark(data)
    code, out, _ = run(capsys, "health")
    assert code == 0 and out.startswith(f"ok: {data}: catalog")
    code, out, _ = run(capsys, "stats", "--json")
    assert code == 0 and json.loads(out)["questions"] == 0


def test_run_without_tokens_says_what_to_set(capsys):
    code, _, err = run(capsys, "run")
    assert code == 1 and "TELEGRAM_BOT_TOKEN" in err


def test_finetune_json(capsys):
    code, out, _ = run(capsys, "finetune", "--model", "llama-3.1-8b-instruct", "--gpu", "4090", "--json")
    rows = json.loads(out)
    assert code == 0 and [r["method"] for r in rows] == ["qlora", "lora", "full"]
    assert rows[0]["fit"]["verdict"] == "fits" and rows[2]["fit"]["verdict"] == "no_fit"
    assert rows[2]["smallest_hardware"]["gpu_id"]


def test_estimate_json_has_speed_cost_and_advice(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "2x 3090", "--json", "--concurrent", "4")
    data = json.loads(out)
    speed = data["speed"]
    for key in (
        "decode_tokens_per_s",
        "decode_tokens_per_s_at_context",
        "decode_range",
        "prefill_tokens_per_s",
        "ttft_s",
    ):
        assert speed[key]
    assert speed["decode_range"][0] <= speed["decode_tokens_per_s"] <= speed["decode_range"][1]
    assert speed["concurrency"]["users"] == 4
    assert data["cost"]["offers"] and all(o["verdict"] in ("fits", "tight") for o in data["cost"]["offers"])
    assert data["advice"]["commands"][0]["argv"][0] == "llama-server"


def test_a_typo_the_parser_is_sure_about_is_accepted(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "lama 3.1 8b", "--gpu", "rtx4090", "--json")
    assert code == 0 and json.loads(out)["model"]["id"] == "llama-3.1-8b-instruct"


def test_catalog_offers_stale_lists_what_needs_a_refresh(capsys):
    from bot.app.cli import main

    assert main(["catalog", "offers", "--stale", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["reasons"] for r in rows)
    assert all(r["offer"]["provider"] for r in rows)
