"""``fitbot``: the command line. ``estimate``/``finetune``/``catalog`` call core directly with exact flags;
``ask``/``chat`` go through the same service the chat adapters use.

Heavy libraries (chat platforms, matplotlib, huggingface_hub) are imported by the sub-commands that
need them, and a current catalog file is read without an event loop: ``fitbot estimate`` starts fast.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from bot.app import mcp_serve
from bot.app.datadir import CATALOG_FILE, PRICES_FILE, from_environment
from bot.cards.notes import note_text
from bot.labels import setup_label
from catalog.exact import ModelHit, NotFound, exact_gpu, exact_model
from catalog.store import CatalogStore
from core.analysis import Analysis, analyse
from core.estimate import DEFAULT_ENGINE, EstimateError, Request, Scenario, default_quant, scenario
from core.models import GIB, Backend, Catalog, Engine, GpuSpec, KvCacheType
from core.speed.device import BACKEND_LABELS, backend_named

if TYPE_CHECKING:
    from core.devices import GenericDevice

MAX_CONTEXT = 1 << 24
ONE_SHOT = ("estimate", "finetune", "ask", "catalog")  # commands that answer once and exit (``entry``)


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


Method = Literal["qlora", "lora", "full"]


def _context(text: str) -> int:
    """Context as tokens: "32768", "32k", "1m"."""
    raw = text.strip().lower()
    scale = {"k": 1024, "m": 1 << 20}.get(raw[-1:], 1)
    try:
        value = int(float(raw[:-1] if scale > 1 else raw) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a context length: {text!r} (try 8192 or 32k)") from None
    if not 1 <= value <= MAX_CONTEXT:
        raise argparse.ArgumentTypeError(f"context must be between 1 and {MAX_CONTEXT} tokens, got {value}")
    return value


def _positive(kind: Callable[[str], float], upper: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not 0 < value <= upper:
            raise argparse.ArgumentTypeError(f"must be between 0 and {upper:g}, got {text}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fitbot", description="Can I run this model? Fit, speed and cost.")
    sub = parser.add_subparsers(dest="command", required=True)

    est = sub.add_parser("estimate", help="memory breakdown and fit verdict for one model on one GPU setup")
    est.add_argument(
        "--model",
        required=True,
        help="catalog name/alias, HF repo id known to the catalog, config.json, folder or .gguf",
    )
    est.add_argument("--gpu", help='GPU name or alias, e.g. "rtx 4090", "2x 3090", "m3 ultra 512" (or give --vram)')
    est.add_argument("--gpus", type=_positive(int, 64), default=None, help="number of GPUs")
    est.add_argument("--quant", help="Q4_K_M (default), Q8_0, UD-Q2_K_XL, BF16, FP8, AWQ ...")
    est.add_argument("--ctx", type=_context, help="context length in tokens (default 8192)")
    est.add_argument(
        "--kv-cache",
        choices=[k.value for k in KvCacheType],
        help="KV cache type (default f16 for llama.cpp, bf16 for vLLM)",
    )
    est.add_argument("--ram", type=_positive(float, 65536), help="system RAM in GB (default 64)")
    est.add_argument("--engine", choices=[e.value for e in Engine], help="llama.cpp (default) or vllm")
    est.add_argument("--prompt", type=_context, help="prompt length for time to first token (default 4096)")
    est.add_argument("--concurrent", type=_positive(int, 4096), help="concurrent users (vLLM batching)")
    est.add_argument("--ram-bandwidth", type=_positive(float, 100000), help="system RAM bandwidth in GB/s")
    est.add_argument("--backend", type=_backend, help="cuda, rocm (hip), vulkan (radv, amdvlk), sycl, metal, cpu")
    est.add_argument("--vram", type=_positive(float, 65536), help="GPU memory in GB: any device, even unknown")
    est.add_argument("--bandwidth", type=_positive(float, 100000), help="GPU memory bandwidth in GB/s")
    est.add_argument("--tflops", type=_positive(float, 100000), help="dense FP16 tensor TFLOPS as the vendor lists it")
    est.add_argument("--json", action="store_true", help="print one JSON object")

    ask = sub.add_parser("ask", help="answer one question, as the chat bot would")
    ask.add_argument("question", nargs="+", help='e.g. "can I run qwen3 32b on two 3090?"')
    ask.add_argument("--lang", choices=["de", "en"], help="answer language (default: the question's)")
    ask.add_argument("--json", action="store_true", help="print the Reply as JSON")

    chat = sub.add_parser("chat", help="interactive session in the terminal")
    chat.add_argument("--lang", choices=["de", "en"])

    mcp_serve.add_parser(sub)
    sub.add_parser("run", help="start every chat adapter whose token is set (see deploy/settings.example)")
    sub.add_parser("health", help="exit 0 when the data directory is FitBot's, its databases open and an adapter runs")
    sub.add_parser("migrate", help="apply pending user-database migrations (SQLite or FITBOT_DATABASE_URL)")
    stats = sub.add_parser("stats", help="usage statistics from the query log")
    stats.add_argument("--json", action="store_true")

    ft = sub.add_parser("finetune", help="fine-tuning memory (QLoRA, LoRA, full) and the smallest hardware")
    ft.add_argument("--model", required=True)
    ft.add_argument("--gpu", required=True)
    ft.add_argument("--gpus", type=_positive(int, 64), default=None)
    ft.add_argument("--method", choices=["qlora", "lora", "full"], help="default: all three")
    ft.add_argument("--seq", type=_context, default=2048, help="sequence length (default 2048)")
    ft.add_argument("--batch", type=_positive(int, 4096), default=1, help="micro-batch (default 1)")
    ft.add_argument("--json", action="store_true")

    cat = sub.add_parser("catalog", help="list what the catalog holds, with sources and dates")
    cat.add_argument("what", choices=["gpus", "models", "offers", "quants", "verify", "refresh"])
    cat.add_argument("--json", action="store_true")
    cat.add_argument(
        "--live", action="store_true", help="verify: also compare every row with its config.json on the hub"
    )
    cat.add_argument(
        "--stale", action="store_true", help="offers: only those older than 6 months, undated or unverified"
    )
    return parser


def load_catalog() -> Catalog:
    """The catalog, read straight from a current file (built, rebuilt or migrated first when it is not), with the
    prices the last ``fitbot catalog refresh`` stored over its offers."""
    data_dir = from_environment()
    store = CatalogStore(data_dir / CATALOG_FILE)
    catalog = store.read_current()
    if catalog is None:
        import asyncio

        catalog = asyncio.run(store.load())
    prices = data_dir / PRICES_FILE
    if os.environ.get("FITBOT_DATABASE_URL"):  # several workers: the prices they all follow, never a local file
        import asyncio

        catalog = asyncio.run(_with_shared_prices(catalog))
    elif prices.exists():  # no refresh ever ran: the snapshot's offers, without starting a loop
        import asyncio

        from catalog.prices.refresh import stored_catalog

        catalog = asyncio.run(stored_catalog(catalog, prices))
    return catalog


async def _with_shared_prices(catalog: Catalog) -> Catalog:
    from bot.app.migrate import user_store
    from bot.app.settings import Settings
    from catalog.prices.refresh import merge
    from catalog.prices.store import PriceTables

    async with user_store(Settings()) as store:
        return merge(catalog, await PriceTables(store.database).offers())


def _model(catalog: Catalog, text: str) -> ModelHit | NotFound:
    """--model: a name the catalog lists, else what the question parser reads (imported only then)."""
    if (model := exact_model(catalog, text)) is not None:
        return ModelHit(model)
    from catalog.lookup import find_model

    return find_model(catalog, text)


def _gpu(catalog: Catalog, text: str, assumed: list[str]) -> tuple[GpuSpec, int] | NotFound:
    if (gpu := exact_gpu(catalog, text)) is not None:
        return gpu, 1
    from catalog.lookup import find_gpu

    return find_gpu(catalog, text, assumed)


def resolve_names(args: argparse.Namespace, catalog: Catalog) -> tuple[ModelHit, GpuSpec, int]:
    """The --model and --gpu arguments as catalog entries, or a UsageError with suggestions."""
    hit = _model(catalog, args.model)
    if isinstance(hit, NotFound):
        raise UsageError(_not_found(hit))
    assumed: list[str] = []
    found = _gpu(catalog, args.gpu, assumed)
    if isinstance(found, NotFound):
        raise UsageError(_not_found(found))
    for line in assumed:  # on stderr, so --json output stays one JSON document
        print(f"assumed: {line}", file=sys.stderr)
    return hit, found[0], args.gpus or found[1]


def _backend(text: str) -> Backend:
    backend = backend_named(text)
    if backend is None:
        raise argparse.ArgumentTypeError(f"unknown backend {text!r} (cuda, rocm, vulkan, sycl, metal, cpu)")
    return backend


def resolve_device(args: argparse.Namespace, catalog: Catalog) -> tuple[GpuSpec, int, GenericDevice | None]:
    """--gpu as a catalog entry, with --vram/--bandwidth/--tflops as given; a device known only by
    its specs (--vram, and --gpu naming something the catalog lacks) becomes a custom device."""
    assumed: list[str] = []
    found = _gpu(catalog, args.gpu, assumed) if args.gpu else None
    if isinstance(found, NotFound) or found is None:
        if args.vram is None:
            raise UsageError(
                _not_found(found) + "; or give its specs: --vram GB [--bandwidth GB/s] [--tflops]"
                if found
                else "give --gpu or --vram"
            )
        from core.custom_device import custom_device  # a device known by its specs only

        label = found.text if found else ""
        device = custom_device(catalog, args.vram, args.bandwidth, args.tflops, args.backend, label)
        return device.gpu, args.gpus or 1, device
    for line in assumed:  # on stderr, so --json output stays one JSON document
        print(f"assumed: {line}", file=sys.stderr)
    if args.vram:
        from core.devices import with_memory

        gpu = with_memory(found[0], args.vram)
    else:
        gpu = found[0]
    update = {"bandwidth_bytes_per_s": args.bandwidth * 1e9} if args.bandwidth else {}
    update |= {"fp16_tflops": args.tflops} if args.tflops else {}
    return gpu.model_copy(update=update), args.gpus or found[1], None


def run_estimate(args: argparse.Namespace, catalog: Catalog) -> Analysis:
    hit = _model(catalog, args.model)
    if isinstance(hit, NotFound):
        raise UsageError(_not_found(hit))
    gpu, count, device = resolve_device(args, catalog)
    request = Request(
        quant=args.quant or hit.quant,
        context=args.ctx,
        kv_cache=KvCacheType(args.kv_cache) if args.kv_cache else None,
        engine=Engine(args.engine) if args.engine else None,
        gpu_count=count,
        ram_gb=args.ram,
        ram_bandwidth_gbps=args.ram_bandwidth,
        prompt_tokens=args.prompt,
        concurrent=args.concurrent,
        backend=args.backend,
    )
    quant_id = request.quant or default_quant(hit.model, request.engine or DEFAULT_ENGINE)
    if (quant := catalog.quant(quant_id.upper())) is None:
        from catalog.lookup import find_quant

        quant = find_quant(catalog, quant_id)
    if quant is None:
        raise UsageError(f"unknown quant {quant_id!r}; known: {', '.join(q.id for q in catalog.quants)}")
    if quant.id != quant_id.upper():
        print(f"assumed: quant {quant_id!r} read as {quant.id}", file=sys.stderr)
    measured = hit.measured.get(quant.id) or catalog.size(hit.model.id, quant.id)
    try:
        s = scenario(hit.model, gpu, request, quant=quant, measured=measured)
        if args.quant and quant.id == quant_id.upper() and quant.label != quant.id:
            print(f"assumed: quant {quant.label}", file=sys.stderr)  # what it is: "Q6_K_L (Q6_K, embed/output Q8_0)"
        if gpu.id.startswith("rig:"):  # a mixed rig: settled on each card's runtime overhead, then placed
            return rig_analysis(s, catalog)
        analysis = analyse(s, catalog)
        if device is not None:
            from core.devices import widened

            analysis = analysis.model_copy(update={"estimate": widened(analysis.estimate, s, device)})
        return analysis
    except EstimateError as exc:
        raise UsageError(str(exc)) from None


def rig_analysis(s: Scenario, catalog: Catalog) -> Analysis:
    """The analysis of a mixed rig, its placement on stderr and its commands with the rig's --tensor-split."""
    from catalog.lookup import rig_cards
    from core import rig
    from core.estimate import estimate_of

    cards = rig_cards(catalog, s.device)
    overhead = estimate_of(s).memory.overhead_bytes // len(cards)
    stand_in = rig.stand_in(cards, overhead)
    result = analyse(scenario(s.model, stand_in, s.request, quant=s.quant, measured=s.measured), catalog)
    est = result.estimate
    plan = rig.plan(cards, est.offload, est.gpu_bytes, est.ram_bytes, overhead)
    for card in plan.cards:
        print(f"placement: {card.gpu.short_name}: {card.layers} layers, {_gib(card.holds_bytes)}"
              f" ({card.share:.0%}), --tensor-split share {card.free_gib:g}", file=sys.stderr)  # fmt: skip
    if plan.cpu_moe_layers:
        print(
            f"placement: RAM: experts of the first {plan.cpu_moe_layers} layers ({_gib(plan.ram_bytes)})",
            file=sys.stderr,
        )
    if result.advice is None:
        return result
    commands = tuple(
        c.model_copy(update={"argv": rig.with_split(c.argv, plan.tensor_split)}) if c.engine is Engine.LLAMA_CPP else c
        for c in result.advice.commands
    )
    return result.model_copy(update={"advice": result.advice.model_copy(update={"commands": commands})})


def run_finetune(args: argparse.Namespace, catalog: Catalog) -> list[dict[str, Any]]:
    from core.finetune import estimate_finetune, smallest_hardware, training_fit

    hit, gpu, count = resolve_names(args, catalog)
    out = []
    methods: list[Method] = [args.method] if args.method else ["qlora", "lora", "full"]
    for method in methods:
        est = estimate_finetune(hit.model, method, seq_len=args.seq, micro_batch=args.batch)
        smallest = smallest_hardware(hit.model, method, catalog, seq_len=args.seq, micro_batch=args.batch)
        out.append(
            {
                **est.model_dump(mode="json"),
                "assumptions": [note_text(n, "en") for n in est.basis],
                "fit": training_fit(est, gpu, count).model_dump(mode="json"),
                "smallest_hardware": smallest.model_dump(mode="json") if smallest else None,
            }
        )
    return out


def _not_found(miss: NotFound) -> str:
    line = miss.reason or f"unknown {miss.kind} {miss.text!r}"
    if miss.suggestions:
        line += f" (did you mean: {', '.join(miss.suggestions)}?)"
    return line


def _gib(value: int) -> str:
    return f"{value / GIB:,.2f} GiB"


def print_estimate(analysis: Analysis) -> None:
    est = analysis.estimate
    mem = est.memory
    hw = est.hardware
    setup = hw.gpu_name if hw.gpu.startswith("rig:") else setup_label(hw.gpu_name, hw.count)
    backend = f" ({BACKEND_LABELS[hw.backend]})" if hw.backend else ""
    print(f"{est.model.name} · {est.quant} · {est.context:,} tokens · {est.engine.value}{backend} on {setup}")
    print(f"verdict: {est.verdict.value}")
    rows = [
        ("weights", mem.weights_bytes),
        ("  of which in system RAM", mem.host_weights_bytes),
        ("KV cache", mem.kv_cache_bytes),
        ("runtime overhead", mem.overhead_bytes),
        ("total on GPU", mem.total_bytes),
        ("usable", mem.usable_bytes),
        ("reserve", mem.reserve_bytes),
    ]
    for label, value in rows:
        print(f"  {label:<26}{_gib(value):>14}")
    off = est.offload
    if off.mode == "experts":
        print(f"offload: experts of {off.cpu_moe_layers}/{off.layers_total} layers in RAM ({_gib(off.bytes_in_ram)})")
    elif off.mode == "layers":
        print(f"offload: {off.layers_on_gpu}/{off.layers_total} layers on GPU, {_gib(off.bytes_in_ram)} in RAM")
    print(f"max context fully on GPU: {est.max_context:,} tokens")
    sp = est.speed
    print(
        f"decode: {sp.decode_tokens_per_s:,.1f} tok/s ({sp.decode_range[0]:,.1f}-{sp.decode_range[1]:,.1f}),"
        f" {sp.decode_tokens_per_s_at_context:,.1f} at {est.context:,} tokens; prefill {sp.prefill_tokens_per_s:,.0f} tok/s;"
        f" TTFT {sp.ttft_s:,.2f} s for {sp.prompt_tokens:,} tokens ({sp.confidence})"
    )
    serving, conc = est.serving, sp.concurrency
    if serving.users > 1 and est.verdict.value != "no_fit":
        wait = ", the rest queue" if serving.users_served < serving.users else ""
        print(
            f"{serving.users} users: {serving.aggregate_tokens_per_s:,.1f} tok/s together,"
            f" {serving.per_user_tokens_per_s:,.1f} each ({serving.users_served} at once{wait})"
        )
    if conc is not None and est.engine.value == "vllm" and est.verdict.value != "no_fit":
        print(f"vLLM KV pool: {_gib(conc.kv_budget_bytes)}, holds {conc.sequences_fit} x {est.context:,} tokens")
    advice, cost = analysis.advice, analysis.cost
    assert advice is not None and cost is not None
    if advice.best_quant and advice.best_quant_verdict is not None:
        print(f"best quant that fits: {advice.best_quant} ({advice.best_quant_verdict.value})")
    for offer in cost.offers[:3]:
        print(
            f"cloud: {offer.offer.provider} {setup_label(offer.gpu.short_name, offer.offer.gpu_count)} ${offer.offer.price_per_hour_usd:.2f}/h,"
            f" {offer.decode_tokens_per_s:,.0f} tok/s, ${offer.usd_per_million_tokens:.2f}/Mtok (seen {offer.seen})"
        )
    for cmd in advice.commands:
        print(f"{cmd.engine.value}: {cmd.shell}" + "".join(f"\n  # {note_text(n, 'en')}" for n in cmd.notes))
    print("assumptions: " + "; ".join(assumptions(analysis)))


def assumptions(analysis: Analysis) -> list[str]:
    """The scenario's notes in English, through the one note renderer the cards use."""
    return [note_text(n, "en") for n in analysis.scenario.notes]


def _finetune_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for r in results:
        fit, small = r["fit"], r["smallest_hardware"]
        lines.append(
            f"{r['method']}: total {int(r['total_bytes']) / GIB:,.2f} GiB (weights {int(r['base_weights_bytes']) / GIB:,.2f},"
            f" grads+optimizer {(int(r['gradients_bytes']) + int(r['optimizer_bytes']) + int(r['adapter_bytes'])) / GIB:,.2f},"
            f" activations {int(r['activations_bytes']) / GIB:,.2f}) -> {fit['verdict']}"
            + (f"; smallest: {setup_label(small['gpu_name'], small['count'])}" if small else "")
        )
    return lines


def _hub_service(catalog: Catalog) -> Callable[[], Awaitable[Any]]:
    """The service ``ask``/``chat`` use: the bots' own (hub look-ups, cache, user data; HF_* settings)."""

    async def open_it() -> Any:
        from bot.app.run import open_service
        from bot.app.settings import Settings

        return await open_service(catalog, Settings())

    return open_it


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("run", "health", "stats", "migrate"):
        from bot.app import run

        return run.main(args)
    collecting = gc.isenabled()
    if args.command in ONE_SHOT:
        gc.disable()  # see ``entry``
    try:
        catalog = load_catalog()
        if args.command == "estimate":
            result = run_estimate(args, catalog)
            if args.json:
                data = result.estimate.model_dump(mode="json")
                data["assumptions"] = assumptions(result)
                data["cost"] = result.cost.model_dump(mode="json") if result.cost else None
                data["advice"] = result.advice.model_dump(mode="json") if result.advice else None
                from core.figures import figures_of

                data["figures"] = figures_of(result).model_dump(mode="json")
                print(json.dumps(data, indent=1, ensure_ascii=False))
            else:
                print_estimate(result)
        elif args.command == "finetune":
            out = run_finetune(args, catalog)
            print(json.dumps(out, indent=1) if args.json else "\n".join(_finetune_lines(out)))

        elif args.command == "ask":
            from bot.adapters.console import ask

            print(ask(_hub_service(catalog), " ".join(args.question), args.lang, args.json))
        elif args.command == "mcp":
            return mcp_serve.main(args, _hub_service(catalog))
        elif args.command == "chat":
            from bot.adapters.console import chat

            chat(_hub_service(catalog), args.lang)
        elif args.command == "catalog":
            from bot.app import catalog_command

            return catalog_command.run(args, catalog, _hub_service(catalog))
    except UsageError as exc:
        print(f"fitbot: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head`
        return 0
    except Exception as exc:  # the catalog files or database are broken: say so in one line
        print(f"fitbot: internal error: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        if collecting:
            gc.enable()
    return 0


def entry() -> None:
    """The ``fitbot`` program. A one-shot command lives a fraction of a second and leaves few cycles, so
    ``main`` keeps the cycle collector off while it runs (its passes over the catalog cost more than they
    free); the objects are then frozen, so the interpreter's exit does not walk them again (about 35 ms)."""
    code = main()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
