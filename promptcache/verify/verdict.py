"""The verdict of a replay, with the app's causes kept apart from the engine's.

**App causes** are the miss classifier's (:mod:`promptcache.misses.guard`): what the app changed between two
requests (tools reordered, a timestamp in the system prompt, history rewritten...). They hold at any provider.

**Engine causes** are what the serving engine did with an unchanged prefix; they say nothing about the app:

* ``evicted``: the engine cached fewer tokens than the oracle (the longest prefix computed before): its cache
  dropped the prefix (capacity, one sequence per llama.cpp slot) or another request still held it;
* ``template_drops_layer``: the app changed a layer, yet the server's own rendering reuses far more of the
  prompt than the classifier's ChatML rendering (which renders every layer) allows: the server's chat template
  does not render that layer (llama.cpp's built-in ``chatml`` drops ``tools``), so its hits cannot show the
  change. Where the oracle has the server's own token ids, only that rendering is evidence: a measured hit above
  it is a cache warm before the replay or chunk reuse (llama-server ``--cache-reuse``), which the report notes;
  where it has not (approximate oracle), the measured hit is the only evidence;
* ``refused``: the server refused the request (an HTTP error status: context too small, a template error, ...);
* ``failed``: the request failed without a refusal (no usage in the answer, the connection dropped);
* ``oracle_unusable``: the oracle's token ids could not be had or trusted (the tokenisation route is missing,
  refused or empty, or the server ran another prompt length).

A body the backend cannot convert is the trace's problem, not the engine's: its row has an error and no engine
cause.

A request has at most one engine cause; its app divergence is never overwritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TEMPLATE_GAP = 0.25
"""How much more of the prompt (a fraction) the server must reuse or hit than the ChatML rendering allows before
the app's change is called invisible to the server's template. A template that renders every layer reuses the
same share as ChatML, give or take its framing (a few tokens)."""

MIN_EVICTED_TOKENS = 16
"""A shortfall below this many tokens (one default block) is not called an eviction: a per-token cache that
keeps only the last sequence of a slot (llama.cpp) often misses a token or two that an older request shared;
``hit / oracle`` still shows it."""

GOOD_APP = "good: every miss is a first request, a new turn, another cache key or a chunked truncation"


@dataclass(frozen=True)
class EngineCause:
    """Why the engine, not the app, lost tokens on one request.

    Attributes:
        cause: ``"evicted"``, ``"template_drops_layer"``, ``"refused"``, ``"failed"`` or ``"oracle_unusable"``.
        detail: one line with the figures (tokens) or the server's message.
        layer: the layer the server's template does not render (``template_drops_layer`` only).
    """

    cause: str
    detail: str
    layer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{"cause", "layer", "detail"}`` for the JSON's ``engine_causes``."""
        return {"cause": self.cause, "layer": self.layer, "detail": self.detail}


def eviction(cached: int, best: int) -> EngineCause | None:
    """``evicted`` when the engine cached at least :data:`MIN_EVICTED_TOKENS` fewer than ``best`` (the oracle's)
    tokens, else None."""
    if best - cached < MIN_EVICTED_TOKENS:
        return None
    return EngineCause("evicted", f"the engine cached {cached:,} of the {best:,} tokens an ample cache would hold "
                                  "(evicted, or still held by another request)")


def template_drop(app: Any, reference: float, best: int, prompt: int, cached: int, server_tokens: bool
                  ) -> EngineCause | None:
    """``template_drops_layer`` when an unexpected app divergence is not visible in the server's numbers.

    Args:
        app: the classifier's divergence for this request.
        reference: the share of this prompt that any earlier request could lend under the classifier's ChatML
            rendering, which renders every layer (0..1).
        best: the oracle's tokens for this prompt in the server's own tokenisation (the same share, as the
            server renders it); prompt: its length; cached: what the server reported.
        server_tokens: ``best`` comes from the server's own tokenisation: then only ``best`` is evidence (a hit
            above it is a warm cache or chunk reuse, not a template); else only ``cached`` is.
    """
    if app is None or app.expected or not prompt:
        return None
    shared = best / prompt if server_tokens else None
    seen_share = shared if shared is not None else cached / prompt
    if seen_share - reference < TEMPLATE_GAP:
        return None
    where = f"{app.layer} ({app.path})" if app.path else str(app.layer)
    seen = f"its own rendering reuses {shared:.0%} of the prompt and " if shared is not None else ""
    return EngineCause("template_drops_layer",
                       f"the server does not render {where} as sent (its chat template drops it, or it "
                       f"normalises it): with that layer rendered, earlier requests could lend {reference:.0%} of this prompt, yet {seen}it hit {cached:,} of "
                       f"{prompt:,} tokens", layer=app.layer)


def refusal(error: str) -> EngineCause:
    """``refused``: the server refused the request (its status and message)."""
    return EngineCause("refused", error)


def failure(error: str) -> EngineCause:
    """``failed``: the request failed without a refusal (the exception's message)."""
    return EngineCause("failed", error)


def oracle_unusable(error: str) -> EngineCause:
    """``oracle_unusable``: the oracle's token ids for the request could not be had or trusted (why)."""
    return EngineCause("oracle_unusable", error)


def app_verdict(requests: Sequence[Any]) -> tuple[bool, str]:
    """``(good, text)`` from the classifier's divergences of the measured requests: good when every miss is
    benign; else the unexpected cause that cost the most tokens, ``"bad: CAUSE on N of M requests"``."""
    lost: Counter[str] = Counter()
    for r in requests:
        if r.error is None and r.divergence is not None and not r.divergence.expected:
            lost[r.divergence.cause] += max(r.divergence.prompt_tokens - r.divergence.common_prefix_tokens, 1)
    if not lost:
        return True, GOOD_APP
    cause, _ = lost.most_common(1)[0]
    count = sum(1 for r in requests if r.error is None and r.divergence is not None
                and r.divergence.cause == cause and not r.divergence.expected)
    return False, f"bad: {cause} on {count} of {len(requests)} requests"


def engine_verdict(requests: Sequence[Any], capacity_advice: str) -> str | None:
    """The engine causes in one line (None when there are none), most frequent first, each with what to do."""
    total = len(requests)
    causes = [r.engine_cause for r in requests if getattr(r, "engine_cause", None) is not None]
    if not causes:
        return None
    parts = []
    for cause, count in Counter(c.cause for c in causes).most_common():
        if cause == "evicted":
            parts.append(f"evicted on {count} of {total} ({capacity_advice})")
        elif cause == "template_drops_layer":
            layers = sorted({c.layer or "?" for c in causes if c.cause == cause})
            parts.append(f"the server's chat template does not render {', '.join(layers)} as sent on {count} of "
                         f"{total} (dropped or normalised: its hits cannot show the app's change there; providers "
                         "render that layer as sent, so the app verdict stands)")
        else:
            first = next(c.detail for c in causes if c.cause == cause)
            what = {"refused": "refused", "failed": "failed", "oracle_unusable": "no usable oracle for"}[cause]
            parts.append(f"{what} {count} of {total} requests (first: {first[:160]})")
    return "; ".join(parts)


def combined_verdict(app: tuple[bool, str], engine: str | None) -> str:
    """The verdict line: the app verdict alone when the engine lost nothing, else ``"app: ...; engine: ..."``."""
    good, text = app
    if engine is None:
        return text
    return f"app: {'good' if good else text}; engine: {engine}"
