"""The shipped Hugging Face index loads and answers plain-name questions offline."""

from __future__ import annotations

from catalog.hub.index import INDEX_FILE, index_source, load_hf_index


def test_index_is_small_and_sorted_by_downloads() -> None:
    rows = load_hf_index()
    assert 1000 <= len(rows) <= 10000
    assert INDEX_FILE.stat().st_size < 400 * 1024
    downloads = [r.downloads for r in rows]
    assert downloads == sorted(downloads, reverse=True)
    assert len({r.repo for r in rows}) == len(rows)
    assert "llmfit" in index_source()


def test_plain_names_find_their_repos() -> None:
    repos = {r.repo: r for r in load_hf_index()}
    gemma = repos["google/gemma-3-1b-it"]
    assert 0.9e9 < gemma.params < 1.1e9
    assert gemma.n_layers in (26, None)  # the source left some config fields empty
    qwen = repos["Qwen/Qwen3-30B-A3B"]
    assert qwen.active_params is not None and qwen.active_params < qwen.params
    assert all(r.pipeline in ("text-generation", "image-text-to-text") for r in repos.values())
