"""core/ is pure: it imports nothing from the I/O layers, templating, databases or chat libraries."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = {
    "bot",
    "catalog",
    "locales",
    "jinja2",
    "aiosqlite",
    "sqlite3",
    "discord",
    "telegram",
    "huggingface_hub",
    "matplotlib",
    "httpx",
    "aiohttp",
    "requests",
    "os",
    "socket",
    "subprocess",
    "time",
    "datetime",
    "gguf",
}
PLATFORM_LIBS = {"discord", "telegram"}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", sorted((ROOT / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_is_pure(path):
    assert not imported_roots(path) & FORBIDDEN_IN_CORE


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (ROOT / "bot").glob("*.py") if not p.name.endswith("_app.py"))
    + sorted((ROOT / "catalog").glob("*.py")),
    ids=lambda p: p.name,
)
def test_only_adapters_import_chat_platforms(path):
    assert not imported_roots(path) & PLATFORM_LIBS
