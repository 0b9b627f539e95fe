"""A burst of questions through the production Telegram wiring, checked for exactly-once answers.

    .venv/bin/python bench/burst.py [--users 500] [--per-user 10] [--fail] [--flood] [--paced]

The fake Bot API (tests/fakes/telegram_api.py) runs in this process; the bot runs in a child process
(``--child``) through the production ``run_telegram`` on the production ``Service.open`` with the
default rate limits from ``Settings`` (20 questions per user a minute, so 10 each stay under it),
charts off. Every user has a private chat and asks ``--per-user`` questions, a mix of fit, quant,
cloud, speed, table and help questions in English and German, popular ones repeated; all are queued
at once, interleaved.

The production ``AIORateLimiter(max_retries=3)`` is in the path, but with its pacing switched off
(overall and group rate 0): its defaults let out 30 messages a second, Telegram's own broadcast
limit, so a burst of 5,000 would take three minutes by design. ``--paced`` keeps the production
pacing too.

Exactly once: the texts the bot got accepted in each chat are compared with the cards the same
``Service`` renders for that chat's questions (a card of two or three messages counts once, by its
first message; a card of more goes out as its first message plus a document). After the last
answer the bench waits ``--grace`` seconds and checks again, so late duplicates count.

``--fail`` answers sendMessage with 429 (retry_after 1) three times in each of three episodes and
with 500 twice, mid-burst. ``--flood`` adds one user sending 500 questions in the same burst: the
others' latency is printed separately, and the flooder's real answers and slow-down cards.

Prints answers/s, p50/p99 latency (push -> first message of the card at the fake), the bot's peak
RSS (VmHWM) and CPU time, failures injected, retries seen, and the exactly-once verdict. It prints,
it does not assert; the CI-sized checks are tests/bot/test_burst.py, which import the helpers here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import resource
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOKEN = "123456:BURST-token"
FIRST_CHAT = 2_000_000
FLOODER = 1_999_999
SENDS = ("sendMessage", "sendPhoto", "sendDocument")
DOCUMENT = "<document>"
PHOTO = "<photo>"
MAX_CHAT_MESSAGES = 3  # bot.telegram_app.MAX_CHAT_MESSAGES: a longer card is its first message + a document

MODELS = ("qwen3 8b", "qwen3 14b", "qwen3 32b", "llama 3.3 70b", "gemma 3 27b", "mistral small 24b", "glm 4.5 air")
GPUS = ("4090", "3090", "3060", "4070", "5090", "2x 3090", "h100")
CONTEXTS = (8, 16, 32, 64)
# (weight, language, template): the language is the Telegram language_code of users who ask it this way.
TEMPLATES: tuple[tuple[int, str, str], ...] = (
    (6, "en", "/fit {m} {g}"),
    (5, "en", "can I run {m} on a {g}?"),
    (3, "en", "can I run {m} on a {g} with {c}k?"),
    (2, "en", "/fit {m} {g} {c}k"),
    (4, "de", "kann ich {m} auf einer {g} laufen lassen?"),
    (3, "de", "passt {m} auf eine {g}?"),
    (3, "en", "/quant {m} {g}"),
    (2, "en", "which quant of {m} fits a {g}?"),
    (2, "de", "/quant {m} {g}"),
    (3, "en", "/cloud {m}"),
    (2, "en", "where can I rent a gpu for {m}?"),
    (2, "de", "was kostet {m} in der cloud?"),
    (2, "en", "/speed {m} {g}"),
    (1, "en", "/models {g}"),  # a two-message card
    (1, "de", "/gpus {m}"),  # a three-message card
    (2, "en", "/help"),
    (1, "de", "/help"),
    (1, "en", "/start"),
    (1, "de", "hilfe"),
    (1, "en", "help"),
)


@dataclass(frozen=True)
class Ask:
    """One question: who asks it (private chat = user id), the text, the user's Telegram language."""

    chat: int
    text: str
    lang: str


def question_pool(size: int, seed: int) -> list[tuple[str, str]]:
    """``size`` distinct (text, language) questions drawn from the templates by weight."""
    rng = random.Random(seed)
    weights = [w for w, _, _ in TEMPLATES]
    pool: dict[tuple[str, str], None] = {}
    for _ in range(size * 50):  # bounded: the templates allow a few thousand distinct questions
        if len(pool) >= size:
            break
        _, lang, template = rng.choices(TEMPLATES, weights)[0]
        text = template.format(m=rng.choice(MODELS), g=rng.choice(GPUS), c=rng.choice(CONTEXTS))
        pool[(text, lang)] = None
    return list(pool)


def make_plan(
    users: int, per_user: int, *, seed: int = 7, first_chat: int = FIRST_CHAT, pool_size: int | None = None
) -> list[Ask]:
    """``users`` x ``per_user`` questions, interleaved; popular questions repeat (Zipf-like weights)."""
    rng = random.Random(seed)
    pool = question_pool(pool_size or max(20, users * per_user // 20), seed)
    popularity = [1 / (rank + 1) ** 0.8 for rank in range(len(pool))]
    asks: list[Ask] = []
    for u in range(users):
        for text, lang in rng.choices(pool, popularity, k=per_user):
            asks.append(Ask(first_chat + u, text, lang))
    rng.shuffle(asks)
    return asks


def flood_plan(count: int, *, chat: int = FLOODER, seed: int = 11) -> list[Ask]:
    """One user asking ``count`` questions (a few distinct ones, over and over)."""
    pool = question_pool(8, seed)
    return [Ask(chat, *pool[i % len(pool)]) for i in range(count)]


def interleave(main: list[Ask], extra: list[Ask], seed: int = 3) -> list[Ask]:
    """``extra`` spread evenly through ``main`` in order (each list keeps its own order)."""
    rng = random.Random(seed)
    slots = sorted(rng.sample(range(len(main) + len(extra)), len(extra)))
    out, mi, ei = [], iter(main), iter(extra)
    slot_set = set(slots)
    for i in range(len(main) + len(extra)):
        out.append(next(ei) if i in slot_set else next(mi))
    return out


# --------------------------------------------------------------------------- expectations


def plain(html_text: str) -> str:
    from tests.fakes.telegram_api import parse_html

    return parse_html(html_text)[0]


def card_texts(reply: Any) -> list[str]:
    """The plain texts of the messages the adapter sends for ``reply`` with charts off."""
    from bot.render_telegram import to_telegram

    messages = to_telegram(reply.model_copy(update={"chart": None}))
    if len(messages) > MAX_CHAT_MESSAGES:
        return [plain(messages[0].text), DOCUMENT]
    return [plain(m.text) for m in messages]


async def expectations(catalog: Any, asks: Iterable[Ask]) -> dict[tuple[str, str], list[str]]:
    """Per (text, language): the card's message texts, from a limit-free ``Service`` on the same catalog.

    Answers are a pure function of the question, the language and saved defaults; nobody in a burst
    has saved defaults, so this is what every asker must get.
    """
    from bot.service import Service, User

    service = Service(catalog)
    out: dict[tuple[str, str], list[str]] = {}
    for ask in asks:
        key = (ask.text, ask.lang)
        if key not in out:
            out[key] = card_texts(await service.answer(ask.text, ask.lang, User(id="tg:0")))
    return out


def slow_down_pattern() -> re.Pattern[str]:
    """Matches the slow-down card in either language, whatever the seconds."""
    from bot import cards

    alternatives = []
    for lang in ("en", "de"):
        text = card_texts(cards.slow_down_card(lang, 987654))[0]
        alternatives.append(re.escape(text).replace("987654", r"\d+"))
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def apology_texts() -> set[str]:
    """The adapter's apology after a failed update, in both languages."""
    from bot.telegram_app import say

    return {say(lang, "apology") for lang in ("en", "de")}


# --------------------------------------------------------------------------- the tally


@dataclass
class Sent:
    text: str
    at: float


@dataclass
class Tally:
    """Reads the fake's exchanges incrementally: accepted sends per chat, failed sends, retries."""

    api: Any
    pos: int = 0
    sent: dict[int, list[Sent]] = field(default_factory=lambda: defaultdict(list))
    failed: list[tuple[int, int, str]] = field(default_factory=list)  # (status, chat, text)
    _pending_fail: Counter = field(default_factory=Counter)
    retried: int = 0

    def update(self) -> None:
        exchanges = self.api.exchanges
        while self.pos < len(exchanges):
            e = exchanges[self.pos]
            if e.method in SENDS:
                if e.status == 0:  # still being answered
                    return
                chat = e.params.get("chat_id")
                text = (
                    e.params.get("text")
                    if e.method == "sendMessage"
                    else DOCUMENT
                    if e.method == "sendDocument"
                    else PHOTO
                )
                key = (chat, e.params.get("text"))
                if self._pending_fail[key]:  # the same message again after a refusal: a retry
                    self._pending_fail[key] -= 1
                    self.retried += 1
                if e.status == 200:
                    self.sent[int(e.response["chat"]["id"])].append(Sent(e.response.get("text") or text, e.at))
                else:
                    self.failed.append((e.status, int(chat), str(text)))
                    self._pending_fail[key] += 1
            self.pos += 1

    def count(self) -> int:
        return sum(len(v) for v in self.sent.values())


@dataclass
class Verdict:
    """Per-chat accounting of a burst against its questions."""

    questions: int = 0
    answered: int = 0  # cards whose first message arrived (real answers)
    slow_downs: int = 0
    apologies: int = 0
    missing: int = 0  # questions with no response at all
    duplicates: int = 0  # accepted messages beyond what the questions call for
    incomplete: int = 0  # parts of multi-message cards that never arrived
    problems: list[str] = field(default_factory=list)
    latencies: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    per_chat: dict[int, Counter] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return self.missing == 0 and self.duplicates == 0 and self.incomplete == 0

    def responses(self, chat: int) -> Counter:
        return self.per_chat.get(chat, Counter())


def verify(
    asks: list[Ask],
    expected: dict[tuple[str, str], list[str]],
    tally: Tally,
    pushed_at: dict[int, list[float]] | None = None,
) -> Verdict:
    """Exactly once, per chat: every question has one response (its card, a slow-down or an apology).

    A response beyond that is a duplicate; a card part beyond its question's is one too. Latency is
    the time from a question's push to the arrival of its card's first message (matched in order).
    """
    slow, apologies = slow_down_pattern(), apology_texts()
    verdict = Verdict(questions=len(asks))
    by_chat: dict[int, list[Ask]] = defaultdict(list)
    for ask in asks:
        by_chat[ask.chat].append(ask)
    for chat in set(by_chat) | set(tally.sent):
        chat_asks, got = by_chat.get(chat, []), tally.sent.get(chat, [])
        firsts = Counter(expected[(a.text, a.lang)][0] for a in chat_asks)
        rests = Counter(t for a in chat_asks for t in expected[(a.text, a.lang)][1:])
        real, n_slow, n_sorry = Counter(), 0, 0
        for s in got:
            if s.text in apologies:
                n_sorry += 1
            elif slow.fullmatch(s.text):
                n_slow += 1
            else:
                real[s.text] += 1
        answered = firsts & real
        after_firsts = real - answered
        rest_ok = rests & after_firsts
        extra = after_firsts - rest_ok
        n_answered = sum(answered.values())
        responses = n_answered + n_slow + n_sorry
        verdict.answered += n_answered
        verdict.slow_downs += n_slow
        verdict.apologies += n_sorry
        verdict.per_chat[chat] = Counter(answers=n_answered, slow_downs=n_slow, apologies=n_sorry)
        missing = max(0, len(chat_asks) - responses)
        dup = sum(extra.values()) + max(0, responses - len(chat_asks))
        verdict.missing += missing
        verdict.duplicates += dup
        # parts of answered cards that never came (cards cut short by a failure count here)
        owed = Counter()
        for text, n in answered.items():
            for a in chat_asks:
                if expected[(a.text, a.lang)][0] == text:
                    for part in expected[(a.text, a.lang)][1:]:
                        owed[part] += n
                    break
        verdict.incomplete += sum((owed - rest_ok).values())
        if (missing or dup) and len(verdict.problems) < 10:
            verdict.problems.append(
                f"chat {chat}: {len(chat_asks)} questions, {n_answered} answers, "
                f"{n_slow} slow-downs, {n_sorry} apologies, {dup} extra: {list(extra)[:2]}"
            )
        if pushed_at is not None:
            times = sorted(pushed_at.get(chat, []))
            arrivals = [s.at for s in got if s.text in firsts or s.text in apologies or slow.fullmatch(s.text)]
            for pushed, arrived in zip(times, sorted(arrivals), strict=False):
                verdict.latencies[chat].append(arrived - pushed)
    return verdict


async def wait_for_responses(
    tally: Tally, asks: list[Ask], expected: dict[tuple[str, str], list[str]], timeout: float, grace: float
) -> tuple[Verdict, float]:
    """Waits until every question has a response (or ``timeout``), then ``grace`` more; returns the verdict
    and the time the last response arrived."""
    need = len(asks)
    deadline = time.monotonic() + timeout
    while True:
        tally.update()
        if tally.count() >= need:
            verdict = verify(asks, expected, tally)
            if verdict.answered + verdict.slow_downs + verdict.apologies >= need:
                break
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    last = max((s.at for v in tally.sent.values() for s in v), default=time.monotonic())
    await asyncio.sleep(grace)
    tally.update()
    return verify(asks, expected, tally), last


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


# --------------------------------------------------------------------------- the bot process


def vm_kib(pid: int, field_name: str) -> int:
    """A /proc/<pid>/status figure in KiB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    return 0


def lifted_rate_limiter() -> None:
    """Production's ``AIORateLimiter(max_retries=...)`` with the 30/s and 20/min-per-group pacing off."""
    import functools

    from telegram.ext import AIORateLimiter

    import bot.telegram_app as telegram_app

    telegram_app.AIORateLimiter = functools.partial(AIORateLimiter, overall_max_rate=0, group_max_rate=0)


async def child(base_url: str, paced: bool, log_path: str) -> None:
    """The bot: production wiring and Settings defaults; prints CPU time and max RSS on SIGTERM."""
    handler = logging.FileHandler(log_path)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    logging.getLogger("telegram.ext.AIORateLimiter").setLevel(logging.INFO)
    if not paced:
        lifted_rate_limiter()
    from bot.service import Service
    from bot.settings import Settings
    from bot.telegram_app import run_telegram
    from catalog.store import CatalogStore

    with tempfile.TemporaryDirectory() as tmp:
        catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
        service = await Service.open(catalog, Settings(_env_file=None, fitbot_data_dir=Path(tmp)))
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        await run_telegram(service, token=TOKEN, base_url=base_url, charts=False, stop=stop)
        await service.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"maxrss_kib": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}), flush=True)


async def inject_failures(api: Any, tally: Tally, total: int, log: list[str]) -> None:
    """Mid-burst: 429 (retry_after 1) x3 at 20 %, 45 % and 70 % of the answers, 500 x2 at 30 %."""
    plan = sorted([(0.20, 429, 3), (0.30, 500, 2), (0.45, 429, 3), (0.70, 429, 3)])
    for share, status, times in plan:
        while tally.count() < share * total:
            await asyncio.sleep(0.01)
        api.fail_next("sendMessage", status=status, retry_after=1, times=times)
        log.append(f"{status} x{times} after {tally.count()} answers")


async def run(args: argparse.Namespace) -> None:
    from catalog.store import CatalogStore
    from tests.fakes.telegram_api import FakeTelegramAPI

    asks = make_plan(args.users, args.per_user, seed=args.seed)
    flood = flood_plan(args.flood_count) if args.flood else []
    burst = interleave(asks, flood) if flood else asks
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "bot.log"
        async with FakeTelegramAPI() as api:
            child_args = [sys.executable, __file__, "--child", api.base_url, "--log", str(log_path)]
            proc = await asyncio.create_subprocess_exec(
                *child_args,
                *(["--paced"] if args.paced else []),
                cwd=ROOT,
                stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT), "PTB_TIMEDELTA": "1", "HF_HUB_OFFLINE": "1"},
            )
            try:
                catalog = await CatalogStore(Path(tmp) / "catalog.sqlite").load()
                expected = await expectations(catalog, burst)
                await api.wait_call("getUpdates", timeout=60)
                await asyncio.sleep(0.5)  # let setMyCommands finish
                tally = Tally(api, pos=len(api.exchanges))
                updates = [api.make_message(a.text, chat_id=a.chat, language_code=a.lang) for a in burst]
                injected: list[str] = []
                injector = asyncio.create_task(inject_failures(api, tally, len(burst), injected)) if args.fail else None
                pushed_at: dict[int, list[float]] = defaultdict(list)
                start = time.monotonic()
                for a, update in zip(burst, updates, strict=True):
                    pushed_at[a.chat].append(time.monotonic())
                    api.push_update(update)
                verdict, last = await wait_for_responses(tally, burst, expected, args.timeout, args.grace)
                if injector is not None:
                    injector.cancel()
                verdict = verify(burst, expected, tally, pushed_at)
                hwm, rss = vm_kib(proc.pid, "VmHWM"), vm_kib(proc.pid, "VmRSS")
            finally:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                out, _ = await asyncio.wait_for(proc.communicate(), 30)
        stats = json.loads(out.decode().strip().splitlines()[-1])
        bot_log = log_path.read_text()
    report(args, burst, flood, verdict, tally, last - start, hwm, rss, stats, injected, bot_log)


def report(
    args: argparse.Namespace,
    burst: list[Ask],
    flood: list[Ask],
    verdict: Verdict,
    tally: Tally,
    elapsed: float,
    hwm: int,
    rss: int,
    stats: dict,
    injected: list[str],
    bot_log: str,
) -> None:
    others = [x for chat, xs in verdict.latencies.items() if chat != FLOODER for x in xs]
    responses = verdict.answered + verdict.slow_downs + verdict.apologies
    mode = ", ".join(m for m, on in (("--fail", args.fail), ("--flood", args.flood), ("--paced", args.paced)) if on)
    print(
        f"burst: {len(burst)} questions from {args.users} users x {args.per_user}"
        + (f" + 1 flooder x {len(flood)}" if flood else "")
        + f" ({mode or 'clean'}), all queued at once"
    )
    print(f"  distinct questions   {len({(a.text, a.lang) for a in burst})}")
    print(
        f"  responses            {responses} ({verdict.answered} answers, {verdict.slow_downs} slow-downs, "
        f"{verdict.apologies} apologies), {tally.count()} messages accepted"
    )
    print(f"  answers/s            {responses / elapsed:8.1f}  (questions answered per second, {elapsed:.2f} s)")
    print(
        f"  latency p50 / p99    {statistics.median(others) * 1000:8.1f} / {percentile(others, 0.99) * 1000:.1f} ms"
        + ("  (everyone but the flooder)" if flood else "")
    )
    if flood:
        mine = verdict.responses(FLOODER)
        fl = verdict.latencies.get(FLOODER, [])
        print(
            f"  flooder              {mine['answers']} answers, {mine['slow_downs']} slow-downs, "
            f"{mine['apologies']} apologies of {len(flood)}; its p50 {statistics.median(fl) * 1000:.1f} ms"
        )
        others_slow = sum(c["slow_downs"] for chat, c in verdict.per_chat.items() if chat != FLOODER)
        print(f"  others slowed down   {others_slow}")
    print(
        f"  bot RSS              {hwm / 1024:8.1f} MiB peak (VmHWM), {rss / 1024:.1f} MiB at the end; "
        f"bot CPU {stats['cpu_s']:.2f} s total"
    )
    failed = Counter(status for status, _, _ in tally.failed)
    print(f"  failures injected    {', '.join(injected) if injected else 'none'}; sends refused {dict(failed) or 0}")
    print(
        f"  retries seen         {tally.retried} (a refused message sent again); bot log: "
        f"{bot_log.count('Rate limit hit. Retrying')} limiter retries, "
        f"{bot_log.count('Rate limit hit after maximum')} given up, {bot_log.count('failed')} failed updates"
    )
    lost = [(s, c, t[:40]) for s, c, t in tally.failed if s != 429]
    if lost:
        print(f"  not retried          {len(lost)} sends refused with 5xx: {lost[:3]}")
    ok = verdict.exactly_once
    print(
        f"  exactly once         {'yes' if ok else 'NO'}: {verdict.missing} missing, {verdict.duplicates} "
        f"duplicates, {verdict.incomplete} card parts missing (after a {args.grace:g} s grace period)"
    )
    for problem in verdict.problems:
        print(f"    {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--per-user", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--fail", action="store_true", help="inject 429s and 500s on sendMessage mid-burst")
    parser.add_argument("--flood", action="store_true", help="one more user sends --flood-count questions")
    parser.add_argument("--flood-count", type=int, default=500)
    parser.add_argument("--paced", action="store_true", help="keep AIORateLimiter's 30/s production pacing")
    parser.add_argument("--grace", type=float, default=2.0, help="seconds to wait for late duplicates")
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--child", metavar="BASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(args.child, args.paced, args.log or os.devnull))
    else:
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
