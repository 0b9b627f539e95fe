"""``fitbot estimate --backend`` and a device known only by its specs (--vram/--bandwidth/--tflops)."""

from __future__ import annotations

import json

import pytest

from bot.app.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_backend_flag(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "qwen3-8b", "--gpu", "rx 7900 xtx", "--backend", "radv", "--json")
    assert code == 0 and json.loads(out)["hardware"]["backend"] == "vulkan"
    with pytest.raises(SystemExit) as exit_:
        main(["estimate", "--model", "qwen3-8b", "--gpu", "rtx 4090", "--backend", "opencl"])
    assert exit_.value.code == 2 and "unknown backend" in capsys.readouterr().err


def test_cli_any_device_from_its_specs(capsys):
    argv = ["estimate", "--model", "qwen3-8b", "--gpu", "arc pro b65", "--vram", "32", "--bandwidth", "608", "--json"]
    code, out, _ = run(capsys, *argv)
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "fits" and data["speed"]["confidence"] == "rough"
    low, high = data["speed"]["decode_range"]
    assert low < data["speed"]["decode_tokens_per_s"] < high
    code, _, err = run(capsys, "estimate", "--model", "qwen3-8b", "--gpu", "arc pro b65")
    assert code == 2 and "--vram" in err
    code, out, _ = run(capsys, "estimate", "--model", "qwen3-8b", "--gpu", "rtx 4090", "--bandwidth", "2016", "--json")
    faster = json.loads(out)["speed"]["decode_tokens_per_s"]
    _, out, _ = run(capsys, "estimate", "--model", "qwen3-8b", "--gpu", "rtx 4090", "--json")
    assert faster > json.loads(out)["speed"]["decode_tokens_per_s"] * 1.5
