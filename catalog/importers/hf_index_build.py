"""Builds ``catalog/data/hf_index.json.gz`` from llmfit's ``hf_models.json``.

llmfit (PyPI, MIT licence, https://github.com/AlexsJones/llmfit) embeds a JSON list of ~16.8k Hugging Face
repos with parameter counts, downloads, release dates and config fields in its binary. This script takes the
most downloaded text-generation and image-text-to-text repos, keeps the fields the name matcher needs and
drops nulls. Run it by hand when llmfit publishes a newer wheel; nothing downloads at run time.

    pip download --no-deps llmfit==1.1.17 -d /tmp/llmfit && unzip -o -q /tmp/llmfit/*.whl -d /tmp/llmfit
    python -m catalog.importers.hf_index_build /tmp/llmfit/llmfit-1.1.17.data/scripts/llmfit --top 4000
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "hf_index.json.gz"
PIPELINES = ("text-generation", "image-text-to-text")
# llmfit field -> index field
FIELDS = {
    "num_hidden_layers": "n_layers",
    "hidden_size": "hidden_size",
    "num_attention_heads": "n_heads",
    "num_key_value_heads": "n_kv_heads",
    "head_dim": "head_dim",
    "vocab_size": "vocab_size",
    "num_experts": "n_experts",
    "active_experts": "experts_per_token",
    "context_length": "max_context",
    "architecture": "model_type",
    "license": "license",
    "release_date": "release",
    "pipeline_tag": "pipeline",
}


def extract_models(blob: bytes) -> list[dict[str, Any]]:
    """The largest JSON list of ``{"name": ...}`` objects embedded in the llmfit binary (or a plain JSON file)."""
    decoder = json.JSONDecoder()
    best: list[dict[str, Any]] = []
    for match in re.finditer(rb'\[\s*\{\s*"name":', blob):
        try:
            obj, _ = decoder.raw_decode(blob[match.start() :].decode("utf-8", "replace"))
        except ValueError:
            continue
        if isinstance(obj, list) and len(obj) > len(best):
            best = obj
    return best


def index_rows(models: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """Most downloaded repos first, one row per repo, null fields dropped."""
    seen: set[str] = set()
    rows = []
    for m in sorted(models, key=lambda r: -(r.get("hf_downloads") or 0)):
        repo = m.get("name")
        if not repo or repo in seen or m.get("pipeline_tag") not in PIPELINES or not m.get("parameters_raw"):
            continue
        seen.add(repo)
        row: dict[str, Any] = {
            "repo": repo,
            "params": int(m["parameters_raw"]),
            "downloads": int(m.get("hf_downloads") or 0),
        }
        if m.get("is_moe") and m.get("active_parameters"):
            row["active_params"] = int(m["active_parameters"])
        for src, dst in FIELDS.items():
            value = m.get(src)
            if value not in (None, "", "unknown"):
                row[dst] = value
        rows.append(row)
        if len(rows) >= top:
            break
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="the llmfit binary from the wheel, or an extracted hf_models.json")
    parser.add_argument("--top", type=int, default=4000)
    args = parser.parse_args(argv)
    rows = index_rows(extract_models(args.source.read_bytes()), args.top)
    payload = {
        "source": "llmfit 1.1.17 (PyPI wheel, MIT licence) embedded hf_models.json; downloads as recorded there",
        "rows": rows,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode(), mtime=0))
    print(f"{len(rows)} repos -> {OUT} ({OUT.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
