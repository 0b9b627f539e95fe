"""``-ot`` patterns from a paste: matched like llama.cpp's ``std::regex_search``, never by a backtracking engine.

The class of the attack in issue 40 is every pattern whose backtracking cost grows exponentially with
the name's length (nested or overlapping quantifiers). RE2 runs each in linear time or refuses it, so
a paste can neither stall the answer thread nor change what an ordinary pattern places.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.facts import load_facts
from core.diagnose.place import Settings, layout
from core.diagnose.tensor_patterns import MAX_PATTERN_CHARS, MAX_PATTERNS, compile_overrides

CATALOG = load_facts()
# Patterns people paste (llama.cpp discussions on MoE offload, unsloth and ggml-org model cards).
REAL_PATTERNS = (
    r"\.ffn_.*_exps\.=CPU",
    r"exps=CPU",
    r"ffn_(up|down)_exps=CPU",
    r"blk\.([0-9]|1[0-9])\.ffn_.*_exps\.=CPU",
    r"blk\.(2[0-9]|3[0-9])\.=CUDA1",
    r"blk\.\d*[02468]\.ffn_(gate|up|down)_exps\.weight=CPU",
    r"^blk\.[0-9]+\.attn_.*=CUDA0",
    r"ffn_.*=CPU",
)
TENSORS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_up", "ffn_gate", "ffn_down") + tuple(
    f"ffn_{t}_exps" for t in ("up", "gate", "down")
)
NAMES = [f"blk.{i}.{t}.weight" for i in range(96) for t in TENSORS]


def _split(item: str) -> tuple[str, str]:
    pattern, _, buffer = item.rpartition("=")
    return pattern, buffer


@pytest.mark.parametrize("item", REAL_PATTERNS)
def test_real_patterns_match_what_a_backtracking_engine_matches(item):
    pattern, buffer = _split(item)
    rules, refused = compile_overrides(((pattern, buffer),))
    assert not refused and len(rules) == 1
    matches, _ = rules[0]
    python = re.compile(pattern)
    assert [matches(n) for n in NAMES] == [python.search(n) is not None for n in NAMES]


# The shapes that backtrack exponentially: a quantified group whose body is itself quantified or has
# overlapping alternatives, before something the names never contain.
_ATOMS = st.sampled_from([".", "a", r"\w", r"\d", "[a-z]", "b", r"\."])
_INNER = st.builds(lambda a, q: a + q, _ATOMS, st.sampled_from(["+", "*", "", "?"]))
_GROUP = st.builds(
    lambda xs, sep, q: "(" + sep.join(xs) + ")" + q,
    st.lists(_INNER, min_size=1, max_size=3),
    st.sampled_from(["|", ""]),
    st.sampled_from(["*", "+", "{2,}", "{1,99}"]),
)
EVIL = st.builds(
    lambda pre, groups, tail: pre + "".join(groups) + tail,
    st.sampled_from(["", "^", "blk", r"blk\."]),
    st.lists(_GROUP, min_size=1, max_size=3),
    st.sampled_from(["Z", "$", "!", r"\.weightZ", "(x|y)Q"]),
)


@settings(max_examples=200, deadline=None)
@given(EVIL)
def test_every_backtracking_shape_is_run_linearly_or_refused(pattern):
    rules, refused = compile_overrides(((pattern, "CPU"),))
    assert len(rules) + len(refused) == 1
    for matches, _ in rules:
        for name in ("blk.7." + "a" * 300 + ".weight", "a" * 2000, NAMES[-1]):
            matches(name)  # linear in the name: 200 examples x 3 names in well under a second


def test_the_issue_paste_is_placed_in_bounded_time_in_a_fresh_process():
    """The paste of issue 40 against a 94-layer MoE: a backtracking engine needs hours for it; the
    child must finish placing it (the limit is generous, it catches a return of ``re``)."""
    code = (
        "from catalog.facts import load_facts\n"
        "from core.diagnose.place import Settings, layout\n"
        "c = load_facts(); m = c.model('qwen3-235b-a22b'); q = c.quant('Q4_K_M')\n"
        "s = Settings(context=8192, gpu_layers=999, overrides=(('(.|.)*Z', 'CPU'), ('(a+)+$', 'CPU'), (r'(\\w+\\s?)*$', 'CPU')))\n"
        "lay = layout(m, q, c.size(m.id, q.id), c.gpu('rtx-4090'), 1, 64 * 10**9, s)\n"
        "print(len(lay.bad_patterns))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "0"  # all three run (linear), none needed refusing


@pytest.mark.parametrize(
    "pattern",
    [r"(blk)\.\1=CPU", r"(?=blk)exps=CPU", r"(?<!x)exps=CPU", r"exps(?!x)=CPU", "(exps=CPU", "[exps=CPU"],
)
def test_patterns_no_linear_engine_runs_are_reported_not_applied(pattern):
    model = CATALOG.model("qwen3-30b-a3b")
    quant = CATALOG.quant("Q4_K_M")
    assert model is not None and quant is not None
    s = Settings(context=8192, gpu_layers=999, overrides=(_split(pattern),))
    lay = layout(model, quant, CATALOG.size(model.id, quant.id), CATALOG.gpu("rtx-4090"), 1, 64 * 10**9, s)
    assert lay.bad_patterns == (_split(pattern)[0],)


def test_too_long_and_too_many_patterns_are_refused():
    long = ("a" * (MAX_PATTERN_CHARS + 1), "CPU")
    rules, refused = compile_overrides((long,))
    assert not rules and refused == [long[0]]
    many = tuple((f"blk\\.{i}\\.", "CPU") for i in range(MAX_PATTERNS + 5))
    rules, refused = compile_overrides(many)
    assert len(rules) == MAX_PATTERNS and len(refused) == 5
