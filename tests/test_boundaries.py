"""The layer rules, checked on the import statements of every module.

- core/ is pure: no I/O layers, templating, databases, chat libraries, clock or environment;
- catalog/ reads no environment and knows no chat (settings arrive as arguments);
- only bot/adapters/ imports the chat libraries;
- adapters and renderers talk to the service and the reply model only, never to core or catalog;
- core and catalog know no chat: no command list, no @BotName suffix, no Discord mention syntax.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN_IN_CORE = {
    "bot", "catalog", "locales", "jinja2", "aiosqlite", "sqlite3", "discord", "telegram", "huggingface_hub",
    "matplotlib", "httpx", "aiohttp", "requests", "os", "socket", "subprocess", "time", "datetime", "gguf",
}  # fmt: skip
PLATFORM_LIBS = {"discord", "telegram"}
CHAT_WORDS = re.compile(r"mygpu|@BotName|@\\w\{1,64\}|bot_username|<@|allowed_mentions|/settings|/forget", re.I)


def imported(path: Path) -> set[str]:
    """Every module a file imports, as dotted names (``from a.b import c`` gives ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def roots(path: Path) -> set[str]:
    return {name.split(".")[0] for name in imported(path)}


def modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("core"), ids=lambda p: p.name)
def test_core_is_pure(path):
    assert not roots(path) & FORBIDDEN_IN_CORE


@pytest.mark.parametrize("path", modules("catalog"), ids=lambda p: p.name)
def test_catalog_reads_no_environment_and_knows_no_bot(path):
    text = path.read_text(encoding="utf-8")
    assert "os.environ" not in text and "getenv" not in text
    assert not roots(path) & ({"bot"} | PLATFORM_LIBS)


@pytest.mark.parametrize(
    "path", [p for p in modules("bot") + modules("catalog") if "adapters" not in p.parts], ids=lambda p: p.name
)
def test_only_adapters_import_chat_platforms(path):
    assert not roots(path) & PLATFORM_LIBS


@pytest.mark.parametrize("path", modules("bot/adapters") + modules("bot/render"), ids=lambda p: p.name)
def test_adapters_and_renderers_use_the_service_only(path):
    assert not roots(path) & {"core", "catalog"}, "use bot.service / bot.reply instead"


@pytest.mark.parametrize("path", modules("core") + modules("catalog"), ids=lambda p: p.name)
def test_core_and_catalog_know_no_chat(path):
    assert not CHAT_WORDS.search(path.read_text(encoding="utf-8"))
