"""Flow control for one provider inside one process: adaptive concurrency (halved
on HTTP 429, grown back additively on success), a global pause honouring
Retry-After, request/token rate limits (token buckets), and capped exponential
backoff with jitter."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass


class AdaptiveConcurrency:
    """At most `limit` requests in flight; `limit` starts at `maximum`, halves on a
    rate-limit signal (never below 1) and grows by one after `limit` successes."""

    def __init__(self, maximum: int):
        self.maximum = max(1, int(maximum))
        self.limit = self.maximum
        self.in_flight = 0
        self.pause_until = 0.0
        self._ok_streak = 0
        self._cond = asyncio.Condition()
        self.min_seen = self.maximum

    async def acquire(self) -> None:
        async with self._cond:
            while True:
                wait = self.pause_until - time.monotonic()
                if wait > 0:
                    try:
                        await asyncio.wait_for(self._cond.wait(), timeout=wait)
                    except TimeoutError:
                        pass
                    continue
                if self.in_flight < self.limit:
                    self.in_flight += 1
                    return
                await self._cond.wait()

    async def release(self, ok: bool = True) -> None:
        async with self._cond:
            self.in_flight -= 1
            if ok:
                self._ok_streak += 1
                if self._ok_streak >= self.limit and self.limit < self.maximum:
                    self.limit += 1
                    self._ok_streak = 0
            self._cond.notify_all()

    async def rate_limited(self, retry_after: float | None) -> None:
        async with self._cond:
            self.limit = max(1, self.limit // 2)
            self.min_seen = min(self.min_seen, self.limit)
            self._ok_streak = 0
            if retry_after:
                self.pause_until = max(self.pause_until, time.monotonic() + retry_after)
            self._cond.notify_all()


class TokenBucket:
    """`rate_per_min` units per minute with a one-minute burst; rate <= 0 disables."""

    def __init__(self, rate_per_min: float):
        self.rate = float(rate_per_min) / 60.0
        self.capacity = float(rate_per_min)
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self._lock = asyncio.Lock()

    async def take(self, amount: float = 1.0) -> None:
        if self.rate <= 0:
            return
        amount = min(amount, self.capacity)
        async with self._lock:
            while True:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
                self.stamp = now
                if self.tokens >= amount:
                    self.tokens -= amount
                    return
                await asyncio.sleep((amount - self.tokens) / self.rate)


@dataclass
class Backoff:
    base_s: float = 1.0
    cap_s: float = 60.0
    jitter: float = 0.5  # delay * uniform(1 - jitter, 1 + jitter)

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Delay before retry number `attempt` (1-based); Retry-After wins when given."""
        if retry_after is not None:
            return max(0.0, float(retry_after)) * (1.0 + rng.uniform(0, 0.1))
        raw = min(self.cap_s, self.base_s * 2 ** (attempt - 1))
        return min(self.cap_s, raw * rng.uniform(1 - self.jitter, 1 + self.jitter))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
