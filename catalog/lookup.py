"""Finds catalog entries for what the user typed: exact ids and aliases first, then fuzzy matches.

Returns either the entry or a ``NotFound`` with up to three "did you mean" suggestions; never
raises for unknown names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from core import names as N
from core.models import Catalog, GpuSpec, ModelSpec, Provenance, QuantSize
from core.query import Intent, VocabEntry, Vocabulary, parse

_COUNT = re.compile(r"^\s*(\d{1,2})\s*x\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class NotFound:
    kind: str  # "model" or "gpu"
    text: str
    suggestions: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class ModelHit:
    model: ModelSpec
    measured: dict[str, QuantSize] = field(default_factory=dict)  # sizes that come with a local file
    quant: str | None = None


def normalise(text: str) -> str:
    """Lower-case and collapse separators so "GLM-4.5_Air" and "glm 4.5 air" compare equal."""
    return re.sub(r"[\s_\-./]+", " ", text.lower()).strip()


def _names(catalog: Catalog, kind: str) -> dict[str, str]:
    """normalised name/alias -> id, for models or gpus (built once per loaded catalog)."""
    key = f"_names_{kind}"
    entry: tuple[int, dict[str, str]] | None = catalog.__dict__.get(key)
    if entry is not None and entry[0] == id(catalog):  # a model_copy must not inherit the table
        return entry[1]
    out: dict[str, str] = {}
    items = catalog.models if kind == "model" else catalog.gpus
    for item in items:
        names = [item.id, item.name, *item.aliases]
        if isinstance(item, GpuSpec):
            names.append(item.short_name)
        if isinstance(item, ModelSpec) and item.hf_repo:
            names.append(item.hf_repo)
        for name in names:
            out.setdefault(normalise(name), item.id)
    catalog.__dict__[key] = (id(catalog), out)
    return out


def vocabulary(catalog: Catalog) -> Vocabulary:
    """The names the parser may recognise, from the catalog, with the facts that tell entries apart."""
    return Vocabulary(
        models=tuple(
            VocabEntry(
                id=m.id,
                names=model_names(catalog, m),
                total_b=m.total_params / 1e9,
                active_b=m.active_params / 1e9,
            )
            for m in catalog.models
        ),
        gpus=tuple(
            VocabEntry(
                id=g.id,
                names=(g.short_name, g.name, g.id, *g.aliases),
                memory_gib=round(g.memory_bytes / (1 << 30)),
                group=g.category,
                laptop=getattr(g, "form_factor", "") == "laptop" or "laptop" in g.name.lower(),
                chip=getattr(g, "chip", "") or "",
            )
            for g in catalog.gpus
        ),
        quants=tuple(q.id for q in catalog.quants),
        not_devices=tuple(
            VocabEntry(id=f"not:{i}", names=(n.name, *n.aliases)) for i, n in enumerate(catalog.not_devices)
        ),
    )


def model_names(catalog: Catalog, model: ModelSpec) -> tuple[str, ...]:
    """A model's name, id, aliases and repo, less the aliases that name a whole family of sizes.

    "mixtral" or "gemma 3" as an alias of one size would answer for a size the user did not pick;
    without them the parser asks which size is meant.
    """
    names = (model.name, model.id, *model.aliases, *((model.hf_repo,) if model.hf_repo else ()))
    return tuple(n for n in names if not _names_a_family(catalog, model, n))


def _names_a_family(catalog: Catalog, model: ModelSpec, alias: str) -> bool:
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
        for other in catalog.models
    )


def _parsed(catalog: Catalog, kind: str, text: str) -> tuple[str | None, tuple[str, ...]]:
    """The question parser's reading of a name: a confident id, and "did you mean" ids."""
    entry = catalog.__dict__.get("_vocab")
    if entry is None or entry[0] != id(catalog):
        entry = catalog.__dict__["_vocab"] = (id(catalog), vocabulary(catalog))
    vocab = entry[1]
    query = parse(text if kind == "model" else f"x {text}", vocab, Intent.FIT)
    match = query.model if kind == "model" else query.gpu
    if match is None:
        return None, ()
    return (match.id if match.id and not match.ambiguous else None), match.suggestions[:3]


def find_model(catalog: Catalog, text: str) -> ModelHit | NotFound:
    """A catalog model by id, name, alias or HF repo id; or a local config.json / folder / .gguf."""
    path = Path(text).expanduser()
    if text.endswith((".gguf", ".json")) or path.is_dir():
        return _local_model(path)
    model_id = _names(catalog, "model").get(normalise(text))
    suggestions: tuple[str, ...] = ()
    if not model_id:
        model_id, suggestions = _parsed(catalog, "model", text)
    model = catalog.model(model_id) if model_id else None
    return ModelHit(model) if model else NotFound("model", text, suggestions)


def find_gpu(catalog: Catalog, text: str) -> tuple[GpuSpec, int] | NotFound:
    """A device by id, name or alias, with an optional count prefix ("2x 3090")."""
    count = 1
    match = _COUNT.match(text)
    if match:
        count, text = int(match.group(1)), match.group(2)
    for ghost in catalog.not_devices:
        if normalise(text) in {normalise(ghost.name), *(normalise(a) for a in ghost.aliases)}:
            return NotFound("gpu", text, reason=ghost.note)
    gpu_id = _names(catalog, "gpu").get(normalise(text))
    suggestions: tuple[str, ...] = ()
    if not gpu_id:
        gpu_id, suggestions = _parsed(catalog, "gpu", text)
    gpu = catalog.gpu(gpu_id) if gpu_id else None
    return (gpu, max(count, 1)) if gpu else NotFound("gpu", text, suggestions)


def _local_model(path: Path) -> ModelHit | NotFound:
    from catalog.hf_config import ConfigError, read_config_file, spec_from_config  # local files only: fast start

    if not path.exists():
        return NotFound("model", str(path), reason=f"no such file: {path}")
    if path.suffix == ".gguf":
        from catalog.gguf_file import read_gguf

        try:
            model, size, quant = read_gguf(path)
        except ConfigError as exc:
            return NotFound("model", str(path), reason=str(exc))
        return ModelHit(model, {quant: size}, quant)
    config_path = path / "config.json" if path.is_dir() else path
    try:
        config = read_config_file(config_path)  # size-capped: a 2 GB "config.json" is refused, not read
        prov = Provenance(source=f"local {config_path}", as_of="local file")
        return ModelHit(spec_from_config(config, path.stem if path.is_file() else path.name, prov))
    except ConfigError as exc:
        return NotFound("model", str(path), reason=str(exc))
