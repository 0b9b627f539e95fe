"""``-ot``/``--override-tensor`` patterns from a pasted command, matched in linear time.

llama.cpp tests each tensor name against the pattern with ``std::regex_search`` (``common/arg.cpp``).
A pasted pattern is untrusted input: Python's ``re`` backtracks, so ``(.|.)*Z`` against a few hundred
tensor names holds the GIL for minutes and stalls every other user. RE2 (``google-re2``) runs any
pattern in time linear in the name's length; what it cannot run in linear time (backreferences,
lookaround) it refuses to compile, and such a pattern is reported as not applied, never run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import re2

MAX_PATTERN_CHARS = 512  # llama.cpp's own patterns are a few dozen characters
MAX_PATTERNS = 64  # one per layer group at most, in any real command
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is reported on the card, not on stderr
_OPTIONS.max_mem = 1 << 20  # a pattern whose program needs more is refused

Matcher = Callable[[str], bool]


def compile_overrides(patterns: tuple[tuple[str, str], ...]) -> tuple[list[tuple[Matcher, str]], list[str]]:
    """The patterns RE2 accepts, each with its buffer, and those refused (too long, too many, or not
    linear-time/invalid), in the order given."""
    rules: list[tuple[Matcher, str]] = []
    refused: list[str] = []
    for index, (pattern, buffer) in enumerate(patterns):
        matcher = _compile(pattern) if index < MAX_PATTERNS and len(pattern) <= MAX_PATTERN_CHARS else None
        if matcher is None:
            refused.append(pattern)
        else:
            rules.append((matcher, buffer))
    return rules, refused


def _compile(pattern: str) -> Matcher | None:
    try:
        compiled: Any = re2.compile(pattern, options=_OPTIONS)
    except re2.error:
        return None

    def search(name: str) -> bool:
        return compiled.search(name) is not None

    return search
