"""Amounts as people type them: numbers with either decimal mark, token counts ("32k", "1m"), prompt
lengths, RAM sizes and user counts, read from the parser's patterns (``core.query.lexicon.READERS``)."""

from __future__ import annotations

import re

_THOUSANDS = re.compile(r"\d+(?:([.,])\d{3})(?:\1\d{3})*")  # "16.000", "1,048,576": one separator kind
_TOKENS_SAID = re.compile(r"tok|ctx|context|kontext")


def number(s: str) -> float:
    """Reads "16,000", "16.000", "1.5" or "1,5"."""
    if _THOUSANDS.fullmatch(s):
        return float(re.sub(r"[.,]", "", s))
    return float(s.replace(",", "."))


def token_count(m: re.Match[str], keyword: bool = True) -> int | None:
    """Tokens of "32k" (k = 1024), "1m", "16000"; "ctx 32" after a keyword means 32k."""
    value, suffix = number(m["num"]), m.groupdict().get("suf") or ""
    if suffix == "m" and not keyword and value > 10 and not _TOKENS_SAID.search(m.group(0)):
        return None  # "gemma 3 270m" is a model size; "1m" alone is a context
    if suffix == "m":
        value *= 1 << 20
    elif suffix == "k" or (keyword and value < 256):
        value *= 1024
    # an absurd size that was clearly asked for ("40m context") is kept, so the answer can say it is out of range
    # with a keyword, any size: the answer names the limit ("context 123456789" is not dropped)
    return int(value) if 512 <= value <= (10**13 if keyword else 1 << 30) else None


def prompt_length(m: re.Match[str]) -> int | None:
    n = int(number(m["num"]) * (1024 if m["suf"] else 1))
    return n if 1 <= n <= 1 << 24 else None


def ram_size(m: re.Match[str]) -> float | None:
    gb = number(m["num"]) * (1000 if m["unit"] == "tb" else 1)
    if not m["unit"] and gb < 4:
        return None  # "DDR5 4800" or "ram 2" is not a RAM size
    return gb if 1 <= gb <= (10**7 if m["unit"] else 2048) else None  # "ram 99999gb": the answer names the limit


def user_count(m: re.Match[str]) -> int | None:
    return int(m["num"]) if int(m["num"]) >= 1 else None  # any count: the answer names the limit
