"""Where the fact files and the stored model configs live, and the hash that versions them.

Apart from ``catalog.facts`` (which reads and validates them) so that a process checking whether its
stored catalog is current (``catalog.store.CatalogStore.read_current``) imports no reader.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

FACTS_DIR = Path(__file__).with_name("facts")
FACT_FILES = ("gpus.toml", "models.toml", "quants.toml", "gguf_sizes.toml", "offers.toml")
CONFIG_DIR = Path(__file__).with_name("configs")  # verbatim config.json copies (catalog.importers.model_configs)


def facts_hash(directory: Path = FACTS_DIR) -> str:
    """Hash of all fact files and stored configs, so the store knows when to rebuild.

    Every ``*.toml`` in the directory counts, not only the store's own files: the side tables read by
    ``catalog/extra_facts.py`` (Ollama tags, quality per quant, ...) are a new catalog version too.
    """
    digest = hashlib.sha256()
    names = sorted({*FACT_FILES, *(p.name for p in directory.glob("*.toml"))})
    paths = [directory / name for name in names] + sorted(CONFIG_DIR.rglob("*.*"))
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()[:16]


__all__ = ["CONFIG_DIR", "FACTS_DIR", "FACT_FILES", "facts_hash"]
