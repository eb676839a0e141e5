"""What the HTML cache report shows, taken from a simulation or a verify replay (no numbers of its own).

Two sources, one shape (:class:`CacheReport`):

- :func:`from_simulation`: a provider cache simulated by ``simulate``
  (:mod:`promptcache.simulate`): per request the tokens read, written and
  left uncached, the input cost with and without caching, the miss cause.
  The oracle marker is the longest prefix the request shares with any earlier
  prompt of the trace (:class:`local_backend.oracle.PrefixTrieOracle`, a pure
  token trie, no torch), rounded to the provider's granularity
  (:func:`promptcache.simulate.base.rounded`: minimum cacheable tokens, steps).
- :func:`from_verify`: a replay on a real prefix cache by ``verify``
  (:mod:`promptcache.verify`): the cached tokens the backend reported, the
  tokens it computed and its own oracle. A prefix cache writes every block it
  computes, so there is no separate "written" part; the "cost" is prefill
  tokens computed with the cache against without.

The miss causes and divergences are the one classifier's
(:mod:`promptcache.misses.guard`), as those commands report them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from promptcache.misses.causes import Divergence, MissCause
from promptcache.simulate.base import rounded
from promptcache.simulate.diff import char_diff

_HIT_CAUSES = (MissCause.NEW_TURN.value, MissCause.REPEAT.value)
"""Divergences that are prefix hits (as ``simulate`` counts them)."""


@dataclasses.dataclass(frozen=True)
class Row:
    """One request of the report. Token counts are the source's tokens.

    ``cached + written + uncached == prompt`` (all 0 for a request the provider or backend refused,
    ``error`` then says why); ``oracle`` is the best possible cached tokens; ``cost`` the input cost
    with caching in the report's unit (None where there is no price).
    """

    index: int
    t: float
    session: str
    prompt: int
    cached: int
    written: int
    uncached: int
    oracle: int
    cause: str | None
    expected: bool
    divergence: Divergence | None
    cost: float | None = None
    ttft_s: float | None = None
    error: str | None = None

    @property
    def hit_rate(self) -> float:
        """Cached tokens / prompt tokens (0.0 for an empty or refused request)."""
        return self.cached / self.prompt if self.prompt else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON the page's script reads on click: the numbers, the divergence and its character diff."""
        d = self.divergence
        return {
            "index": self.index, "t": self.t, "session": self.session, "prompt": self.prompt,
            "cached": self.cached, "written": self.written, "uncached": self.uncached, "oracle": self.oracle,
            "cause": self.cause, "expected": self.expected, "cost": self.cost, "ttft_s": self.ttft_s,
            "error": self.error,
            "divergence": None if d is None else {
                "cause": d.cause, "layer": d.layer, "path": d.path, "earlier_path": d.earlier_path,
                "earlier_index": d.earlier_index, "token_offset": d.token_offset,
                "common_prefix_tokens": d.common_prefix_tokens, "prompt_tokens": d.prompt_tokens,
                "static_after": d.static_after_divergence, "detail": d.detail, "hint": d.hint,
                "diff": [list(run) for run in char_diff(d)],
            },
        }


@dataclasses.dataclass(frozen=True)
class CauseTotal:
    """An unexpected miss cause over the trace: how many requests, and the prompt tokens they did not read."""

    cause: str
    requests: int
    tokens: int


@dataclasses.dataclass
class CacheReport:
    """Everything the page shows.

    Attributes:
        title: what was measured (``anthropic prompt cache, claude-sonnet-4-5`` / ``local engine, ...``).
        trace: the trace's name.
        source: ``simulate`` or ``verify``.
        rows: one :class:`Row` per request, in trace order.
        cost_with / cost_without: the input cost with and without caching over the trace
            (``cost_unit``: ``USD``, ``base-input tokens`` or ``prefill tokens``).
        good / verdict: no unexpected miss; the verdict line.
        legend: names of the three bar parts (cached, written, uncached).
        notes: the source's notes (approximate tokens, conversions).
        skipped: the trace reader's message for each line it skipped (malformed, not a request): the
            verdict covers only the requests read, so the page says "incomplete".
    """

    title: str
    trace: str
    source: str
    rows: list[Row]
    cost_with: float
    cost_without: float
    cost_unit: str
    good: bool
    verdict: str
    legend: tuple[str, str, str] = ("read from cache", "written to cache", "uncached")
    notes: list[str] = dataclasses.field(default_factory=list)
    skipped: list[str] = dataclasses.field(default_factory=list)

    @property
    def headline(self) -> str:
        """The verdict as the page and the command print it: prefixed "incomplete" when lines were skipped."""
        if not self.skipped:
            return self.verdict
        count = len(self.skipped)
        return f"incomplete: {count} trace line{'s' * (count != 1)} skipped; of the {len(self.rows)} read: {self.verdict}"

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of the measured requests."""
        return sum(r.prompt for r in self.rows if r.error is None)

    @property
    def hit_rate(self) -> float | None:
        """Cached / prompt tokens over the trace; None when nothing was measured."""
        prompt = self.prompt_tokens
        return sum(r.cached for r in self.rows if r.error is None) / prompt if prompt else None

    @property
    def oracle_rate(self) -> float | None:
        """Oracle / prompt tokens over the trace; None when nothing was measured."""
        prompt = self.prompt_tokens
        return sum(r.oracle for r in self.rows if r.error is None) / prompt if prompt else None

    def top_causes(self, n: int = 5) -> list[CauseTotal]:
        """The unexpected miss causes, most tokens not read first (at most ``n``)."""
        counts: Counter[str] = Counter()
        tokens: Counter[str] = Counter()
        for r in self.rows:
            if r.cause and not r.expected and r.error is None:
                counts[r.cause] += 1
                tokens[r.cause] += r.prompt - r.cached
        ranked = sorted(counts, key=lambda c: (-tokens[c], -counts[c], c))
        return [CauseTotal(c, counts[c], tokens[c]) for c in ranked[:n]]


def from_simulation(simulation: Any, trace: str, skipped: list[str] | None = None) -> CacheReport:
    """The report of a :class:`promptcache.simulate.Simulation` (``simulate``'s numbers); ``skipped``: the
    messages of the trace lines the reader skipped.

    The oracle needs each request's rendered tokens (``SimulatedRequest.render``); a request without
    them (not rendered) gets its read tokens as the oracle.
    """
    from local_backend.oracle import PrefixTrieOracle  # a pure-Python trie: no torch

    trie = PrefixTrieOracle(1)
    rows = []
    for r in simulation.requests:
        tokens = r.render.tokens if r.render is not None else None
        if r.error is not None or tokens is None:
            oracle = r.usage.cache_read
        else:
            oracle = max(rounded(trie.longest_prefix(tokens), r.profile), r.usage.cache_read)
            trie.insert(tokens)
        rows.append(Row(r.index, r.t, r.session, r.prompt_tokens if r.error is None else 0, r.usage.cache_read,
                        r.usage.cache_write, r.usage.uncached, oracle, r.miss_cause,
                        r.expected, r.divergence, simulation.cost(r).with_cache, error=r.error))
    _, cost = simulation.totals()
    unit = "USD" if cost.unit == "USD" else "base-input tokens"
    title = f"{simulation.provider} prompt cache, {simulation.model} (simulated)"
    report = CacheReport(title, trace, "simulate", rows, cost.with_cache, cost.without_cache, unit, True,
                         "good: every miss is a first request, a new turn or another cache key",
                         notes=list(simulation.notes), skipped=list(skipped or []))
    unexpected = sum(1 for row in rows if not row.expected and row.error is None)
    refused = sum(1 for row in rows if row.error is not None)
    if unexpected or refused:  # worded as verify's verdict: the costliest cause first
        report.good = False
        top = report.top_causes(1)
        parts = [f"{top[0].cause} on {top[0].requests} of {len(rows)} requests"] if top else []
        others = unexpected - (top[0].requests if top else 0)
        if others:
            parts.append(f"{others} other unexpected miss{'es' if others != 1 else ''}")
        if refused:
            parts.append(f"{refused} refused by the API")
        report.verdict = "bad: " + ", ".join(parts)
    return report


def from_verify(report: Any, skipped: list[str] | None = None) -> CacheReport:
    """The report of a :class:`promptcache.verify.report.VerifyReport` (``verify``'s numbers); ``skipped``: the
    messages of the trace lines the reader skipped."""
    rows = []
    for r in report.requests:
        d = r.divergence
        cause = None if d is None or (d.expected and d.cause in _HIT_CAUSES) else d.cause
        rows.append(Row(r.index, r.t, r.session, r.prompt_tokens, r.cached_tokens, 0, r.prompt_tokens - r.cached_tokens,
                        r.oracle_tokens, cause, d is None or d.expected, d, None, r.ttft_s, r.error))
    prompt, cached, _ = report.totals()
    good, verdict = report.verdict()
    title = f"{report.backend}, {report.model} ({report.block_size}-token blocks)"
    return CacheReport(title, report.trace, "verify", rows, float(prompt - cached), float(prompt), "prefill tokens",
                       good, verdict, legend=("cached (prefix hit)", "written", "computed (prefill)"),
                       notes=list(report.notes), skipped=list(skipped or []))
