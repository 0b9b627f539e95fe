"""Drafts ``[[model]]`` rows for models.toml from llmfit's ``hf_models.json``.

llmfit (PyPI, MIT licence, https://github.com/AlexsJones/llmfit) embeds a JSON list of ~16.8k Hugging Face repos in
its binary with config fields. This script prints a TOML row to paste into ``models.toml`` and then edit (display
name, aliases, sliding-window layer mix, MLA or hybrid fields the data set does not have). It is how the rows after the
llmfit divider in ``models.toml`` were made.

Caveats of the data set, handled here: the dense FFN width is stored in ``moe_intermediate_size``; a repo whose own
row has no config fields borrows them from a mirror with the same file name (``unsloth/...``); ``tie_word_embeddings``
is absent, so the row takes the reading that reproduces the checkpoint's parameter count and marks it unverified;
``context_length`` defaults to 4096 and ``active_parameters`` is wrong for MLA models - check both.

    pip download --no-deps llmfit==1.1.17 -d /tmp/llmfit && unzip -o -q /tmp/llmfit/*.whl -d /tmp/llmfit
    python -m catalog.importers.llmfit_models /tmp/llmfit/llmfit-1.1.17.data/scripts/llmfit Qwen/Qwen2.5-0.5B-Instruct
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from catalog.facts import model_from_row
from catalog.importers.hf_index_build import extract_models
from catalog.model_files.params import architecture_params

SOURCE = "llmfit 1.1.17 (PyPI wheel, MIT) embedded hf_models.json"


def geometry_row(models: list[dict[str, Any]], repo: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the repo's own row, the row that has its config fields: itself or a same-named mirror)."""
    own = next((m for m in models if m.get("name", "").lower() == repo.lower()), None)
    if own is not None and own.get("num_hidden_layers"):
        return own, own
    base = repo.split("/")[-1].lower()
    mirror = next(
        (m for m in models if m.get("name", "").split("/")[-1].lower() == base and m.get("num_hidden_layers")), None
    )
    if mirror is None:
        raise KeyError(f"{repo}: no row with config fields in the data set")
    return own or mirror, mirror


def draft(models: list[dict[str, Any]], repo: str, row_id: str) -> dict[str, Any]:
    """A models.toml row (as a dict) for one repo; fields the data set lacks are left for the editor."""
    own, geo = geometry_row(models, repo)
    moe = bool(geo.get("num_experts"))
    total_b = round(geo["parameters_raw"] / 1e9, 3)
    row: dict[str, Any] = {
        "id": row_id,
        "name": repo.split("/")[-1],
        "family": repo.split("/")[-1].split("-")[0],
        "hf_repo": repo,
        "gguf_repo": (
            own.get("gguf_sources") or geo.get("gguf_sources") or [{"repo": f"unsloth/{repo.split('/')[-1]}-GGUF"}]
        )[0]["repo"],
        "architecture": geo.get("architecture", ""),
        "total_params_b": total_b,
        "active_params_b": round(geo["active_parameters"] / 1e9, 3)
        if moe and geo.get("active_parameters")
        else total_b,
        "n_layers": geo["num_hidden_layers"],
        "hidden_size": geo["hidden_size"],
        "n_heads": geo["num_attention_heads"],
        "n_kv_heads": geo["num_key_value_heads"],
        "head_dim": geo["head_dim"],
        "attention": "gqa",
        "vocab_size": geo["vocab_size"],
        "max_context": geo["context_length"],
        "license": own.get("license") or "",
        "release": own.get("release_date") or "",
    }
    if moe:
        row |= {
            "n_experts": geo["num_experts"],
            "experts_per_token": geo["active_experts"],
            "moe_intermediate_size": geo["moe_intermediate_size"],
        }
    else:
        row["intermediate_size"] = geo["moe_intermediate_size"]
    if own.get("hf_downloads") is not None:
        row["hf_downloads"] = own["hf_downloads"]
    row["aliases"] = [repo.split("/")[-1].lower().replace("-", " ")]
    row["source"] = f"{SOURCE}: row {geo['name']}"
    row["as_of"] = "2026-11-30"
    best: tuple[float, bool] | None = None
    for tied in (False, True):
        spec = model_from_row(dict(row) | {"tied_embeddings": tied})
        computed = architecture_params(spec)
        deviation = abs(spec.total_params - computed) / spec.total_params if computed else 9.0
        if best is None or deviation < best[0]:
            best = (deviation, tied)
    assert best is not None
    row["tied_embeddings"] = best[1]
    row["unverified"] = ["tied_embeddings"] + ([] if own.get("gguf_sources") else ["gguf_repo"])
    return row


def to_toml(row: dict[str, Any]) -> str:
    lines = ["[[model]]"]
    for key, value in row.items():
        text = ("true" if value else "false") if isinstance(value, bool) else json.dumps(value)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="the llmfit binary from the wheel, or an extracted hf_models.json")
    parser.add_argument("repos", nargs="+", help="Hugging Face repo ids")
    args = parser.parse_args(argv)
    models = extract_models(args.source.read_bytes())
    for repo in args.repos:
        print(to_toml(draft(models, repo, repo.split("/")[-1].lower())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
