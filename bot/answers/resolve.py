"""From a parsed question to the model and hardware a card is about, or a card that asks back.

Never substitutes: a model or device the parser could not pin down gets a question with buttons
(memory variants), an honest "I don't know X" (with same-family suggestions and the hint that a
Hugging Face repo id can be pasted), or, for a device named only by its memory, a generic device
whose speed is a wide range. Every assumption becomes a ``Note`` the card shows in one line and
``Reply.subjects`` carries.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.cards import notices as cards
from bot.cards import resolve as words
from bot.reply import Action, Reply
from bot.users.saved import generic_saved, saved_board
from bot.users.user import User
from catalog.hub.offline import indexed_repo
from catalog.lookup import sized_name
from core.custom_device import custom_device
from core.devices import SBC_BOARDS, GenericDevice, generic_device, with_memory
from core.estimate import Request
from core.model_sizes import OFFERED, of_size
from core.models import Catalog, Engine, GpuSpec, Lang, ModelSpec, QuantSpec
from core.notes import Note, NoteValue
from core.query.lexicon import VLLM_QUANTS
from core.query.names import same_memory, typed
from core.query.parse import Match, Query
from core.recommend import tags_of
from core.speed.cpu import Cpu, cpus, find_cpu

GENERIC_SIZES = (8, 12, 16, 24)
SIZE_KINDS = (
    "coding",
    "reasoning",
    "vision",
)  # "an 8b coding model": the kinds a model of a size is picked by  # buttons for "how much VRAM does it have?"
CPU_RAM_SIZES = (32, 64, 128, 256, 384, 512, 768)  # RAM buttons for a named CPU: one DIMM per channel and up


def _cpu_values(cpu: Cpu) -> dict[str, NoteValue]:
    """A named CPU's figures for its note: cores, memory channels and their peak bandwidth."""
    return {
        "cpu": cpu.name,
        "cores": str(cpu.cores),
        "channels": cpu.memory_text,
        "bandwidth": round(cpu.bandwidth_gbps, 1),
    }  # fmt: skip  (a number: the note writes it the locale's way)


BOARD_NAMES = {"pi5": "Raspberry Pi 5", "pi4": "Raspberry Pi 4", "pi3": "Raspberry Pi 3"}
_NAME = re.compile(r"\s+")
_MENTION = re.compile(r"<[@#][!&]?\d+>|@(?:everyone|here)\b", re.IGNORECASE)


class Resolver:
    """Resolves one question's names against one catalog; collects what it assumed in ``notes``."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.notes: list[Note] = []
        self.actions: list[Action] = []  # the other readings of a name answered for its dominant variant
        self.generic: GenericDevice | None = None

    # --- models ---------------------------------------------------------------------------

    def model(self, q: Query, lang: Lang, echo: str, match: Match | None = None) -> ModelSpec | Reply:
        match = match if match is not None else q.model
        if match and match.id:
            found = self.catalog.model(match.id)
            if found and (other := related_repo(match.text, found)):  # "falcon 7b": Falcon3-7B, or tiiuae/falcon-7b?
                message = words.which_related(lang, match.text, found.name, other)
                queries = [replace_name(echo, match.text, found.id), replace_name(echo, match.text, other)]
                return cards.ask_card(lang, message, [found.name, other], queries, echo=echo)
            if found:
                return found
        if match and match.ambiguous and match.suggestions:
            return self.suggest(lang, words.which(lang, "model", match.text), match.suggestions, match.text, echo)
        phrase = match.text if match else q.model_text
        if phrase:
            return self.unknown_model(lang, phrase, match.suggestions if match else (), echo)
        if q.model_size:
            return self.sized_model(q.model_size, lang, echo, q.asks.model_filter)
        return cards.ask_card(lang, words.missing(lang, "model"), echo=echo)

    def sized_model(self, size: str, lang: Lang, echo: str, kind: str | None = None) -> ModelSpec | Reply:
        """ "ein 8b modell": answered for the likeliest catalog model of that size (``core.model_sizes``; of
        the ``kind`` asked for first: "an 8b coding model"), said so, the other models of the size a button
        each; "I don't know" when the catalog has none."""
        said = typed(size)
        kind = kind if kind in SIZE_KINDS else None
        found = of_size(self.catalog, said.size_b, said.active_b, kind) if said.size_b else ()
        if not found:
            return self.unknown_model(lang, size, (), echo)
        first, others = found[0], found[1 : 1 + OFFERED]
        label = f"{said.size_b:g}B" + (f"-A{said.active_b:g}B" if said.active_b else "")
        values: dict[str, NoteValue] = {"text": size, "size": label, "model": first.name}
        if others:
            values["others"] = ", ".join(m.name for m in others)
        code = "size_model" if others else "size_model_only"
        if kind is not None and kind in tags_of(first):  # "an 7b coding model": the likeliest coder of the size
            code = f"size_model_{kind}"
        self.notes.append(Note(code=code, values={"others": "–", **values}))
        self.actions.extend(Action(label=m.name, query=replace_name(echo, size, m.id)) for m in others)
        return first

    def unknown_model(self, lang: Lang, phrase: str, family: tuple[str, ...], echo: str) -> Reply:
        """ "I don't know X": quotes the whole phrase, offers same-family entries and the repo-id hint."""
        message = words.unknown_model(lang, phrase)
        return self.suggest(lang, message, family, phrase, echo)

    # --- devices --------------------------------------------------------------------------

    def device(self, q: Query, lang: Lang, user: User, echo: str, need: bool = True) -> tuple[GpuSpec, int] | Reply:
        """The device a question is about: named, named with a memory size, generic, or saved."""
        if q.not_device:
            ghost = self.catalog.not_devices[int(q.not_device.split(":")[1])]
            note = ghost.note_de if lang == "de" and ghost.note_de else ghost.note
            if ghost.stand_in and q.not_device_text:  # a kind of device not covered: one tap asks about its memory
                query = replace_name(echo, q.not_device_text, ghost.stand_in)
                message = words.not_a_device(lang, ghost.name, note, covered=True)
                return cards.ask_card(lang, message, [ghost.stand_in], [query], echo=echo)
            return cards.ask_card(lang, words.not_a_device(lang, ghost.name, note, covered=False), echo=echo)
        match = q.gpu
        if match is not None:
            return self.named_device(match, q.gpu_count, q, lang, echo)
        if q.gpu_text:
            return self.unknown_device(q.gpu_text, q, lang, echo)
        if q.device_kind is not None:
            return self.generic_device(q, lang, echo)
        if user.gpu_id and (saved := self.catalog.gpu(user.gpu_id)):
            self.notes.append(Note(code="saved_gpu", values={"gpu": saved.short_name}))
            return saved, user.gpu_count
        if kind_memory := generic_saved(user.gpu_id):  # "/mygpu 16gb vram": a device known by its memory
            kind, memory = kind_memory
            ram = q.ram_gb if q.ram_gb is not None else user.ram_gb
            update = {
                "device_kind": kind,
                "board": saved_board(user.gpu_id) or q.board,
                "device_memory_gib": memory or None,
                "gpu_count": user.gpu_count,
                "ram_gb": ram,
            }
            return self.generic_device(q.model_copy(update=update), lang, echo)
        if not need:
            return cards.ask_card(lang, words.missing(lang, "gpu_models"), echo=echo)
        model = q.model.text if q.model else q.model_size or "…"
        return cards.ask_card(lang, words.missing(lang, "gpu", model), echo=echo)

    def named_device(self, match: Match, count: int, q: Query, lang: Lang, echo: str) -> tuple[GpuSpec, int] | Reply:
        if match.id and (gpu := self.catalog.gpu(match.id)):
            if match.memory_gib and not same_memory(match.memory_gib, gpu.memory_bytes / (1 << 30)):
                variant = with_memory(gpu, match.memory_gib)
                self.notes.append(
                    Note(code="memory_variant", values={"gpu": variant.short_name, "base": gpu.short_name})
                )
                return variant, count
            if match.assumed and match.choices:
                self.dominant_variant(match, gpu, echo)
            elif match.assumed:
                self.notes.append(Note(code="assumed_device", values={"gpu": gpu.short_name, "text": match.text}))
            return gpu, count
        if match.choices:
            names = [g.short_name for c in match.choices if (g := self.catalog.gpu(c))]
            message = words.which(lang, "memory", match.text)
            return self.suggest(lang, message, match.choices, match.text, echo, labels=names)
        if match.suggestions and not match.unknown:
            return self.suggest(lang, words.which(lang, "device", match.text), match.suggestions, match.text, echo)
        return self.unknown_device(match.text, q, lang, echo, match.suggestions)

    def dominant_variant(self, match: Match, gpu: GpuSpec, echo: str) -> None:
        """ "3060" answered as the 12 GB card (catalog/facts/name_defaults.toml): said so, the others one tap away."""
        others = [g for c in match.choices if (g := self.catalog.gpu(c))]
        names = ", ".join(sized_name(g) for g in others)
        values: dict[str, NoteValue] = {"gpu": sized_name(gpu), "text": match.text, "others": names}
        self.notes.append(Note(code="dominant_variant", values=values))
        self.actions.extend(Action(label=sized_name(g), query=replace_name(echo, match.text, g.id)) for g in others)

    def unknown_device(
        self, phrase: str, q: Query, lang: Lang, echo: str, near: tuple[str, ...] = ()
    ) -> tuple[GpuSpec, int] | Reply:
        """A device the catalog lacks: estimated as a generic device when its memory is given, else asked."""
        if q.device_memory_gib:
            return self.generic_device(q, lang, echo, label=f"{phrase} ({q.device_memory_gib:g} GB)")
        queries = [replace_name(echo, phrase, f"{phrase} {size}gb vram") for size in GENERIC_SIZES]
        labels = [f"{size} GB" for size in GENERIC_SIZES]
        message = words.unknown_device(lang, phrase)
        return cards.ask_card(lang, message, labels, queries, echo=echo)

    def generic_device(self, q: Query, lang: Lang, echo: str, label: str = "") -> tuple[GpuSpec, int] | Reply:
        kind = q.device_kind or "gpu"
        # a CPU's or iGPU's memory is the system RAM, however it was said ("epyc 9654 mit 384 gb")
        memory = q.device_memory_gib if kind not in ("cpu", "igpu") else (q.ram_gb or q.device_memory_gib)
        board = q.board or ""
        if kind == "sbc" and not memory:  # "raspberry pi 5": the 8 GB board, said so
            memory = SBC_BOARDS.get(board, SBC_BOARDS["pi5"])[1]
        named = (cpus().get(board) or find_cpu(board)) if kind == "cpu" else None
        board = named.id if named is not None else board
        if not memory and named is not None:  # "epyc 9654": its memory channels said, the RAM size asked
            message = words.cpu_ram_missing(lang, _cpu_values(named), named.bandwidth_gbps)
            sizes = [gb for gb in CPU_RAM_SIZES if gb >= 8 * named.channels or gb == CPU_RAM_SIZES[-1]][:4]
            queries = [f"{echo} {gb}gb ram" for gb in sizes]
            return cards.ask_card(lang, message, [f"{gb} GB RAM" for gb in sizes], queries, echo=echo)
        if not memory:
            return cards.ask_card(
                lang, words.missing(lang, "cpu_ram" if kind in ("cpu", "igpu") else "vram"), echo=echo
            )
        if kind != "cpu" and (q.device_bandwidth_gbps or q.device_tflops):  # "32 GB at 608 GB/s"
            return self.spec_device(q, memory, label)
        if kind in ("sbc", "igpu") and not label:
            label = f"{BOARD_NAMES.get(board, board.title())} ({memory:g} GB)"
        self.generic = generic_device(self.catalog, kind, memory, label, board)
        low, high = self.generic.bandwidth_range_gbps
        values: dict[str, NoteValue] = {
            "memory": f"{memory:g}",
            "low": f"{low:.0f}",
            "high": f"{high:.0f}",
            "board": label or self.generic.stands_for,
            "peers": self.generic.peers,
        }
        if named is not None:
            values.update(_cpu_values(named))
        self.notes.append(Note(code="named_cpu" if named is not None else f"generic_{kind}", values=values))
        return self.generic.gpu, q.gpu_count

    def spec_device(self, q: Query, memory: float, label: str) -> tuple[GpuSpec, int]:
        """A device known by the memory, bandwidth and compute the question gives (core/custom_device.py)."""
        self.generic = custom_device(self.catalog, memory, q.device_bandwidth_gbps, q.device_tflops, q.backend, label)
        gpu = self.generic.gpu
        tflops = f"{q.device_tflops:g}" if q.device_tflops else "?"
        values = {"memory": f"{memory:g}", "bandwidth": f"{gpu.bandwidth_bytes_per_s / 1e9:g}", "tflops": tflops}
        self.notes.append(Note(code="custom_device", values=dict(values)))
        return gpu, q.gpu_count

    # --- asking back ----------------------------------------------------------------------

    def suggest(
        self,
        lang: Lang,
        message: str,
        ids: tuple[str, ...],
        phrase: str,
        echo: str,
        labels: list[str] | None = None,
    ) -> Reply:
        """Buttons that repeat the whole question with the unclear name replaced, so every other
        constraint (count, context, RAM, KV, quant, engine, users) survives the press."""
        names, queries = [], []
        for sid in ids[:6]:
            item = self.catalog.model(sid) or self.catalog.gpu(sid)
            if item is None:
                continue
            names.append(item.name if isinstance(item, ModelSpec) else item.short_name)
            queries.append(replace_name(echo, phrase, sid))
        return cards.ask_card(lang, message, labels or names, queries, echo=echo)


def related_repo(phrase: str, model: ModelSpec) -> str | None:
    """A different, unversioned model the typed name names exactly ("falcon 7b" is tiiuae/falcon-7b, not
    Falcon3-7B): when the catalog entry has a version number the user did not type, and the offline
    index holds a repo of that name without any version, the name is asked about, never assumed."""
    said, entry = typed(phrase), typed(f"{model.name} {model.id}")
    if not set(entry.numbers) - set(said.numbers) or said.numbers:
        return None
    repo = indexed_repo(phrase)
    if repo is None or repo == model.hf_repo:
        return None
    other = typed(repo.split("/")[-1])
    return repo if not other.numbers and other.size_b == said.size_b else None


def replace_name(echo: str, phrase: str, new: str) -> str:
    """The question with one name replaced (the first occurrence, compared without case and spacing);
    mention syntax never travels into a button."""
    echo = " ".join(_MENTION.sub(" ", echo).split())
    body = r"\s*".join(re.escape(part) for part in _NAME.split(phrase.strip()))
    vendor = new.split("-")[0]  # "arc 140v" -> "arc-140v-16", not "arc arc-140v-16"
    prefix = rf"(?:\b{re.escape(vendor)}\s+)?" if "-" in new and vendor.isalpha() else ""
    pattern = re.compile(prefix + body, re.IGNORECASE)
    replaced, n = pattern.subn(new, echo, count=1)
    return replaced if n else f"{echo} {new}"


def build_request(q: Query, user: User, count: int, quants: Sequence[QuantSpec] = ()) -> tuple[Request, list[Note]]:
    """The estimate's settings from the question and the saved defaults, and what was switched: an
    AWQ/GPTQ/FP8 checkpoint is served by vLLM; an engine FitBot does not model is named; a quant
    name is read as the catalog quant it stands for, or named as unknown, never silently replaced."""
    notes = quant_notes(q)
    quant = q.quant
    if quant is None and q.bpw is not None and (near := nearest_quant(q.bpw, quants)) is not None:
        quant = near.id  # "exl2 4.65bpw", "mlx 4bit": the GGUF quant of the nearest size
        values: dict[str, NoteValue] = {
            "engine": q.other_engine or "",
            "bpw": float(q.bpw),
            "quant": near.id,
            "quant_bpw": round(near.bpw_dense, 2),  # numbers: the note writes them the locale's way
        }
        notes.append(Note(code="quant_nearest", values=values))
    engine = q.engine or user.engine
    if engine is None and q.quant in VLLM_QUANTS:
        engine = Engine.VLLM
        notes.append(Note(code="engine_switched", values={"quant": q.quant, "engine": engine.value}))
    if q.other_engine:
        used = (engine or Engine.LLAMA_CPP).value
        notes.append(Note(code="other_engine", values={"engine": q.other_engine, "used": used}))
    request = Request(
        quant=quant,
        context=q.context or user.context,
        kv_cache=q.kv_cache,
        engine=engine,
        gpu_count=count,
        ram_gb=q.ram_gb if q.ram_gb is not None else user.ram_gb,
        prompt_tokens=q.prompt_tokens,
        concurrent=q.users,
        backend=q.backend,
    )
    return request, notes


def quant_notes(q: Query) -> list[Note]:
    """What a quant name was read as: an unsloth name without "UD-", an ARM repack, or unknown."""
    if q.quant and q.quant_text:
        code = "quant_ud" if q.quant.startswith("UD-") else "quant_repack"
        return [Note(code=code, values={"text": q.quant_text, "quant": q.quant})]
    if q.unknown_quant and not q.quant:
        return [Note(code="quant_unknown", values={"text": q.unknown_quant})]
    return []


def nearest_quant(bpw: float, quants: Sequence[QuantSpec]) -> QuantSpec | None:
    """The plain llama.cpp GGUF quant whose dense bits per weight are nearest to ``bpw``."""
    pool = [x for x in quants if x.format == "gguf" and not x.id.startswith("UD-") and Engine.LLAMA_CPP in x.engines]
    return min(pool, key=lambda x: abs(x.bpw_dense - bpw), default=None)
