"""The judging engine: cache lookup, pre-flight estimate, asyncio scheduling with
per-provider flow control, retries, parsing, incremental caching, one row per trial.

Flow for a batch of (trial_id, Request):
 1. keys = Request.cache_key(fingerprint); cached keys are replayed (and re-parsed
    with the current parser, so parser fixes never cost a call);
 2. pre-flight: calls (new vs cached), unsupported requests, estimated tokens and
    cost, logged before any paid request;
 3. new unique keys go to `concurrency` workers; each attempt passes the adaptive
    concurrency gate (halved on 429, Retry-After pauses every worker) and the
    request/token buckets; 5xx/timeouts/broken bodies retry with capped
    exponential backoff and jitter; after `max_attempts` the row is `error` with
    the last reason;
 4. every answered response is committed to the cache the moment it arrives.

Across processes sharing the cache: each new request is claimed with a lease
before it is sent (a request another live process has in flight is waited for and
its answer reused, never sent twice), and each paid call reserves its estimated
cost in the run's spend ledger together with the budget check, so a budget
reached mid-run stops new calls (status `budget`) while everything answered stays
cached. Every attempt's outcome is appended to `<cache_dir>/judge/attempts/<judge>.jsonl`,
which survives reruns.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
import wave
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeaudit.io import sha256_json
from judgeaudit.judges.adapters.base import (
    Adapter,
    PermanentError,
    Reply,
    TransientError,
    redact_value,
)
from judgeaudit.judges.cache import DEFAULT_SCOPE, ResponseCache, new_owner
from judgeaudit.judges.limits import AdaptiveConcurrency, Backoff, TokenBucket
from judgeaudit.judges.parse import parse_response
from judgeaudit.judges.request import AudioIntegrityError, Request, load_request_audio

log = logging.getLogger("judgeaudit.judges")


class ReplayMiss(RuntimeError):
    """A request not in the response cache while replaying (no call was made)."""


@dataclass
class EngineOptions:
    concurrency: int = 8
    requests_per_min: float = 0.0  # 0 = unlimited
    tokens_per_min: float = 0.0
    max_attempts: int = 5
    backoff: Backoff = field(default_factory=Backoff)
    timeout_s: float = 120.0  # hard wall-clock bound per attempt (on top of the HTTP timeouts)
    # wall-clock bound of one call of a judge run in a worker thread (`provider:
    # python`): the call is abandoned after it, its thread left to finish on its own
    fn_timeout_s: float = 120.0
    # longest answer kept (characters); a longer one is stored once, cut to this
    # length with a marker, status `too_long` (judges.panel.<judge>.max_answer_chars)
    max_answer_chars: int = 200_000
    audio_root: str | Path = "."
    # folders request audio must resolve into (None: $JUDGEAUDIT_AUDIO_ROOTS, which the
    # workflow sets to data/, results/ and the configured corpus folders; unset: any)
    audio_roots: list[Path] | None = None
    progress: bool = True
    seed: int = 0  # jitter only; never affects answers
    run_id: str = ""  # spend-ledger run (JUDGEAUDIT_RUN_ID); "" = one per engine
    # the study whose total spend the budgets bound, over all its runs ("": pinned
    # JUDGEAUDIT_BUDGET_SCOPE, else the latest pre-flight's for this judge, else default)
    budget_scope: str = ""
    budget_usd: float | None = None  # per study scope, all judges (judges.budget_usd)
    judge_cap_usd: float | None = None  # per study scope, this judge (panel.<judge>.budget_usd)
    lease_ttl_s: float = 30.0  # lease lifetime; renewed every ttl/3 while in flight
    poll_s: float = 0.1  # how often a request leased elsewhere is checked
    attempts_log: str | Path | None = None  # per-judge JSONL of every attempt
    replay: bool = False  # answer only from the cache; a miss is an error, never a call

    @classmethod
    def from_spec(cls, spec: dict[str, Any], **overrides: Any) -> EngineOptions:
        opts = cls(
            concurrency=int(spec.get("concurrency", 8)),
            requests_per_min=float(spec.get("requests_per_min", 0) or 0),
            tokens_per_min=float(spec.get("tokens_per_min", 0) or 0),
            max_attempts=int(spec.get("max_attempts", 5)),
            backoff=Backoff(float(spec.get("backoff_base_s", 1.0)),
                            float(spec.get("backoff_cap_s", 60.0))),
            timeout_s=float(spec.get("timeout_s", 120.0)) + 5.0,
            fn_timeout_s=float(spec.get("timeout_s", 120.0)),
            max_answer_chars=int(spec.get("max_answer_chars", MAX_ANSWER_CHARS)),
        )
        for k, v in overrides.items():
            setattr(opts, k, v)
        return opts


MAX_ANSWER_CHARS = 200_000
TRUNCATION_MARKER = "\n[judgeaudit: answer truncated: {n} characters, max_answer_chars={cap}]"


def fingerprint(adapter: Adapter) -> str:
    """Judge identity entering every cache key: provider + pinned model id +
    output-affecting settings (never keys, URLs, limits or prices)."""
    return "judge-v1:" + sha256_json({"provider": adapter.provider,
                                      **adapter.fingerprint_fields()})


@dataclass
class Stats:
    total: int = 0
    cached: int = 0
    new: int = 0
    unsupported: int = 0
    sent: int = 0  # HTTP/judge attempts made
    errors: int = 0
    budget_stopped: int = 0  # requests not sent because the budget was reached
    reused_in_flight: int = 0  # answered by another process while we waited
    answered: int = 0
    est_tokens_in: int = 0
    est_tokens_out: int = 0
    est_cost_usd: float = 0.0
    min_concurrency: int = 0


def _audio_seconds(req: Request, root: Path) -> float:
    total = 0.0
    for part in req.audio_parts:
        if not part.path:
            continue
        p = Path(part.path)
        p = p if p.is_absolute() else root / p
        try:
            with wave.open(str(p), "rb") as w:
                total += w.getnframes() / float(w.getframerate() or 1)
        except (OSError, wave.Error, EOFError):
            total += p.stat().st_size / 32000.0 if p.exists() else 0.0
    return total


def _record(reply: Reply, attempts: int, latency: float,
            max_chars: int = MAX_ANSWER_CHARS) -> dict[str, Any]:
    """The cache record of one reply; an answer over `max_chars` characters is cut to
    them with a marker and flagged (`answer_chars`: its full length)."""
    text = reply.raw_text
    rec = {"raw_text": text, "refusal": bool(reply.refusal), "usage": reply.usage,
           "model_version": reply.model_version, "attempts": attempts,
           "latency_s": round(latency, 4)}
    if isinstance(text, str) and len(text) > max_chars:
        rec["raw_text"] = text[:max_chars] + TRUNCATION_MARKER.format(n=len(text), cap=max_chars)
        rec["answer_chars"] = len(text)
        rec["status"] = "too_long"
    return rec


def _row(trial_id: str, key: str, judge: str, rec: dict[str, Any], request: Request,
         cache_hit: bool) -> dict[str, Any]:
    if rec.get("status") in NOT_ANSWERED:
        parsed, status, error, reasoning = None, rec["status"], rec.get("error"), None
    elif rec.get("status") == "too_long" or rec.get("answer_chars"):
        # stored once: the cut text in raw_text, nothing parsed out of it
        parsed, status, reasoning = None, "too_long", None
        error = (f"answer of {rec.get('answer_chars')} characters exceeds "
                 f"max_answer_chars; kept cut with a marker")
    elif rec.get("retry"):  # an empty reply that is not an answer (python judge: None)
        parsed, status, error, reasoning = None, rec["status"], rec.get("error"), None
    else:
        res = parse_response(rec.get("raw_text"), request.answer, rec.get("refusal", False))
        parsed, status, error, reasoning = res.parsed, res.status, res.error, res.reasoning
    return {
        "trial_id": trial_id, "request_key": key, "judge": judge,
        "raw_text": rec.get("raw_text"), "parsed": parsed, "reasoning": reasoning,
        "status": status, "error": error, "attempts": rec.get("attempts", 0),
        "latency_s": rec.get("latency_s"), "usage": rec.get("usage") or {},
        "model_version": rec.get("model_version"), "cache_hit": cache_hit,
    }


def redact_row(row: dict[str, Any], redact) -> dict[str, Any]:
    """Every provider-text field of a row (answer, reasoning, error, model version,
    usage, parsed label, ...) through the judge's redactor, after parsing and
    decoding: the one function every row passes before it is returned or written."""
    return redact_value(row, redact)


NOT_ANSWERED = ("error", "budget", "unsupported")
RETRYABLE = ("error", "budget")
"""Row statuses that are no answer of the judge; `error` and `budget` are retried
by the next run (never cached), `unsupported` is final."""

_USAGE_FIELDS = (("prompt_tokens", "completion_tokens"),
                 ("promptTokenCount", "candidatesTokenCount"),
                 ("inputTokens", "outputTokens"))  # Bedrock Converse


def usage_tokens(usage: dict[str, Any]) -> tuple[int, int] | None:
    """(input, output) tokens from a provider usage block, if it has one."""
    for fin, fout in _USAGE_FIELDS:
        if fin in usage or fout in usage:
            return int(usage.get(fin, 0) or 0), int(usage.get(fout, 0) or 0)
    return None


class Engine:
    def __init__(self, adapter: Adapter, cache: ResponseCache, options: EngineOptions):
        self.adapter = adapter
        self.cache = cache
        self.opts = options
        self.fingerprint = fingerprint(adapter)
        self.stats = Stats()
        self.owner = new_owner()
        self.run_id = options.run_id or os.environ.get("JUDGEAUDIT_RUN_ID") or self.owner
        # the scope given (judge jobs: the pre-flight's), else pinned in the environment,
        # else the one the latest pre-flight derived for this judge (callers outside
        # the judge jobs: Study B writer ablation, quality scorer, audits)
        self.budget_scope = (options.budget_scope or os.environ.get("JUDGEAUDIT_BUDGET_SCOPE")
                             or (cache.scope_for(adapter.name) if adapter.paid else None)
                             or DEFAULT_SCOPE)
        self.budget_reason: str | None = None
        self.retry_keys: set[str] = set()
        env_roots = os.environ.get("JUDGEAUDIT_AUDIO_ROOTS")
        self.audio_roots = options.audio_roots if options.audio_roots is not None else (
            [Path(p) for p in env_roots.split(os.pathsep) if p] if env_roots else None)
        self._owned: set[str] = set()

    def _log_attempt(self, key: str, attempt: int, outcome: str, detail: str | None = None,
                     latency: float | None = None) -> None:
        if not self.opts.attempts_log:
            return
        if detail is not None:
            detail = self.adapter.redact(detail)
        line = json.dumps({"time": round(time.time(), 3), "run": self.run_id,
                           "judge": self.adapter.name, "request_key": key,
                           "attempt": attempt, "outcome": outcome,
                           "detail": detail, "latency_s": latency,
                           "owner": self.owner}, sort_keys=True)
        path = Path(self.opts.attempts_log)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)

    def _request_cost(self, req: Request) -> float:
        if not self.adapter.paid:
            return 0.0
        tin, tout = self.adapter.estimate_tokens(req, _audio_seconds(req, Path(self.opts.audio_root)))
        return self.adapter.estimate_cost(tin, tout)

    # ---------- pre-flight ----------
    def preflight(self, items: Sequence[tuple[str, Request]]) -> tuple[dict, dict, Stats]:
        keys = {tid: req.cache_key(self.fingerprint) for tid, req in items}
        cached = self.cache.get_many(keys.values())
        st = Stats(total=len(items))
        todo: dict[str, Request] = {}
        root = Path(self.opts.audio_root)
        for tid, req in items:
            key = keys[tid]
            if key in cached:
                st.cached += 1
            elif self.adapter.unsupported_reason(req):
                st.unsupported += 1
            elif key not in todo:
                todo[key] = req
        st.new = len(todo)
        for req in todo.values():
            tin, tout = self.adapter.estimate_tokens(req, _audio_seconds(req, root))
            st.est_tokens_in += tin
            st.est_tokens_out += tout
        st.est_cost_usd = self.adapter.estimate_cost(st.est_tokens_in, st.est_tokens_out)
        log.info(
            "pre-flight judge=%s provider=%s: %d trials, %d cached, %d new calls, "
            "%d unsupported; est. %d input + %d output tokens, est. cost $%.4f%s",
            self.adapter.name, self.adapter.provider, st.total, st.cached, st.new,
            st.unsupported, st.est_tokens_in, st.est_tokens_out, st.est_cost_usd,
            "" if self.adapter.paid else " (embedded judge, no charge)",
        )
        self.stats = st
        return keys, cached, st

    # ---------- one request ----------
    async def _one(self, key: str, req: Request, gate: AdaptiveConcurrency,
                   rpm: TokenBucket, tpm: TokenBucket, rng: random.Random,
                   est_tokens: int) -> dict[str, Any]:
        try:
            loaded = load_request_audio(req, self.opts.audio_root, self.audio_roots)
        except AudioIntegrityError as exc:
            self._log_attempt(key, 0, "error", f"audio: {exc}")
            return {"status": "error", "error": f"audio: {exc}", "attempts": 0}
        last = "no attempt made"
        for attempt in range(1, self.opts.max_attempts + 1):
            await gate.acquire()
            ok = False
            try:
                await rpm.take(1)
                await tpm.take(est_tokens)
                self.stats.sent += 1
                t0 = time.perf_counter()
                if self.adapter.abandonable:
                    # in a worker thread, abandoned after timeout_s: the event loop
                    # (and the lease heartbeat) runs on while the call does
                    try:
                        reply = await asyncio.wait_for(
                            _in_thread(self.adapter.complete_sync, loaded),
                            self.opts.fn_timeout_s)
                    except TimeoutError:
                        raise TransientError(
                            f"timeout: no reply within timeout_s={self.opts.fn_timeout_s:g} s "
                            f"(the call was abandoned)") from None
                elif self.adapter.blocking:
                    reply = self.adapter.complete_sync(loaded)
                else:
                    reply = await asyncio.wait_for(self.adapter.complete(loaded),
                                                   self.opts.timeout_s)
                ok = True
                # answers pass the same redactor as errors: a provider echoing the key
                # in a 200 body must not put it into the cache, responses or bundles
                rec = redact_value(_record(reply, attempt, time.perf_counter() - t0,
                                           self.opts.max_answer_chars), self.adapter.redact)
                if rec.get("status") == "too_long":
                    log.warning("judge=%s request %s: answer of %d characters cut to "
                                "max_answer_chars=%d (status too_long)", self.adapter.name,
                                key[:12], rec["answer_chars"], self.opts.max_answer_chars)
                elif reply.raw_text is None and not reply.final:
                    # no reply at all (a python judge's None): counted `empty`, not an
                    # answer: not cached, asked again by the next run like an error
                    rec.update(status="empty", retry=True,
                               error="the judge returned no reply (None); not cached, "
                                     "asked again on the next run")
                    self._log_attempt(key, attempt, "empty", rec["error"], rec["latency_s"])
                    return rec
                else:
                    rec["status"] = parse_response(rec["raw_text"], req.answer,
                                                   reply.refusal).status
                self.cache.put(key, self.adapter.name, rec)
                self._log_attempt(key, attempt, rec["status"], None, rec["latency_s"])
                return rec
            except TimeoutError:
                last, retry_after, limited = "timeout (wall clock)", None, False
            except TransientError as exc:
                last, retry_after, limited = exc.reason, exc.retry_after, exc.rate_limited
            except PermanentError as exc:
                reason = self.adapter.redact(str(exc))
                self._log_attempt(key, attempt, "error", reason)
                return {"status": "error", "error": reason, "attempts": attempt}
            except Exception as exc:  # a bug in an embedded judge: keep the row, say why
                reason = self.adapter.redact(f"{type(exc).__name__}: {exc}")
                self._log_attempt(key, attempt, "error", reason)
                return {"status": "error", "attempts": attempt, "error": reason}
            finally:
                await gate.release(ok)
            self._log_attempt(key, attempt, "retry" if attempt < self.opts.max_attempts
                              else "error", last)
            if limited:
                await gate.rate_limited(retry_after)
            if attempt < self.opts.max_attempts:
                await asyncio.sleep(self.opts.backoff.delay(attempt, rng, retry_after))
        return {"status": "error", "attempts": self.opts.max_attempts,
                "error": f"gave up after {self.opts.max_attempts} attempts: {last}"}

    # ---------- batch ----------
    async def arun(self, items: Sequence[tuple[str, Request]]) -> list[dict[str, Any]]:
        keys, cached, st = self.preflight(items)
        by_key: dict[str, Request] = {}
        results: dict[str, dict[str, Any]] = {}
        for tid, req in items:
            key = keys[tid]
            if key in cached:
                continue
            reason = self.adapter.unsupported_reason(req)
            if reason:
                results[key] = {"status": "unsupported", "error": reason, "attempts": 0}
            else:
                by_key.setdefault(key, req)
        if by_key and self.opts.replay:
            missing = [(tid, keys[tid]) for tid, _ in items if keys[tid] in by_key]
            raise ReplayMiss(
                f"replay mode: judge {self.adapter.name!r} has no cached response for "
                f"{len(by_key)} request(s) (not called): " + ", ".join(
                    f"trial {t} request_key {k}" for t, k in missing[:5])
                + (" ..." if len(missing) > 5 else "")
                + "; import the bundle (judgeaudit import-responses) or turn replay off")
        if by_key and self.adapter.paid:
            self.adapter.api_key()  # missing credentials: fail before any call
        if by_key:
            await self._run_new(by_key, results)
        # keys whose row is no answer to keep (a python judge's None): the shard is
        # not written, so the next run asks them again, like an error
        self.retry_keys = {k for k, r in results.items() if r.get("retry")}
        self.stats.errors = sum(1 for r in results.values() if r["status"] == "error")
        self.stats.budget_stopped = sum(1 for r in results.values() if r["status"] == "budget")
        rows = []
        for tid, req in items:
            key = keys[tid]
            hit = key in cached
            rec = cached[key] if hit else results[key]
            rows.append(redact_row(_row(tid, key, self.adapter.name, rec, req,
                                        hit or bool(rec.get("reused_in_flight"))),
                                   self.adapter.redact))
        self.stats.answered = sum(1 for r in rows if r["status"] not in NOT_ANSWERED)
        log.info("judge=%s done: %d rows, %d cache hits, %d answered by another process, "
                 "%d calls sent, %d errors, %d not sent (budget), %d unsupported, "
                 "lowest concurrency %d", self.adapter.name, len(rows), st.cached,
                 st.reused_in_flight, st.sent, self.stats.errors, self.stats.budget_stopped,
                 st.unsupported, st.min_concurrency)
        return rows

    async def _run_new(self, by_key: dict[str, Request], results: dict) -> None:
        opts = self.opts
        conc = 1 if self.adapter.blocking else max(1, opts.concurrency)
        gate = AdaptiveConcurrency(conc)
        rpm, tpm = TokenBucket(opts.requests_per_min), TokenBucket(opts.tokens_per_min)
        rng = random.Random(opts.seed)
        queue: list[str] = list(by_key)
        queue.reverse()
        bar = None
        if opts.progress:
            from tqdm import tqdm

            bar = tqdm(total=self.stats.total, initial=self.stats.cached + self.stats.unsupported,
                       desc=f"judge {self.adapter.name}", unit="req", dynamic_ncols=True,
                       mininterval=1.0)
        errors = 0
        root = Path(opts.audio_root)

        waiting: list[str] = []  # leased by another live process: wait for its answer
        cache = self.cache
        ttl = float(opts.lease_ttl_s)

        def done(key: str, rec: dict[str, Any]) -> None:
            nonlocal errors
            results[key] = rec
            if rec["status"] == "error":
                errors += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(cached=self.stats.cached, errors=errors,
                                conc=gate.limit, refresh=False)

        async def worker() -> None:
            while queue or waiting:
                if queue:
                    key = queue.pop()
                else:
                    key = waiting.pop(0)
                    await asyncio.sleep(opts.poll_s)
                req = by_key[key]
                if self.budget_reason is not None:
                    done(key, {"status": "budget", "error": self.budget_reason, "attempts": 0})
                    continue
                state = cache.claim(key, self.owner, ttl)
                if state == "answered":  # another process answered it meanwhile
                    rec = dict(cache.get(key) or {}, reused_in_flight=True)
                    self.stats.reused_in_flight += 1
                    self._log_attempt(key, 0, "reused", "answered by another process")
                    done(key, rec)
                    continue
                if state == "busy":
                    waiting.append(key)
                    continue
                self._owned.add(key)
                try:
                    if self.adapter.paid:
                        cost = self._request_cost(req)
                        reason = cache.reserve(self.run_id, self.adapter.name, key, cost,
                                               opts.budget_usd, opts.judge_cap_usd,
                                               scope=self.budget_scope)
                        if reason is not None:
                            self.budget_reason = reason
                            self._log_attempt(key, 0, "budget", reason)
                            done(key, {"status": "budget", "error": reason, "attempts": 0})
                            continue
                    est = 0
                    if opts.tokens_per_min:
                        est = sum(self.adapter.estimate_tokens(req, _audio_seconds(req, root)))
                    rec = await self._one(key, req, gate, rpm, tpm, rng, est)
                    if self.adapter.paid:
                        used = usage_tokens(rec.get("usage") or {})
                        if rec.get("status") == "error":
                            # the call ended without a bill: its reservation is freed
                            cache.unreserve(self.run_id, self.adapter.name, key)
                        elif used is not None:
                            cache.settle(self.run_id, self.adapter.name, key,
                                         self.adapter.estimate_cost(*used))
                    done(key, rec)
                finally:
                    self._owned.discard(key)
                    cache.release(key, self.owner)

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(max(0.05, ttl / 3.0))
                cache.renew(list(self._owned), self.owner, ttl)

        beat = asyncio.create_task(heartbeat())
        try:
            await asyncio.gather(*(worker() for _ in range(conc)))
        finally:
            beat.cancel()
            for key in list(self._owned):
                cache.release(key, self.owner)
            if bar is not None:
                bar.close()
            await self.adapter.aclose()
        self.stats.min_concurrency = gate.min_seen

    def run(self, items: Sequence[tuple[str, Request]]) -> list[dict[str, Any]]:
        return asyncio.run(self.arun(items))


def _in_thread(fn, *args) -> asyncio.Future:
    """`fn(*args)` in a daemon thread of its own; the future may be abandoned (a
    timeout): the thread then finishes unobserved and never holds up the process's
    exit, unlike an executor's thread, which asyncio.run would wait for."""
    import threading

    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not fut.done():
            (fut.set_result if ok else fut.set_exception)(value)

    def target() -> None:
        try:
            value, ok = fn(*args), True
        except BaseException as exc:  # handed to the awaiting call
            value, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    threading.Thread(target=target, daemon=True, name="judge-call").start()
    return fut
