"""The question mix and the exactly-once accounting of a Telegram burst, shared by bench/burst.py and
tests/bot/test_burst.py (neither imports the other)."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

TOKEN = "123456:BURST-token"
FIRST_CHAT = 2_000_000
FLOODER = 1_999_999
SENDS = ("sendMessage", "sendPhoto", "sendDocument")
DOCUMENT = "<document>"
PHOTO = "<photo>"
MAX_CHAT_MESSAGES = 3  # bot.adapters.telegram.bot.MAX_CHAT_MESSAGES: a longer card is its first message + a document

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
    from fitbot_fakes.telegram_api import parse_html

    return parse_html(html_text)[0]


def card_texts(reply: Any) -> list[str]:
    """The plain texts of the messages the adapter sends for ``reply`` with charts off."""
    from bot.render.telegram_html import to_telegram

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
    from bot.cards import notices as cards

    alternatives = []
    for lang in ("en", "de"):
        text = card_texts(cards.slow_down_card(lang, 987654))[0]
        alternatives.append(re.escape(text).replace("987654", r"\d+"))
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


def apology_texts() -> set[str]:
    """The adapter's apology after a failed update, in both languages."""
    from bot.adapters.telegram.parts import say

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
    _pending_fail: Counter[tuple[Any, Any]] = field(default_factory=Counter)  # (chat_id, text) params
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
                    # a card short enough for a photo caption arrives as the chart with the card as caption
                    shown = e.response.get("text") or e.response.get("caption") or text
                    self.sent[int(e.response["chat"]["id"])].append(Sent(shown, e.at))
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
    silenced: int = 0  # refusals after the chat's one slow-down card of the window: silent by design
    duplicates: int = 0  # accepted messages beyond what the questions call for
    incomplete: int = 0  # parts of multi-message cards that never arrived
    problems: list[str] = field(default_factory=list)
    latencies: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    per_chat: dict[int, Counter[str]] = field(default_factory=dict)

    @property
    def exactly_once(self) -> bool:
        return self.missing == 0 and self.duplicates == 0 and self.incomplete == 0

    def responses(self, chat: int) -> Counter[str]:
        return self.per_chat.get(chat, Counter())


def verify(
    asks: list[Ask],
    expected: dict[tuple[str, str], list[str]],
    tally: Tally,
    pushed_at: dict[int, list[float]] | None = None,
    limit: int | None = None,
) -> Verdict:
    """Exactly once, per chat: every question has one response (its card, a slow-down or an apology).

    With ``limit`` (questions per user a minute), a chat that asked more gets at most ``limit``
    answers and one slow-down card; its further questions are silent by design (``silenced``).

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
        real: Counter[str] = Counter()
        n_slow, n_sorry = 0, 0
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
        owed_responses = expected_responses(len(chat_asks), limit)
        missing = max(0, owed_responses - responses)
        verdict.silenced += len(chat_asks) - owed_responses
        dup = sum(extra.values()) + max(0, responses - owed_responses)
        verdict.missing += missing
        verdict.duplicates += dup
        # parts of answered cards that never came (cards cut short by a failure count here)
        owed: Counter[str] = Counter()
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


def expected_responses(questions: int, limit: int | None) -> int:
    """Responses a chat asking ``questions`` at once is owed: all, or ``limit`` answers + one slow-down card."""
    return questions if limit is None or questions <= limit else limit + 1


async def wait_for_responses(
    tally: Tally,
    asks: list[Ask],
    expected: dict[tuple[str, str], list[str]],
    timeout: float,
    grace: float,
    limit: int | None = None,
) -> tuple[Verdict, float]:
    """Waits until every question has a response (or ``timeout``), then ``grace`` more; returns the verdict
    and the time the last response arrived."""
    per_chat = Counter(a.chat for a in asks)
    need = sum(expected_responses(n, limit) for n in per_chat.values())
    deadline = time.monotonic() + timeout
    while True:
        tally.update()
        if tally.count() >= need:
            verdict = verify(asks, expected, tally, limit=limit)
            if verdict.answered + verdict.slow_downs + verdict.apologies >= need:
                break
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    last = max((s.at for v in tally.sent.values() for s in v), default=time.monotonic())
    await asyncio.sleep(grace)
    tally.update()
    return verify(asks, expected, tally, limit=limit), last
