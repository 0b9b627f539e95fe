"""The generated questions (bench/question_gen.py) through the parser: the share read right, per class.

    .venv/bin/python bench/question_suite.py [--quick] [--misses N]

``--quick`` runs a seeded sample of 40 questions per class (seconds); without it every generated
question. Prints a Markdown table (README "Generated questions") and, with ``--misses``, the first
misses of each class.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.question_gen import UNSET, Gen, generate
from bot.question_kinds import is_paste
from catalog.facts import load_facts
from catalog.lookup import vocabulary
from core.models import Catalog
from core.query.parse import Query, parse


def misread(g: Gen, q: Query) -> str | None:
    """What the parser read wrong for ``g`` (None: read right)."""
    got = {
        "model": q.model.id if q.model else None,
        "gpu": q.gpu.id if q.gpu else None,
        "count": q.gpu_count,
        "context": q.context,
        "lang": q.language or "en",
        "devices": tuple(m.id or "" for m in (q.gpu, q.gpu2, *q.more_gpus) if m is not None),
        "engine": q.engine.value if q.engine else None,
        "kind": q.device_kind,
        "memory": q.device_memory_gib,
        "users": q.users,
    }
    if g.paste is not UNSET:
        got["paste"] = is_paste(g.text)
    wrong = [f"{k}={got[k]!r} (want {v!r})" for k, v in vars(g).items() if k in got and v is not UNSET and got[k] != v]
    return "; ".join(wrong) or None


def run(catalog: Catalog, per_class: int | None, seed: int = 34) -> dict[str, tuple[int, int, list[str]]]:
    """class -> (right, total, misses)."""
    vocab = vocabulary(catalog)
    out: dict[str, tuple[int, int, list[str]]] = {}
    for g in generate(catalog, seed, per_class):
        right, total, misses = out.get(g.cls, (0, 0, []))
        why = misread(g, parse(g.text, vocab))
        if why:
            misses.append(f"{g.text!r}: {why}")
        out[g.cls] = (right + (why is None), total + 1, misses)
    return out


def table(result: dict[str, tuple[int, int, list[str]]]) -> str:
    rows = ["| Class | Right | Questions | Share |", "|---|---:|---:|---:|"]
    rows += [f"| {c} | {r} | {t} | {100 * r / t:.1f} % |" for c, (r, t, _) in sorted(result.items())]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--misses", type=int, default=0)
    a = ap.parse_args()
    result = run(load_facts(), 40 if a.quick else None)
    print(table(result))
    for c, (_, _, misses) in sorted(result.items()):
        for m in misses[: a.misses]:
            print(f"{c}: {m}")


if __name__ == "__main__":
    main()
