"""A block of README between two HTML comment markers, written by a bench and read back by its test: the
figures README cites are the ones the script computes now."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def write_block(name: str, lines: list[str]) -> None:
    begin, end = markers(name)
    text = README.read_text(encoding="utf-8")
    start, stop = text.index(begin) + len(begin), text.index(end)
    README.write_text(text[:start] + "\n" + "\n".join(lines) + "\n" + text[stop:], encoding="utf-8")


def read_block(name: str) -> list[str]:
    begin, end = markers(name)
    text = README.read_text(encoding="utf-8")
    return text[text.index(begin) + len(begin) : text.index(end)].strip("\n").splitlines()
