"""Finds catalog entries for what the user typed: exact ids and aliases first, then fuzzy matches.

Returns either the entry or a ``NotFound`` with up to three "did you mean" suggestions; never
raises for unknown names.
"""

from __future__ import annotations

from pathlib import Path

from rapidfuzz import fuzz, process

from catalog.exact import ModelHit, NotFound
from catalog.extra_facts import ollama_tags, sized_models
from catalog.name_defaults import dominant_ids, lineups_of
from core import rig
from core.devices import with_memory
from core.models import Catalog, GpuSpec, ModelSpec, Provenance, QuantSpec
from core.query import names as N
from core.query.lexicon import compact, quant_id
from core.query.names import same_memory
from core.query.parse import Intent, Match, Query, VocabEntry, Vocabulary, parse


def vocabulary(catalog: Catalog) -> Vocabulary:
    """The catalog's vocabulary, built once per catalog object (or read with the catalog from its store)."""
    entry: tuple[int, Vocabulary] | None = catalog.__dict__.get("_vocab")
    if (entry is None or entry[0] != id(catalog)) and (later := catalog.__dict__.pop("_names_later", None)):
        later()  # the ones a current catalog file stored (``catalog.store.CatalogStore.read_current``)
        entry = catalog.__dict__.get("_vocab")
    if entry is None or entry[0] != id(catalog):  # a ``model_copy`` carries its original's: not its own
        return remember(catalog, build_vocabulary(catalog))
    return entry[1]


def remember(catalog: Catalog, vocab: Vocabulary) -> Vocabulary:
    """Makes ``vocab`` the catalog's vocabulary (the store hands over the one it keeps with the facts)."""
    catalog.__dict__["_vocab"] = (id(catalog), vocab)
    return vocab


def build_vocabulary(catalog: Catalog) -> Vocabulary:
    """The names the parser may recognise, from the catalog, with the facts that tell entries apart."""
    families = Families(catalog.models)
    tags = ollama_names()
    dominant = dominant_ids({g.id for g in catalog.gpus})
    lineups = lineups_of({g.id for g in catalog.gpus})
    return Vocabulary(
        models=tuple(
            VocabEntry(
                id=m.id,
                names=families.model_names(m) + tags.get(m.id, ()),
                total_b=m.total_params / 1e9,
                active_b=m.active_params / 1e9,
            )
            for m in catalog.models
        )
        + tuple(  # known by their stated size only (memory_only.toml): the service answers them memory-only
            VocabEntry(
                id=s.id,
                names=(s.name, s.id, *s.aliases, s.hf_repo),
                total_b=s.total_params / 1e9,
                active_b=(s.active_params or s.total_params) / 1e9,
            )
            for s in sized_models()
            if catalog.model(s.id) is None
        ),
        gpus=tuple(
            VocabEntry(
                id=g.id,
                names=(g.short_name, g.name, g.id, *g.aliases),
                memory_gib=round(g.memory_bytes / (1 << 30)),
                group=g.category,
                laptop=getattr(g, "form_factor", "") == "laptop" or "laptop" in g.name.lower(),
                chip=getattr(g, "chip", "") or "",
                dominant=g.id in dominant,
                gpu_cores=getattr(g, "gpu_cores", None),
                lineups=lineups.get(g.id, ()),
            )
            for g in catalog.gpus
        ),
        quants=tuple(q.id for q in catalog.quants),
        not_devices=tuple(
            VocabEntry(id=f"not:{i}", names=(n.name, *n.aliases)) for i, n in enumerate(catalog.not_devices)
        ),
        providers=tuple(sorted({o.provider for o in catalog.offers if o.provider})),
    )


def ollama_names() -> dict[str, tuple[str, ...]]:
    """Model id -> its Ollama library tags as a question spells them once the parser has read the colon as
    a space (``core.query.lexicon.clean``): "gemma3 12b"; a tag without a size is the library's default
    for that name only as "<tag> latest" ("deepseek-r1 latest" is the 7B distill, "deepseek-r1" the 671B)."""
    out: dict[str, tuple[str, ...]] = {}
    for row in ollama_tags():
        name = row.tag.replace(":", " ") if ":" in row.tag else f"{row.tag} latest"
        out[row.model_id] = (*out.get(row.model_id, ()), name)
    return out


def model_names(catalog: Catalog, model: ModelSpec) -> tuple[str, ...]:
    """The names of one model the parser may know it by (see ``Families.model_names``)."""
    return Families(catalog.models).model_names(model)


class Families:
    """The catalog's models by the words of their names, so that an alias is checked only against the
    models that share its words: building the vocabulary grows with the catalog, not with its square."""

    def __init__(self, models: tuple[ModelSpec, ...]) -> None:
        self.models = models
        self.identity = [N.typed(f"{m.name} {m.id}") for m in models]
        self.by_word: dict[str, set[int]] = {}
        for i, t in enumerate(self.identity):
            for word in (*t.words, *t.variants, *t.tiers):
                self.by_word.setdefault(word, set()).add(i)
        self.by_length: dict[int, list[str]] = {}
        for word in self.by_word:
            self.by_length.setdefault(len(word), []).append(word)
        self.spelt: dict[str, set[int]] = {}

    def model_names(self, model: ModelSpec) -> tuple[str, ...]:
        """A model's name, id, aliases and repo, less the aliases that name a whole family of sizes.

        "mixtral" or "gemma 3" as an alias of one size would answer for a size the user did not pick;
        without them the parser asks which size is meant.
        """
        names = (model.name, model.id, *model.aliases, *((model.hf_repo,) if model.hf_repo else ()))
        return tuple(n for n in names if not self.names_a_family(model, n))

    def names_a_family(self, model: ModelSpec, alias: str) -> bool:
        """Whether a model of another size (over 25 % apart) is also what the alias names."""
        said = N.typed(alias)
        if said.size_b is not None or alias in (model.name, model.id, model.hf_repo):
            return False
        size = model.total_params
        for i in self._sharing(said.words):
            other = self.models[i]
            if (
                other.id != model.id
                and abs(other.total_params - size) > 0.25 * size
                and N.model_agrees(said, self.identity[i], other.total_params / 1e9, other.active_params / 1e9)
            ):
                return True
        return False

    def _sharing(self, words: tuple[str, ...]) -> set[int]:
        """Models whose names hold every one of these words, or a word spelt like it (a superset of
        what ``names.model_agrees`` accepts, which then decides)."""
        if not words:
            return set(range(len(self.models)))
        found = self._spelt_like(words[0])
        for word in words[1:]:
            found = found & self._spelt_like(word)
        return found

    def _spelt_like(self, word: str) -> set[int]:
        hit = self.spelt.get(word)
        if hit is None:
            hit = set(self.by_word.get(word, ()))
            if len(word) >= 4:  # names.model_agrees forgives one typo in words of four letters or more
                near = [w for n in (len(word) - 1, len(word), len(word) + 1) for w in self.by_length.get(n, ())]
                for other, _, _ in process.extract(word, near, scorer=fuzz.ratio, score_cutoff=80, limit=None):
                    hit |= self.by_word[other]
            self.spelt[word] = hit
        return hit


def _parsed(catalog: Catalog, kind: str, text: str) -> Query:
    """The question parser's reading of a name (the one name matcher)."""
    return parse(text if kind == "model" else f"x {text}", vocabulary(catalog), Intent.FIT)


def _offers(match: Match | None) -> tuple[str, ...]:
    """What a name that did not resolve may have meant: its memory variants, else "did you mean" ids."""
    return (match.choices or match.suggestions)[:3] if match else ()


def find_model(catalog: Catalog, text: str) -> ModelHit | NotFound:
    """A catalog model by id, name, alias or HF repo id; or a local config.json / folder / .gguf."""
    path = Path(text).expanduser()
    if text.endswith((".gguf", ".json")) or path.is_dir():
        return _local_model(path)
    match = _parsed(catalog, "model", text).model
    model = catalog.model(match.id) if match and match.id else None
    return ModelHit(model) if model else NotFound("model", text, _offers(match))


def find_gpu(catalog: Catalog, text: str, assumed: list[str] | None = None) -> tuple[GpuSpec, int] | NotFound:
    """A device by id, name or alias, with an optional count ("2x 3090") and memory ("4060 ti 8gb").

    A bare name with memory variants is read as its dominant variant ("3060": 12 GB) or, where none
    dominates ("m4 max 40-core"), as the smallest (what fits there fits on every size); either way
    the reading is appended to ``assumed`` with the ids that pick another.
    """
    q = _parsed(catalog, "gpu", text)
    if q.not_device:
        return NotFound("gpu", text, reason=catalog.not_devices[int(q.not_device.split(":")[1])].note)
    if q.rig:
        return _rig(catalog, q, text, assumed if assumed is not None else [])
    match = q.gpu
    gpu = catalog.gpu(match.id) if match and match.id else None
    notes = assumed if assumed is not None else []
    if gpu is None and match and match.choices:
        sizes = sorted((g for c in match.choices if (g := catalog.gpu(c))), key=lambda g: g.memory_bytes)
        gpu = sizes[0]
        shown = "/".join(dict.fromkeys(f"{round(g.memory_bytes / (1 << 30))}" for g in sizes))
        others = ", ".join(dict.fromkeys(g.id for g in sizes if g.memory_bytes != gpu.memory_bytes))
        notes.append(
            f"{text!r} comes with {shown} GB; estimated for the smallest, {sized_name(gpu)} (others: {others})"
        )
    elif gpu is not None and match and match.assumed:
        others = f" (others: {', '.join(match.choices)})" if match.choices else ""
        notes.append(f"{text!r} read as {sized_name(gpu)}{others}")
    if gpu is None:
        return NotFound("gpu", text, _offers(match))
    if match and match.memory_gib and not same_memory(match.memory_gib, gpu.memory_bytes / (1 << 30)):
        gpu = with_memory(gpu, match.memory_gib)  # the chip the catalog knows, with the memory the user gave
        notes.append(f"{text!r} estimated as {gpu.short_name} (a known chip with the memory given)")
    return gpu, q.gpu_count


def _rig(catalog: Catalog, q: Query, text: str, assumed: list[str]) -> tuple[GpuSpec, int] | NotFound:
    """ "4090+3090": each card resolved on its own, the machine as ``core.rig``'s stand-in (or N x one card)."""
    cards: list[GpuSpec] = []
    for match, count in [
        (q.gpu, q.gpu_count),
        (q.gpu2, q.gpu2_count),
        *zip(q.more_gpus, q.more_gpu_counts, strict=False),
    ]:
        if match is None:
            continue
        one = find_gpu(catalog, f"{count}x {match.text}" if count > 1 else match.text, assumed)
        if isinstance(one, NotFound):
            return one
        cards += [one[0]] * one[1]
    if len({g.id for g in cards}) == 1:
        return cards[0], len(cards)
    try:
        stand_in = rig.stand_in(cards)
    except rig.RigError as exc:
        return NotFound("gpu", text, reason=str(exc))
    assumed.append(f"{text!r} is one machine: llama.cpp splits the layers by free memory; vLLM needs identical cards")
    return stand_in, len(cards)


def rig_cards(catalog: Catalog, stand_in: GpuSpec) -> list[GpuSpec]:
    """The cards a rig stand-in was made of, from its id ("rig:rtx-4090+rtx-3060@8gb")."""
    out = []
    for part in stand_in.id.removeprefix("rig:").split("+"):
        base, _, memory = part.partition("@")
        if (gpu := catalog.gpu(base)) is not None:
            out.append(with_memory(gpu, float(memory.removesuffix("gb"))) if memory else gpu)
    return out


def find_quant(catalog: Catalog, text: str) -> QuantSpec | None:
    """A quant by any name the parser reads ("q2_k_xl" is UD-Q2_K_XL, "q4_0_4_4" is Q4_0, "q4" Q4_K_M)."""
    qid = quant_id(text, {compact(q.id): q.id for q in catalog.quants})
    return catalog.quant(qid) if qid else None


def sized_name(gpu: GpuSpec) -> str:
    """A device's short name with its memory ("RTX 3080 10GB"), as a variant is told apart."""
    return gpu.short_name if "GB" in gpu.short_name else f"{gpu.short_name} {round(gpu.memory_bytes / (1 << 30))}GB"


def _local_model(path: Path) -> ModelHit | NotFound:
    from catalog.model_files.config import (  # local files only: fast start
        ConfigError,
        read_config_file,
        spec_from_config,
    )

    if not path.exists():
        return NotFound("model", str(path), reason=f"no such file: {path}")
    if path.suffix == ".gguf":
        from catalog.model_files.gguf import read_gguf

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
