"""The CLI takes hardware and quant names as people write them and prints what it assumed (issue 22)."""

from __future__ import annotations

import json

import pytest

from bot.app.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("gpu", "answered", "assumed"),
    [
        ("rtx 3080", "RTX 3080", "read as RTX 3080 10GB (others: rtx-3080-12gb)"),
        ("3060", "RTX 3060 12GB", "read as RTX 3060 12GB (others: rtx-3060-8gb)"),
        ("tesla v100", "V100 16GB", "read as V100 16GB (others: v100-32gb)"),
        ("m4 max 40-core", "M4 Max 48GB", "comes with 48/64/128 GB; estimated for the smallest"),
        ("m3 max", "M3 Max 36GB", "comes with 36/48/64/96/128 GB"),
    ],
)
def test_bare_names_answer_with_the_assumption_printed(capsys, gpu, answered, assumed):
    code, out, err = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", gpu)
    assert code == 0, err
    assert answered in out.splitlines()[0], out
    assert f"assumed: {gpu!r} {assumed}" in err, err


def test_apple_core_count_is_the_bin_not_a_count(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "m2 max 38-core 96gb", "--json")
    data = json.loads(out)
    assert code == 0 and data["hardware"]["gpu"] == "m2-max-96" and data["hardware"]["count"] == 1


def test_mixed_rig_prints_the_placement_and_a_command_that_reproduces_it(capsys):
    code, out, err = run(capsys, "estimate", "--model", "gpt-oss-120b", "--gpu", "4090 + 3060", "--ram", "64")
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("placement: ")]
    assert any("RTX 4090:" in line for line in lines) and any("RTX 3060 12GB:" in line for line in lines), err
    shares = [line.rsplit(" ", 1)[-1] for line in lines if "--tensor-split share" in line]
    assert f"--tensor-split {','.join(shares)}" in out, out
    assert "RAM: experts of the first" in err  # the MoE experts that do not fit stay in RAM


def test_mixed_rig_json_is_one_document(capsys):
    code, out, _ = run(capsys, "estimate", "--model", "llama-3.3-70b-instruct", "--gpu", "4090+3090", "--json")
    data = json.loads(out)
    assert code == 0 and data["hardware"]["gpu"] == "rig:rtx-4090+rtx-3090" and data["hardware"]["count"] == 2
    assert any("--tensor-split" in c["shell"] and "1,1" not in c["shell"] for c in data["advice"]["commands"])


@pytest.mark.parametrize(
    ("typed", "used", "said"),
    [
        ("Q6_K_L", "Q6_K_L", False),
        ("q2_k_xl", "UD-Q2_K_XL", True),
        ("Q4_0_4_4", "Q4_0", True),
        ("q4_k_l", "Q4_K_L", False),
    ],
)
def test_quant_names(capsys, typed, used, said):
    code, out, err = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "4090", "--quant", typed)
    assert code == 0 and f"· {used} ·" in out.splitlines()[0], (out, err)
    assert (f"read as {used}" in err) is said, err


def test_unknown_quant_is_refused_with_the_list(capsys):
    code, _, err = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "4090", "--quant", "Q7_K_Z")
    assert code == 2 and "unknown quant 'Q7_K_Z'" in err and "Q6_K_L" in err


def test_a_named_quant_prints_what_it_is(capsys):
    code, out, err = run(capsys, "estimate", "--model", "qwen3-32b", "--gpu", "rtx 3080", "--quant", "Q6_K_L")
    assert code == 0 and "· Q6_K_L ·" in out.splitlines()[0], err
    assert "assumed: quant Q6_K_L (Q6_K, embed/output Q8_0)" in err
    assert "assumed: 'rtx 3080' read as RTX 3080 10GB" in err
