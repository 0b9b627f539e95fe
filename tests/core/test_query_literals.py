"""Patterns that skip text lacking their literals (``core.query.literals``): every match holds one of the
strings a pattern is said to need, so skipping a text without them never loses a match."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.query import devices as query_devices
from core.query import lexicon as query_lexicon
from core.query import specs as query_specs
from core.query.literals import Quick, needs
from core.query.needs import NEEDS


def _parser_patterns() -> list[tuple[str, Quick]]:
    """Every ``Quick`` pattern of the parser's modules, alone or in a table."""
    found: dict[int, tuple[str, Quick]] = {}
    for module in (query_lexicon, query_devices, query_specs):
        for name, value in vars(module).items():
            rows = value if isinstance(value, tuple) else (value,)
            for n, row in enumerate(rows):
                for item in row if isinstance(row, tuple) else (row,):
                    if isinstance(item, Quick):
                        where = f"[{n}]" if isinstance(value, tuple) else ""
                        found.setdefault(id(item), (f"{module.__name__}.{name}{where}", item))
    return list(found.values())


PATTERNS = _parser_patterns()


def _needs_table() -> str:
    rows = [f"    # {name}\n    {q.key}: {tuple(sorted(needs(q.regex) or ()))!r}," for name, q in PATTERNS]
    return "NEEDS: dict[int, tuple[str, ...]] = {\n" + "\n".join(rows) + "\n}\n"


def test_the_table_of_needs_is_what_the_patterns_need() -> None:
    """Start-up reads the needs from ``core.query.needs``; a pattern that changed must be read again there."""
    table = {q.key: tuple(sorted(needs(q.regex) or ())) for _, q in PATTERNS}
    assert {q.key: q.needs for _, q in PATTERNS} == table  # what runs is sound, table or not
    assert table == NEEDS, "write core/query/needs.py's table anew:\n" + _needs_table()


def test_the_parser_runs_its_patterns_quick() -> None:
    names = {name.split("[")[0].split(".")[-1] for name, _ in PATTERNS}
    assert {"READERS", "INTENT_WORDS", "GENERIC_DEVICES", "QUANT_GGUF", "BACKEND", "CPU", "SAME_CARDS"} <= names
    assert sum(bool(q.needs) for _, q in PATTERNS) >= len(PATTERNS) - 2  # nearly all of them name something


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\bkv[ -]?cache\b", {"cache"}),  # the longer of two literal runs
        (r"\b(?:vllm|llama[ .-]?cpp|ollama)\b", {"vllm", "llama"}),  # "ollama" holds "llama"
        (r"\d+\s*(?:gb|gbps)", {"gb"}),
        (r"[$€£]\s*\d+", {"$", "€", "£"}),
        (r"(?:at\s+)?\d+", None),  # an optional word is never needed
        (r"(?:a|)\d", None),  # nor a group with an empty way through
        (r"(?=foo)\w+", None),  # nor a lookahead
        (r"[^x]y?", None),
        (r"(?i:cuda)", None),  # a case-blind part: ``in`` would not do
        (r"(?:ab){2,}c?", {"ab"}),
        (r"\bi[3579][- ]?\d{4}", {"i3", "i5", "i7", "i9"}),  # a letter and a small class spell a few strings
        (r"q[1-8]_k", {"q1_k", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "q7_k", "q8_k"}),
        (r"(?:tok|t)\s*/\s*s", {"/"}),  # a rare sign tells more than a common letter
    ],
)
def test_what_a_pattern_needs(pattern: str, expected: set[str] | None) -> None:
    got = needs(re.compile(pattern))
    assert (None if got is None else set(got)) == expected
    assert needs(re.compile(pattern, re.IGNORECASE)) is None


@pytest.mark.parametrize(("name", "quick"), PATTERNS, ids=[name for name, _ in PATTERNS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_match_holds_what_its_pattern_needs(name: str, quick: Quick, data: st.DataObject) -> None:
    text = data.draw(st.from_regex(re.compile(quick.pattern, quick.regex.flags)))
    match = quick.regex.search(text)
    assert match is not None
    assert not quick.needs or any(s in match.group() for s in quick.needs), (name, match.group())
    assert quick.search(text) is not None and quick.search(text).span() == match.span()  # type: ignore[union-attr]
    assert quick.sub("", text) == quick.regex.sub("", text)
    assert quick.may(text)


def test_text_without_the_literals_is_not_scanned() -> None:
    engine = next(q for q, _, _ in query_lexicon.READERS if "vllm" in q.needs)
    assert engine.search("qwen3 on a 4090") is None and engine.search("qwen3 with vllm").group() == "vllm"  # type: ignore[union-attr]
    assert engine.sub("", "kein motor") == "kein motor"
    assert not engine.may("qwen3 on a 4090") and engine.may("with vllm")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.text("abcxyzäßgbm", min_size=1, max_size=8), st.text("0123456789٣", min_size=1, max_size=6)),
        min_size=1,
        max_size=6,
    )
)
def test_a_word_of_letters_or_of_digits_is_one_token(words: list[str]) -> None:
    """The tokenizer's shortcut for plain words and numbers gives what its patterns give: one token each."""
    toks = query_lexicon.tokenize(" ".join(words))
    plain = [w for w in words if w.isalpha() and w not in query_lexicon.COUNT_WORDS and w not in ("gb", "gib")]
    if len(plain) == len(words) or all(w.isdecimal() for w in words):
        assert [t.text for t in toks] == words
        skip = query_lexicon.VENDOR_WORDS | query_lexicon.NOISE_WORDS | query_lexicon.STOPWORDS
        assert [t.kind for t in toks] == ["num" if w.isdecimal() else "skip" if w in skip else "word" for w in words]


@settings(max_examples=500, deadline=None)
@given(st.text("ab1.2 _ä٣x.9-", max_size=24))
def test_names_are_cut_as_the_plain_pattern_cuts_them(text: str) -> None:
    plain = re.compile(r"[^\W_]*\d+(?:\.\d+)+[^\W_]*|[^\W_]+")  # what NAME_SPLIT does, with backtracking
    assert [m.span() for m in query_lexicon.NAME_SPLIT.finditer(text)] == [m.span() for m in plain.finditer(text)]
