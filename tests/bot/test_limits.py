"""Rate limits: per key, sliding window, bounded memory, other users unaffected."""

from __future__ import annotations

from bot.users.limits import Limits, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_allows_up_to_the_limit_then_refuses_until_the_window_moves():
    clock = Clock()
    limiter = RateLimiter(3, clock)
    assert [limiter.allow("u") for _ in range(4)] == [True, True, True, False]
    assert limiter.retry_after("u") == 60.0
    clock.now += 30
    assert not limiter.allow("u") and limiter.retry_after("u") == 30.0
    clock.now += 30
    assert limiter.allow("u")


def test_one_flooding_user_does_not_block_others():
    limits = Limits.per_minute(user=5, chat=1000, expensive=2, clock=Clock())
    assert sum(limits.check("tg:1", "") == 0 for _ in range(100)) == 5
    assert limits.check("tg:2", "") == 0


def test_chat_limit_applies_across_users():
    limits = Limits.per_minute(user=100, chat=3, expensive=2, clock=Clock())
    answered = [limits.check(f"tg:{i}", "tg:-100") == 0 for i in range(5)]
    assert answered == [True, True, True, False, False]


def test_memory_is_bounded(monkeypatch):
    monkeypatch.setattr("bot.users.limits.MAX_KEYS", 10)
    limiter = RateLimiter(1, Clock())
    for i in range(50):
        limiter.allow(f"u{i}")
    assert len(limiter._events) == 10


def test_only_the_first_refusal_in_a_window_gets_a_slow_down_card():
    clock = Clock()
    limits = Limits.per_minute(user=1, chat=100, expensive=1, clock=clock)
    assert limits.check("tg:1", "") == 0
    refused = [limits.check("tg:1", "") > 0 for _ in range(300)]
    assert all(refused)
    told = [limits.first_notice("tg:1") for _ in range(300)]
    assert told.count(True) == 1 and told[0]
    assert limits.first_notice("tg:2")  # others are told on their own
    clock.now += 61
    assert limits.first_notice("tg:1")  # a new window, one more card


async def test_queued_updates_are_served_round_robin_across_users():
    """Under global pacing the order of answers is the order of waiting: one flooder must not go first."""
    from types import SimpleNamespace

    from bot.adapters.telegram.poller import FairQueue

    queue = FairQueue()
    for i in range(300):
        queue.put("flooder", SimpleNamespace(update_id=i, who="flooder"))
    for user in ("a", "b", "c"):
        queue.put(user, SimpleNamespace(update_id=1000, who=user))
    served = [(await queue.get()).who for _ in range(8)]
    assert served[:4] == ["flooder", "a", "b", "c"]  # everyone's next question before the flooder's second
    assert served[4:] == ["flooder"] * 4 and len(queue) == 300 - 5
