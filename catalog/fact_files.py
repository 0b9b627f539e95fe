"""Where the fact files and the stored model configs live, and the hash that versions them.

Apart from ``catalog.facts`` (which reads and validates them) so that a process checking whether its
stored catalog is current (``catalog.store.CatalogStore.read_current``) imports no reader.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

FACTS_DIR = Path(__file__).with_name("facts")
FACT_FILES = ("gpus.toml", "models.toml", "quants.toml", "gguf_sizes.toml", "offers.toml")
CONFIG_DIR = Path(__file__).with_name("configs")  # verbatim config.json copies (catalog.importers.model_configs)
# what the code reading the facts puts in a row beyond the files (a field counted from a config, ...): part of
# the hash, so a stored catalog built by older code is rebuilt; change it when a row gains or changes such a field
ROWS_CODE = "rows 3: expert_params counted from the stored configs; a quant row's [quant.safetensors] bits"


def facts_hash(directory: Path = FACTS_DIR) -> str:
    """Hash of all fact files and stored configs, so the store knows when to rebuild.

    Every ``*.toml`` in the directory counts, not only the store's own files: the side tables read by
    ``catalog/extra_facts.py`` (Ollama tags, quality per quant, ...) are a new catalog version too.
    Every start checks it, so the files are listed and read with ``os`` calls: ``Path.glob``, ``rglob``
    and ``read_bytes`` over the 130-odd files took two thirds of it. The digest is the one those gave:
    the same files in the same order (configs sorted by their path's parts, as paths sort), each name
    and then its bytes, then ``ROWS_CODE``.
    """
    digest = hashlib.sha256()
    with os.scandir(directory) as entries:
        tables = {entry.name for entry in entries if entry.name.endswith(".toml")}
    paths = [os.path.join(directory, name) for name in sorted({*FACT_FILES, *tables})]
    configs = []
    for folder, dirs, files in os.walk(CONFIG_DIR):  # what rglob("*.*") lists: files and folders, no links followed
        parts = tuple(Path(folder).relative_to(CONFIG_DIR).parts)
        configs += [(*parts, name) for name in (*dirs, *files) if "." in name]
    paths += [os.path.join(CONFIG_DIR, *parts) for parts in sorted(configs)]
    for path in paths:
        digest.update(os.path.basename(path).encode())
        try:
            with open(path, "rb") as file:
                digest.update(file.read())
        except FileNotFoundError:  # a store file the directory lacks (a test's partial copy)
            pass
    digest.update(ROWS_CODE.encode())
    return digest.hexdigest()[:16]


__all__ = ["CONFIG_DIR", "FACTS_DIR", "FACT_FILES", "ROWS_CODE", "facts_hash"]
