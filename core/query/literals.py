"""Patterns that are not run over text that cannot hold a match: the parser runs some forty regexes over
each question, and most of them look for words the question does not contain.

``needs`` reads a pattern (with the stdlib's own parser, ``re._parser``) for strings one of which every
match must contain: a run of literal characters, a set of characters, or one of the choices of a group
that every match goes through. A ``Quick`` pattern tests those with ``in`` (a few tens of nanoseconds)
and only then scans with the regex (microseconds). What it finds is what the regex alone finds.
"""

from __future__ import annotations

import importlib
import re
import zlib
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from core.query.needs import NEEDS

# the stdlib's own reader of patterns, which has no public name
C: Any = importlib.import_module("re._constants")
P: Any = importlib.import_module("re._parser")
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
Needs = frozenset[str]
MAX_SPELLINGS = 16  # strings a run of characters and classes may stand for before it is cut


def needs(pattern: re.Pattern[str]) -> Needs | None:
    """Strings one of which every match of ``pattern`` contains, or None when nothing is certain."""
    return _needs(P.parse(pattern.pattern, pattern.flags))


def _needs(tree: Any) -> Needs | None:
    return None if tree.state.flags & re.IGNORECASE else _sequence(tree)


def _sequence(items: Iterable[tuple[Any, Any]]) -> Needs | None:
    """Every item of a sequence is in a match, so the most telling one's needs hold for all of it. Adjacent
    characters and small classes make strings together: "i" then [3579] is one of "i3", "i5", "i7", "i9"."""
    best: Needs | None = None
    run, tail = [""], ""  # the strings so far: each of ``run`` followed by the literal ``tail``
    for op, av in getattr(items, "data", items):  # a parsed pattern's list (its own iteration is slow)
        if op is C.LITERAL:
            tail += chr(av)
            continue
        chars = _chars(op, av)
        if chars is not None and len(run) * len(chars) <= MAX_SPELLINGS:
            run, tail = [r + tail + c for r in run for c in chars], ""
            continue
        if tail or run != [""]:
            best = _better(best, frozenset(r + tail for r in run))
        run, tail = ([""] if chars is None else list(chars)), ""
        if chars is None:
            best = _better(best, _item(op, av))
    return best if not tail and run == [""] else _better(best, frozenset(r + tail for r in run))


def _chars(op: Any, av: Any) -> tuple[str, ...] | None:
    """The characters a small class matches, else None."""
    if op is not C.IN or not all(o is C.LITERAL or o is C.RANGE for o, _ in av):
        return None
    chars = [chr(v) for o, v in av if o is C.LITERAL]
    chars += [chr(c) for o, v in av if o is C.RANGE for c in range(v[0], v[1] + 1)]
    return tuple(chars) if len(chars) <= MAX_SPELLINGS else None


def _item(op: Any, av: Any) -> Needs | None:
    """What one element that consumes text needs; lookarounds, classes and optional parts need nothing."""
    if op is C.SUBPATTERN:
        _, add_flags, _, body = av
        return None if add_flags & re.IGNORECASE else _sequence(body)
    if op is C.ATOMIC_GROUP:
        return _sequence(av)
    if op in _REPEATS:
        low, _, body = av
        return _sequence(body) if low >= 1 else None
    if op is C.BRANCH:
        union: set[str] = set()
        for branch in av[1]:
            choice = _sequence(branch)
            if choice is None:
                return None  # a way through the group that needs nothing
            union |= choice
        return _minimal(frozenset(union))
    return None


def _better(a: Needs | None, b: Needs | None) -> Needs | None:
    """The more selective of two needs: longer strings first (a rare sign counts as three letters: "/" is
    rarer than "t"), then fewer of them."""
    if a is None or b is None:
        return a if b is None else b
    return b if _rank(b) > _rank(a) else a


@lru_cache(maxsize=1024)
def _rank(n: Needs) -> tuple[int, int]:
    return min(len(s) if s.isalnum() else sum(1 if c.isalnum() or c in " -_.," else 3 for c in s) for s in n), -len(n)


def _minimal(strings: Needs) -> Needs:
    """Drops a string that holds another of the set: text with "gbps" has "gb"."""
    return frozenset(s for s in strings if not any(o != s and o in s for o in strings))


class Quick:
    """A compiled pattern whose ``search``, ``fullmatch`` and ``sub`` skip text lacking all its ``needs``."""

    __slots__ = ("key", "needs", "pattern", "regex")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.regex = re.compile(pattern, flags)
        self.pattern = pattern
        # read from the table the tests keep in step (start-up matters: reading forty patterns again costs
        # ~15 ms); a pattern not in it yet is read here
        self.key = pattern_key(pattern, flags)
        known = NEEDS.get(self.key)
        self.needs = known if known is not None else tuple(sorted(needs(self.regex) or ()))

    def may(self, text: str) -> bool:
        """Whether ``text`` holds one of the needed strings (a match is possible)."""
        return not self.needs or any(map(text.__contains__, self.needs))

    # each method tests the needs itself: one call less on a path run some forty times a question
    def search(self, text: str) -> re.Match[str] | None:
        if self.needs and not any(map(text.__contains__, self.needs)):
            return None
        return self.regex.search(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        if self.needs and not any(map(text.__contains__, self.needs)):
            return None
        return self.regex.fullmatch(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
        if self.needs and not any(map(text.__contains__, self.needs)):
            return text
        return self.regex.sub(repl, text)


def pattern_key(pattern: str, flags: int) -> int:
    """A pattern's key in ``NEEDS``: its text and flags (a changed pattern misses and is read afresh)."""
    return zlib.crc32(f"{flags}:{len(pattern)}:{pattern}".encode())


def quick(pattern: str, flags: int = 0) -> Quick:
    """``re.compile`` for a pattern run with ``Quick``'s test first."""
    return Quick(pattern, flags)
