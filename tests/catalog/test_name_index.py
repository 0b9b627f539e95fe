"""The parser's vocabulary and name index: built in time linear in the catalog, stored with the
catalog, read back equal to a fresh build, and built again when the facts or the matching code change."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import aiosqlite
import pytest

import catalog.lookup as lookup_module
import catalog.store as store_module
import core.query.index as index_module
from catalog.facts import load_facts
from catalog.lookup import Families, build_vocabulary, vocabulary
from catalog.store import CatalogStore
from core.models import ModelSpec
from core.query import names as N
from core.query.index import build_index, candidates, index_data, index_for, index_from_data, span_score
from core.query.lexicon import tokenize
from core.query.parse import parse

CATALOG = load_facts()


def names_a_family_by_pairs(models: tuple[ModelSpec, ...], model: ModelSpec, alias: str) -> bool:
    """The rule checked against every other model (the quadratic definition the index replaces)."""
    said = N.typed(alias)
    if said.size_b is not None or alias in (model.name, model.id, model.hf_repo):
        return False
    size = model.total_params
    return any(
        other.id != model.id
        and abs(other.total_params - size) > 0.25 * size
        and N.model_agrees(
            said, N.typed(f"{other.name} {other.id}"), other.total_params / 1e9, other.active_params / 1e9
        )
        for other in models
    )


def test_family_aliases_are_those_every_pair_finds():
    families = Families(CATALOG.models)
    dropped = 0
    for model in CATALOG.models:
        for alias in (model.name, model.id, *model.aliases):
            by_pairs = names_a_family_by_pairs(CATALOG.models, model, alias)
            assert families.names_a_family(model, alias) is by_pairs, (model.id, alias)
            dropped += by_pairs
    assert dropped > 0  # the catalog has family aliases ("mixtral", "gemma 3"): the check is not vacuous


def test_stored_index_reads_back_equal_to_a_fresh_build():
    vocab = build_vocabulary(CATALOG)
    index = build_index(vocab)
    again = index_from_data(json.loads(json.dumps(index_data(index))))
    assert again == index
    assert parse("can I run gemma 3 27b on two 3090", vocab) == parse("can I run gemma 3 27b on two 3090", vocab)


async def test_the_store_keeps_the_index_and_a_second_start_reads_it(tmp_path, monkeypatch):
    path = tmp_path / "catalog.sqlite"
    first = await CatalogStore(path).load()
    assert vocabulary(first) == build_vocabulary(first)
    assert index_for(vocabulary(first)) == build_index(vocabulary(first))

    def no_build(*args: object) -> None:
        raise AssertionError("built again although the stored one is current")

    monkeypatch.setattr(index_module, "build_index", no_build)
    monkeypatch.setattr(lookup_module, "build_vocabulary", no_build)
    second = await CatalogStore(path).load()
    assert vocabulary(second) == vocabulary(first) and vocabulary(second) is not vocabulary(first)
    assert index_for(vocabulary(second)) == index_for(vocabulary(first))


@pytest.mark.parametrize("changed", ["code", "facts"])
async def test_the_index_is_built_again_when_its_inputs_change(tmp_path, monkeypatch, changed):
    path = tmp_path / "catalog.sqlite"
    await CatalogStore(path).load()
    built: list[object] = []
    real = index_module.build_index

    def counting(vocab: object) -> object:
        built.append(vocab)
        return real(vocab)  # type: ignore[arg-type]

    monkeypatch.setattr(index_module, "build_index", counting)
    if changed == "code":
        monkeypatch.setattr(store_module, "names_key", lambda: "another matching rule")
    else:
        monkeypatch.setattr(store_module, "facts_hash", lambda directory: "other facts")
    catalog = await CatalogStore(path).load()
    assert len(built) == 1
    assert index_for(vocabulary(catalog)) == build_index(vocabulary(catalog))


async def test_a_current_file_is_read_without_an_event_loop(tmp_path, monkeypatch):
    path = tmp_path / "catalog.sqlite"
    assert CatalogStore(path).read_current() is None  # nothing built yet: ``load`` builds it
    loaded = await CatalogStore(path).load()
    read = CatalogStore(path).read_current()
    assert read == loaded
    assert vocabulary(read) == vocabulary(loaded) and index_for(vocabulary(read)) == index_for(vocabulary(loaded))
    monkeypatch.setattr(store_module, "facts_hash", lambda directory: "other facts")
    assert CatalogStore(path).read_current() is None  # the facts changed: ``load`` rebuilds
    monkeypatch.undo()
    monkeypatch.setattr(store_module, "names_key", lambda: "another matching rule")
    assert CatalogStore(path).read_current() is None  # the names must be built again: ``load`` stores them


async def test_a_damaged_stored_index_is_built_again(tmp_path):
    path = tmp_path / "catalog.sqlite"
    await CatalogStore(path).load()
    async with aiosqlite.connect(path) as db:
        await db.execute("UPDATE meta SET value = substr(value, 1, 1000) WHERE key = 'name_index'")
        await db.commit()
    assert CatalogStore(path).read_current() is None
    catalog = await CatalogStore(path).load()
    assert index_for(vocabulary(catalog)) == build_index(vocabulary(catalog))
    assert CatalogStore(path).read_current() == catalog  # stored again, whole


async def test_a_relative_data_directory_reads_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = CatalogStore(Path("data") / "catalog.sqlite")
    assert store.read_current() is None  # no file yet
    loaded = await store.load()
    assert store.read_current() == loaded


def test_reading_back_holds_the_garbage_collector_only_meanwhile():
    assert gc.isenabled()
    with pytest.raises(ValueError), store_module.collector_paused():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with store_module.collector_paused():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


# varied spans: long runs, sizes, versions, memory sizes, typos, two names, German
RANKED_QUESTIONS = [
    "can I run qwen3 30b a3b on a mac studio m2 ultra 192gb",
    "llama 3 70b vs qwen 2.5 72b on 2x 3090",
    "deepseek r1 distill qwen 7b on an rtx 4060 ti 16gb",
    "passt gemma 3 27b auf eine 7900 xtx",
    "gpt oss 120b on h100 80gb",
    "mixtral 8x7b on a macbook pro m3 max 128gb",
    "rtx pro 6000 blackwell with llama 3.3 70b",
    "lama 3.1 8b on a 4090",
    "quen3 32b on two rtx 3090s",
    "mac mini m4 pro 64gb",
]


@pytest.mark.parametrize("question", RANKED_QUESTIONS)
def test_candidates_agree_with_scoring_every_alias_of_every_span(question: str) -> None:
    """Spans are scored lazily and aliases skipped by bounds; the best scores, the kept rankings and the
    order must be those that scoring every alias of every span gives."""
    idx = build_index(build_vocabulary(CATALOG))
    places = []
    for c in candidates(tokenize(question), idx, set()):  # nothing taken: every span is scored and yielded
        scores: dict[str, float] = {}
        for pos in c.ranked.pool:
            alias = idx.aliases[pos]
            if alias.kind == c.kind:
                s = span_score(c.span, alias)
                for entry in alias.entries:
                    scores[entry] = max(scores.get(entry, -1e9), s)
        full = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        assert c.score == full[0][1]
        assert c.ranking == full[: 12 if c.kind == "model" else 48]
        bonus = 1.0 if c.kind != "model" and c.span.nums else 0.0
        places.append((-c.score - 1.5 * (c.span.last - c.span.first) - bonus, c.span.first))
    assert len(places) > 3
    assert places == sorted(places)
