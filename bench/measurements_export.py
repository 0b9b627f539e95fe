"""Writes ``catalog/facts/measurements.toml``: the calibration runs that are a catalog model on a catalog device.

    .venv/bin/python bench/measurements_export.py [--quick]

The llama-bench rows of ``bench/calibration/`` (each with its source, build and date) whose model and
device the catalog holds become facts a card shows beside its estimate ("measured 128 tok/s"). Only
runs at an empty cache (depth 0) of a single stream: tg (decode) and pp (prefill) as llama-bench
prints them. Run it after adding calibration rows; ``--quick`` only checks that the stored file is
what this script would write (CI), and exits 1 if not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.speed_data import BACKENDS, load_rows, raw_rows
from catalog.facts import FACTS_DIR, load_facts

OUT = FACTS_DIR / "measurements.toml"
HEADER = """# llama-bench runs of a catalog model on catalog devices (issue 38), written by
# bench/measurements_export.py from bench/calibration/*.csv: each row as its source printed it.
# kind: decode (tg) or prefill (pp); test: llama-bench's own label; a card shows the newest matching run.
"""


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render() -> str:
    catalog = load_facts()
    models, gpus = {m.id for m in catalog.models}, {g.id for g in catalog.gpus}
    raw = dict(raw_rows())
    rows, _, _ = load_rows()
    out = [HEADER]
    for row in sorted(rows, key=lambda r: (r.model.id, r.gpu.id, r.quant_id, r.kind, r.label, r.index)):
        if row.model.id not in models or row.gpu.id not in gpus or row.depth:
            continue
        source = raw[row.index]
        fields = {
            "model": row.model.id,
            "quant": row.quant_id,
            "gpu": row.gpu.id,
            "gpus": str(row.n_gpus),
            "backend": BACKENDS[row.backend].value,
            "kind": row.kind,
            "test": row.label,
            "tokens_per_s": f"{row.measured:g}",
            "build": source["build"].strip(),
            "source": source["source"].strip(),
            "as_of": source["date"].strip(),
        }
        lines = ["[[measurement]]"]
        for key, value in fields.items():
            lines.append(f"{key} = {value}" if key in ("gpus", "tokens_per_s") else f"{key} = {_quote(value)}")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="check the stored file only")
    args = parser.parse_args()
    text = render()
    if args.quick:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.name}: {'up to date' if same else 'stale: run bench/measurements_export.py'}")
        sys.exit(0 if same else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count('[[measurement]]')} runs)")


if __name__ == "__main__":
    main()
