"""Memory per question is bounded (issue 40 item 7): RSS grew from 5k to 20k distinct questions.

Every memo that distinct questions fill is capped. The first test answers distinct questions with
the caps set small and checks each memo against its cap; the second finds every module-level dict or
list in ``core``, ``bot`` and ``catalog`` that grows while questions are answered and fails for one that
is not in the capped list, so a new unbounded memo cannot come in unnoticed. The RSS figure (5k to
20k) is ``bench/bounded_faults.py memory``.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import bot.answers.route
import core.estimate
import core.fit
import core.memory
import core.notes
import core.quants.ladder
import core.query.index
import core.query.lexicon
import core.speed.device
import core.speed.model
import core.weights
from bot.service import Service, User
from catalog.store import CatalogStore
from core.models import Catalog

# (module, memo, the module constant that caps it)
CAPPED = [
    (core.memory, "_KV", "_KV_ENTRIES"),
    (core.memory, "_CONTEXT", "_KV_ENTRIES"),
    (core.estimate, "_WORKLOADS", "_SHARED_ENTRIES"),
    (core.estimate, "_HARDWARE", "_SHARED_ENTRIES"),
    (core.estimate, "_MODEL_REFS", "_SHARED_ENTRIES"),
    (core.estimate, "_HARDWARE_REFS", "_SHARED_ENTRIES"),
    (core.notes, "_NOTES", "_NOTES_ENTRIES"),
    (core.fit, "_LONGEST", "_LONGEST_ENTRIES"),
    (core.speed.model, "_TERMS", "_TERMS_ENTRIES"),
    (core.speed.device, "_RATES", "_RATES_ENTRIES"),
    (core.speed.device, "_SETUPS", "_RATES_ENTRIES"),
    (core.weights, "_GROUPS", "_MEMO_ENTRIES"),
    (core.weights, "_MEMO", "_MEMO_ENTRIES"),
    (core.quants.ladder, "_RUNGS", "_RUNGS_ENTRIES"),
    (core.query.lexicon, "_PIECES", "PIECES_KEPT"),
]
CAP = 24


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    return asyncio.run(CatalogStore(tmp_path_factory.mktemp("catalog") / "catalog.sqlite").load())


def questions(catalog: Catalog, n: int) -> Iterator[str]:
    rnd = random.Random(3)
    models, gpus = [m.id for m in catalog.models], [g.id for g in catalog.gpus]
    for _ in range(n):
        yield f"/fit {rnd.choice(models)} {rnd.choice(gpus)} {rnd.choice([4, 8, 16, 32, 64])}k"


async def answer_all(catalog: Catalog, n: int) -> Service:
    service = Service(catalog)
    for i, text in enumerate(questions(catalog, n)):
        await service.answer(text, "en", User(id=f"tg:{i}"))
    return service


async def test_every_memo_stays_within_its_cap(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    for module, _, cap in CAPPED:
        monkeypatch.setattr(module, cap, CAP)
    monkeypatch.setattr(bot.answers.route, "CACHE_ENTRIES", CAP)
    monkeypatch.setattr(core.query.index, "RANKING_CACHE", CAP)
    service = await answer_all(catalog, 150)
    for module, name, _ in CAPPED:
        assert len(getattr(module, name)) <= CAP, f"{module.__name__}.{name}"
    assert len(service.answers._scans) <= CAP + 1
    index = core.query.index.index_for(service.answers.vocab)
    assert len(index.rankings) <= CAP + 1 and len(index.fuzzy) <= CAP + 1
    await service.close()


def module_containers() -> dict[tuple[str, str], Any]:
    """Every module-level dict, list and set of ``core``, ``bot`` and ``catalog`` (imported ones)."""
    found = {}
    for package in ("core", "bot", "catalog"):
        root = Path(importlib.import_module(package).__file__ or "").parent
        for info in pkgutil.walk_packages([str(root)], prefix=f"{package}."):
            module = sys.modules.get(info.name)
            if module is None:
                continue
            for name, value in vars(module).items():
                if isinstance(value, dict | list | set) and not name.startswith("__"):
                    found[(info.name, name)] = value
    return found


async def test_no_module_level_container_grows_with_questions_unless_capped(catalog: Catalog) -> None:
    """Answers 200 distinct questions twice: a container still growing in the second round must be capped."""
    service = await answer_all(catalog, 200)
    before = {key: len(value) for key, value in module_containers().items()}
    for i, text in enumerate(questions(catalog, 600)):
        if i >= 200:  # new questions only
            await service.answer(text, "en", User(id=f"tg:{i}"))
    capped = {(module.__name__, name) for module, name, _ in CAPPED}
    grew = {key for key, value in module_containers().items() if len(value) > before.get(key, len(value))}
    assert grew <= capped, f"uncapped memos grow with distinct questions: {sorted(grew - capped)}"
    await service.close()


async def test_the_usage_log_writes_batches_of_any_size_with_nine_statement_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One INSERT text per batch size (up to 500) filled SQLite's statement cache: +8 MiB over 9k questions."""
    import storage.sqlite as sqlite_db
    from storage.prefs import LoggedQuery
    from storage.userdata import UserDataStore

    texts: set[str] = set()
    for cls in (sqlite_db.SqliteDatabase, sqlite_db.SqliteConnection):
        execute = cls.execute

        async def recording(self: Any, sql: str, args: Any = (), execute: Any = execute) -> int:
            texts.add(sql)
            return int(await execute(self, sql, args))

        monkeypatch.setattr(cls, "execute", recording)
    row = LoggedQuery("tg", "fit", "qwen3-8b", "rtx-4090", None, 8192, True, 1.0)
    async with UserDataStore(tmp_path / "user.sqlite") as store:
        log = store.query_log()
        total = 0
        for size in (*range(1, 40), 255, 256, 257, 499, 500, 613):
            await log.record(*[row] * size)
            total += size
        inserts = {sql for sql in texts if sql.startswith("INSERT INTO query_log")}
        assert 1 < len(inserts) <= 9
        assert await store.database.fetchval("SELECT COUNT(*) FROM query_log") == total
