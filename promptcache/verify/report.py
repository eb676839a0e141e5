"""``promptcache verify``: replay a trace on a real prefix cache and compare its hits with the best possible.

The trace's requests are sent in recorded order (sessions interleaved as
recorded), one at a time, to a backend (:mod:`promptcache.verify.backends`):
the in-process local engine or an OpenAI-compatible URL. The recorded
assistant turns stay as they are, so one output token per request is enough.

For every request the report has the prompt tokens, the **cached tokens**
the backend reported, the **oracle tokens** (the block-aligned longest prefix
shared with anything computed before: prompts plus generated tokens but the
last; :class:`local_backend.oracle.PrefixTrieOracle`), the TTFT, and the
first divergence from the earlier request (any session) that shares the
longest prefix, classified by the one miss-cause classifier
(:mod:`promptcache.misses.guard`); its token offset is then recounted in the prompt ids
the backend runs (:func:`in_prompt_tokens`), so it counts the same tokens as the
table, whatever the model's tokenizer. What the engine did (evicted a prefix, a chat template that
does not render a layer, a refused request) is an **engine cause** on the request, kept apart
from the classifier's app divergence (:mod:`promptcache.verify.verdict`).

With an ample pool and sequential requests the local engine's hit tokens
equal the oracle's exactly (``hit_vs_oracle == 1.0``).

The app verdict is ``good`` when every miss the classifier sees is benign
(first request, new turn, another cache key, a repeat) and ``bad`` otherwise,
naming the cause that cost the most tokens; the engine verdict lists the engine
causes with what to do about them.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from promptcache.misses.causes import Divergence
from promptcache.misses.guard import classify_requests
from promptcache.misses.prefix_index import common_prefix
from promptcache.trace.requests import read_requests, usable_records
from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceRecord
from promptcache.verify.engines import LOCAL_CAPACITY_ADVICE
from promptcache.verify.replay import BodyError, OracleError, openai_body
from promptcache.verify.verdict import (EngineCause, app_verdict, combined_verdict, engine_verdict, eviction,
                                        failure, oracle_unusable, refusal, template_drop)

WORST = 5
"""Requests listed under "worst" in the summary."""


@dataclass(frozen=True)
class RequestResult:
    """One replayed request. Token counts are tokens of the backend's tokenizer; ``ttft_s`` is seconds.

    ``index`` counts from 0 in trace order; ``divergence`` is the classifier's
    verdict against the earlier requests (the app's cause); ``engine_cause`` is
    what the engine did (:mod:`promptcache.verify.verdict`); ``error`` is set
    (and the counts are 0) when the backend refused the request.
    """

    index: int
    t: float
    session: str
    api: str
    prompt_tokens: int
    cached_tokens: int
    oracle_tokens: int
    ttft_s: float | None
    divergence: Divergence | None = None
    error: str | None = None
    engine_cause: EngineCause | None = None

    @property
    def missed_tokens(self) -> int:
        """Prompt tokens the backend had to compute."""
        return self.prompt_tokens - self.cached_tokens

    def row(self) -> dict[str, Any]:
        """The JSON row of ``--format json``."""
        return {"index": self.index, "session": self.session, "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "oracle_tokens": self.oracle_tokens, "ttft_s": self.ttft_s}


@dataclass
class VerifyReport:
    """The whole replay: per-request results, the backend's identity (``engine``: ``local``, ``promptcache``,
    ``vllm``, ``sglang``, ``llama.cpp``; ``oracle_source``: where the oracle's token ids came from), notes."""

    trace: str
    backend: str
    model: str
    block_size: int
    oracle_exact: bool
    requests: list[RequestResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    engine: str = "local"
    oracle_source: str = "the engine's own chat template and tokenizer"
    capacity_advice: str = LOCAL_CAPACITY_ADVICE

    def totals(self) -> tuple[int, int, int]:
        """(prompt, cached, oracle) tokens summed over the requests."""
        ok = [r for r in self.requests if r.error is None]
        return (sum(r.prompt_tokens for r in ok), sum(r.cached_tokens for r in ok), sum(r.oracle_tokens for r in ok))

    @property
    def errors(self) -> int:
        """Requests the backend refused or failed (their rows count no tokens)."""
        return sum(1 for r in self.requests if r.error is not None)

    @property
    def hit_rate(self) -> float | None:
        """Cached tokens / prompt tokens over the measured requests; None when nothing was measured
        (no request, or every request failed)."""
        prompt, cached, _ = self.totals()
        return cached / prompt if prompt else None

    @property
    def gated_hit_rate(self) -> float | None:
        """The hit rate ``--min-hit-rate`` reads: with an exact oracle, each request's hits count only up to its
        oracle tokens, so a cache warm before the replay (llama.cpp cannot be reset) never passes an app that
        breaks its prefix (newcomer, issue 16); with an approximate oracle, the hit rate. None: nothing measured."""
        ok = [r for r in self.requests if r.error is None]
        prompt = sum(r.prompt_tokens for r in ok)
        if not prompt or not self.oracle_exact:
            return self.hit_rate
        return sum(min(r.cached_tokens, r.oracle_tokens) for r in ok) / prompt

    @property
    def oracle_hit_rate(self) -> float | None:
        """Oracle tokens / prompt tokens over the measured requests; None when nothing was measured."""
        prompt, _, oracle = self.totals()
        return oracle / prompt if prompt else None

    @property
    def hit_vs_oracle(self) -> float | None:
        """Cached tokens / oracle tokens: 1.0 when the oracle finds nothing to reuse and nothing was cached;
        None when nothing was measured, or when the oracle is 0 but the backend cached tokens (its cache was
        warm before the replay: :func:`verify_trace` adds a note), where no ratio is meaningful."""
        prompt, cached, oracle = self.totals()
        if not prompt:
            return None
        if oracle:
            return cached / oracle
        return 1.0 if cached == 0 else None

    def worst(self, n: int = WORST) -> list[RequestResult]:
        """The ``n`` requests that lost the most tokens, unexpected misses first."""
        ranked = sorted((r for r in self.requests if r.error is None),
                        key=lambda r: (r.divergence is None or r.divergence.expected, -r.missed_tokens, r.index))
        return ranked[:n]

    def verdict(self) -> tuple[bool, str]:
        """``(good, text)``: good when the app has no unexpected miss (engine causes do not make the app bad);
        the text is the app verdict, followed by the engine verdict when the engine lost tokens
        (:func:`~promptcache.verify.verdict.combined_verdict`). Not good when nothing was measured."""
        if self.requests and self.errors == len(self.requests):
            return False, f"n/a: every request failed ({self.requests[0].error})"
        app = app_verdict(self.requests)
        return app[0], combined_verdict(app, engine_verdict(self.requests, self.capacity_advice))

    def outcome(self, threshold: float | None = None, allow_failures: bool = False) -> tuple[int, str | None]:
        """``(exit code, error line)`` of a replay gated by ``--min-hit-rate`` ``threshold`` (a fraction).

        2: every request failed; some failed (unless ``allow_failures``: the hit rate then counts only the
        others), or some failed or nothing was measured while a threshold is set (a gate needs every request
        measured); 1: the hit rate is below the threshold; else ``(0, None)``.
        """
        failed, total = self.errors, len(self.requests)
        if total and failed == total:
            return 2, f"every request failed ({self.requests[0].error}); nothing was measured"
        if failed and not allow_failures and threshold is None:
            first = next(r for r in self.requests if r.error is not None)
            return 2, (f"{failed} of {total} requests failed (first: index {first.index}: {first.error[:200]}); "
                       "the hit rate counts only the others: fix the server or the trace (see 'failed') "
                       "or pass --allow-failures")
        if threshold is None:
            return 0, None
        if failed:
            return 2, f"{failed} of {total} requests failed (see 'failed'); --min-hit-rate needs every request measured"
        if self.hit_rate is None:
            return 2, "the trace holds no request with prompt tokens; nothing was measured"
        rate = self.gated_hit_rate
        if rate < threshold:
            capped = (f" (hits above the oracle not counted: {self.hit_rate:.1%} measured; the cache was warm before "
                      "the replay)") if rate < self.hit_rate else ""
            return 1, f"hit rate {rate:.1%} is below --min-hit-rate {threshold:.1%}{capped}"
        return 0, None

    def summary(self) -> dict[str, Any]:
        """Totals, rates, the verdict and the worst requests (JSON-ready: rates that cannot be measured are
        None, never NaN or infinity)."""
        prompt, cached, oracle = self.totals()
        ttfts = [r.ttft_s for r in self.requests if r.ttft_s is not None]
        good, verdict = self.verdict()
        app = app_verdict(self.requests) if self.requests and self.errors < len(self.requests) else (good, verdict)
        return {
            "requests": len(self.requests), "prompt_tokens": prompt, "cached_tokens": cached,
            "hit_rate": self.hit_rate, "oracle_tokens": oracle, "oracle_hit_rate": self.oracle_hit_rate,
            "hit_vs_oracle": self.hit_vs_oracle, "tokens_saved": cached,
            "ttft_p50_s": statistics.median(ttfts) if ttfts else None,
            "errors": self.errors,
            "trace": self.trace, "backend": self.backend, "model": self.model, "block_size": self.block_size,
            "oracle": "exact" if self.oracle_exact else "approximate", "oracle_source": self.oracle_source,
            "engine": self.engine,
            "good": good, "verdict": verdict, "app_verdict": app[1],
            "engine_verdict": engine_verdict(self.requests, self.capacity_advice),
            "engine_causes": [{"index": r.index, **r.engine_cause.to_dict()} for r in self.requests
                              if r.engine_cause is not None],
            "worst": [{"index": r.index, "session": r.session, "missed_tokens": r.missed_tokens,
                       "cause": r.divergence.cause if r.divergence else None,
                       "expected": r.divergence.expected if r.divergence else None,
                       "path": r.divergence.path if r.divergence else None,
                       "summary": r.divergence.summary() if r.divergence else None} for r in self.worst()],
            "failed": [{"index": r.index, "session": r.session, "error": r.error}
                       for r in self.requests if r.error is not None],
            "notes": list(self.notes),
        }

    def to_dict(self) -> dict[str, Any]:
        """``{"requests": [row, ...], "summary": {...}}``: the ``--format json`` document."""
        return {"requests": [r.row() for r in self.requests], "summary": self.summary()}


def in_prompt_tokens(divergence: Divergence | None, prompt: Sequence[int],
                     prompts: Mapping[int, Sequence[int]]) -> Divergence | None:
    """``divergence`` with its token figures counted in the backend's prompt ids instead of the classifier's.

    The classifier (:mod:`promptcache.misses.guard`) finds the divergence on its own
    ChatML/cl100k rendering; the table counts the backend's tokens (another model's
    tokenizer with ``--model``). So ``token_offset`` and ``common_prefix_tokens``
    become the common prefix of ``prompt`` with the prompt ids of the earlier request
    the classifier compared with (``prompts[earlier_index]``), and ``prompt_tokens``
    becomes ``len(prompt)`` (generation prompt included, as in the table).
    ``static_after_divergence`` stays in the classifier's tokens.

    Args:
        divergence: the classifier's verdict (None: returned as is).
        prompt: this request's prompt ids, as the backend renders it (length P tokens).
        prompts: request index -> prompt ids of the requests the backend rendered.

    Returns:
        The divergence recounted; unchanged when the earlier request has no prompt ids (the backend
        refused it): its figures then stay in the classifier's tokens.
    """
    if divergence is None:
        return None
    earlier = divergence.earlier_index
    if earlier is None:
        return dataclasses.replace(divergence, prompt_tokens=len(prompt))
    if earlier not in prompts:
        return divergence
    shared = common_prefix(prompt, prompts[earlier])
    return dataclasses.replace(divergence, token_offset=shared, common_prefix_tokens=shared,
                               prompt_tokens=len(prompt))


ProgressFn = Callable[[int, int, RequestResult], None]


def verify_trace(trace: str | os.PathLike[str] | Iterable[TraceRecord], backend: Any, *,
                 strict: bool = False, reset_cache: bool = False, progress: ProgressFn | None = None,
                 name: str | None = None) -> VerifyReport:
    """Replay ``trace`` on ``backend`` in order and measure cache hits against the oracle.

    Args:
        trace: a trace path or records (time order).
        backend: from :func:`make_backend`, or any object with ``name``,
            ``model``, ``block_size``, ``oracle_exact``, ``prompt_ids(api,
            body)`` and ``run(api, body, prompt_ids) -> Replay``.
        strict: a malformed trace line or request body raises ``TraceFormatError`` instead of being skipped
            with a warning. Records are picked as ``simulate`` and ``diff`` pick them
            (:func:`promptcache.trace.requests.usable_records`): a body that is not a request body of
            its API (no ``messages``, an OpenAI body labelled ``anthropic.messages``) is reported
            ``FILE:LINE: malformed request body: ...`` and skipped; the body's ``model`` is not needed.
        reset_cache: empty the backend's prefix cache first (``backend.reset_cache()``), so
            hits come from this replay only; a note says when that was refused.
        progress: called after each request with ``(done, total, result)``.
        name: the trace's name in the report (default: the path, or ``"<records>"``).

    Returns:
        The report; a request the backend refuses becomes a row with ``error`` set.

    Raises:
        TraceFormatError: a malformed line or body with ``strict``.
        EmptyTraceError: no usable request (an empty trace, or every line or body skipped as malformed).
        BackendError: the backend cannot be used at all (an unreachable server refusing the cache reset).
    """
    from local_backend.oracle import PrefixTrieOracle

    if isinstance(trace, (str, os.PathLike)):
        name = name or os.fspath(trace)
        records = read_requests(trace, strict=strict, model_given=True)
    else:
        name = name or "<records>"
        skip = SkippedLines()
        records = list(usable_records(trace, strict=strict, on_problem=skip, source=name, model_given=True))
        if not records:
            raise EmptyTraceError(name, skip.count)
    unclassified: list[str] = []

    def not_classified(index: int, exc: ValueError) -> None:  # still replayed: the backend may render it
        record = records[index]
        where = f"{os.path.basename(name)}:{record.line}" if record.line is not None else f"index {index}"
        unclassified.append(f"{where}: request {index} could not be compared with earlier requests ({exc})")

    divergences = classify_requests(records, on_error=not_classified)
    oracle = PrefixTrieOracle(backend.block_size)
    report = VerifyReport(name, backend.name, backend.model, backend.block_size, backend.oracle_exact,
                          engine=getattr(backend, "engine_name", "local"))
    if getattr(backend, "capacity_advice", None):
        report.capacity_advice = backend.capacity_advice
    report.notes.extend(unclassified)
    reset_refused = None
    if reset_cache:
        done, reset_refused = backend.reset_cache()
        if not done:
            report.notes.append(f"{backend.name} did not reset its prefix cache ({reset_refused}); hits may "
                                "include earlier requests")
    prompts: dict[int, list[int]] = {}  # the prompt ids of each request the backend ran
    reference = ChatMLReference()  # what could be reused with every layer rendered (template_drops_layer)
    refusals = tuple(getattr(backend, "refusals", ()))

    def measure(index: int, record: TraceRecord, divergence: Divergence | None) -> RequestResult:
        """One request: tokenised for the oracle, run, compared; a failure becomes its row's ``error``."""
        def failed(error: str, cause: EngineCause | None) -> RequestResult:
            return RequestResult(index, record.t, record.session, record.api, 0, 0, 0, None, divergence, error, cause)

        try:
            prompt = backend.prompt_ids(record.api, record.body)
        except BodyError as exc:  # the trace's body, not the server: no engine cause
            return failed(f"invalid body: {exc}", None)
        except Exception as exc:  # noqa: BLE001 - OracleError, or whatever the tokenizer raised: on its row
            detail = str(exc) if isinstance(exc, OracleError) else f"{type(exc).__name__}: {exc}"
            return failed(f"oracle unusable: {detail}", oracle_unusable(detail))
        best = oracle.hit_tokens(prompt)
        try:
            replay = backend.run(record.api, record.body, prompt)
        except BodyError as exc:
            return failed(f"invalid body: {exc}", None)
        except Exception as exc:  # noqa: BLE001 - a refusal (the server's error status), or no usage, no connection
            error = f"{type(exc).__name__}: {exc}"
            return failed(error, refusal(error) if isinstance(exc, refusals) else failure(error))
        oracle.record(prompt, replay.output_token_ids or [])  # it ran: later requests may reuse it
        share = reference.share(record)
        recounted = in_prompt_tokens(divergence, prompt, prompts)
        prompts[index] = prompt
        if backend.oracle_exact and replay.prompt_tokens != len(prompt):
            error = (f"{backend.name} ran {replay.prompt_tokens:,} prompt tokens but its tokenisation gave "
                     f"{len(prompt):,} ({getattr(backend, 'oracle_source', 'the oracle')}): the oracle cannot be "
                     "trusted for this request")
            return failed(f"oracle unusable: {error}", oracle_unusable(error))
        cause = eviction(replay.cached_tokens, best) or template_drop(
            divergence, share, best, len(prompt), replay.cached_tokens, backend.oracle_exact)
        return RequestResult(index, record.t, record.session, record.api, replay.prompt_tokens, replay.cached_tokens,
                             best, replay.ttft_s, recounted, engine_cause=cause)

    for index, (record, divergence) in enumerate(zip(records, divergences)):
        result = measure(index, record, divergence)
        report.requests.append(result)
        if progress is not None:
            progress(index + 1, len(records), result)
    report.oracle_exact = backend.oracle_exact
    report.oracle_source = getattr(backend, "oracle_source", report.oracle_source)
    report.notes.extend(getattr(backend, "notes", []))
    above = sum(1 for r in report.requests if r.cached_tokens > r.oracle_tokens)
    if above:
        report.notes.append(_above_oracle_note(above, len(report.requests), report.engine, reset_cache,
                                               reset_refused, getattr(backend, "reset_advice", None),
                                               backend.oracle_exact))
    return report


def _above_oracle_note(count: int, total: int, engine: str, reset_cache: bool, reset_refused: str | None,
                       reset_advice: str | None, exact: bool) -> str:
    """The note for requests that hit more than the oracle allows: a cache warm before the replay (what to do
    about it depends on whether the engine can reset: ``reset_advice`` is None when it can), or chunk reuse
    (llama-server ``--cache-reuse N`` shifts cached KV chunks that are not a common prefix)."""
    if reset_cache:
        why = reset_refused or "the reset was accepted, so another client's requests filled it"
    else:
        why = reset_advice or "rerun with --reset-cache"
    chunks = ("it reuses cached chunks beyond the common prefix (llama-server --cache-reuse N shifts KV)"
              if engine == "llama.cpp" else "it shares blocks the trace did not compute")
    verdict = ("the verdict does not read them as a template that drops a layer" if exact else
               "with an approximate oracle the verdict reads the measured hits, so replay on a cold server")
    return (f"the backend cached more than the oracle allows on {count} of {total} requests: its cache was warm "
            f"before the replay ({why}) or {chunks}; {verdict}")


class ChatMLReference:
    """Prefix reuse under the classifier's ChatML rendering (every layer rendered), per token, request by request:
    the yardstick :func:`~promptcache.verify.verdict.template_drop` holds the server's own reuse against."""

    def __init__(self) -> None:
        from local_backend.oracle import PrefixTrieOracle

        self._oracle = PrefixTrieOracle(1)

    def share(self, record: TraceRecord) -> float:
        """The share (0..1) of ``record``'s ChatML prompt that earlier records' prompts could lend; then records
        it. 0 when the body cannot be rendered."""
        from promptcache.tokens.chatml import encode_chatml

        try:
            chat = openai_body(record.api, record.body)
            ids = encode_chatml(chat["messages"], chat.get("tools"))
        except (ValueError, TypeError, KeyError):
            return 0.0
        share = self._oracle.hit_tokens(ids) / len(ids) if ids else 0.0
        self._oracle.record(ids, [])
        return share

