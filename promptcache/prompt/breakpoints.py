"""The cache breakpoint planner: where the Anthropic ``cache_control`` markers of a prompt go.

Anthropic writes the cache only at breakpoints and reads, at each breakpoint,
the longest entry among its own block and the 19 before it
(provider-cache-rules.md, "Anthropic"). Rules the planner enforces, every
number read from ``promptcache/data/providers.toml`` through
:func:`promptcache.providers.profiles.model_profile`:

- candidates are the layer boundaries of the prompt model: the end of the
  stable tools + system prefix, the end of the documents, the end of the
  examples, and a moving breakpoint on the last block of the newest message
  (``history``), which lets the next turn read everything before it;
- a top-level ``cache_control`` (automatic caching) puts one breakpoint on
  the last cacheable block, which is where the moving breakpoint goes: with
  it, the planner plans no ``history`` marker of its own (the automatic
  breakpoint is the moving one, with the top-level TTL) and keeps the other
  3 slots for the stable layers (:func:`automatic_ttl` checks the value);
- at most ``max_breakpoints`` (4) markers, the automatic one included; when there are more candidates than slots,
  the moving breakpoint stays and the stable boundary adding the fewest
  tokens over the previous kept one is merged into the next (it loses the
  least: its tokens are still cached by the next breakpoint);
- no breakpoint on a prefix shorter than the model's minimum cacheable
  tokens (1,024 for Sonnet 4.5 / 4.6, 4,096 for Haiku 4.5, ...): such a
  marker caches nothing and only costs a slot. An unknown model gets the most
  conservative minimum of its family, with one ``UnknownModelWarning``;
- TTL ``5m`` or ``1h`` per layer, and never a ``1h`` marker after a ``5m`` one
  (the API rejects it): layer TTLs must not increase along the prompt.

Token counts are ChatML cl100k counts of the prompt cut after each layer
(:mod:`promptcache.prompt.render.tokens`); Claude's own tokenizer gives typically
10-30% more tokens (shared traces README), so a prefix counted just above the
minimum is above it for Claude too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from promptcache.providers.profiles import ModelProfile, model_profile, provider_rules

__all__ = ["BREAKPOINT_LAYERS", "Boundary", "Breakpoint", "BreakpointPlan", "automatic_ttl", "check_ttls",
           "plan_breakpoints"]

BREAKPOINT_LAYERS = ("system", "documents", "examples", "history")
"""Layers that can end with a breakpoint, in prompt order (``system`` covers the tools too)."""


@dataclasses.dataclass(frozen=True)
class Boundary:
    """A candidate breakpoint: the end of a non-empty layer.

    Attributes:
        layer: one of :data:`BREAKPOINT_LAYERS`.
        prefix_tokens: tokens of the prompt up to and including this layer.
        ttl: the TTL label wanted for it (``"5m"`` / ``"1h"``).
    """

    layer: str
    prefix_tokens: int
    ttl: str = "5m"


@dataclasses.dataclass(frozen=True)
class Breakpoint:
    """A planned ``cache_control`` marker at the end of ``layer`` (see :class:`Boundary`)."""

    layer: str
    prefix_tokens: int
    ttl: str

    def marker(self, default_ttl: str = "5m") -> dict[str, str]:
        """The ``cache_control`` value: ``{"type": "ephemeral"}`` (+ ``"ttl"`` unless the default)."""
        return {"type": "ephemeral"} if self.ttl == default_ttl else {"type": "ephemeral", "ttl": self.ttl}


@dataclasses.dataclass(frozen=True)
class BreakpointPlan:
    """The planner's answer.

    Attributes:
        breakpoints: the markers to place, in prompt order (at most the slots available).
        skipped: ``(layer, reason)`` for each candidate left without a marker.
        profile: the model's cache rules used.
        automatic: the moving breakpoint a top-level ``cache_control`` places on the
            last block (layer ``history``, its TTL), or None without automatic caching.
            It is not one of :attr:`breakpoints`: the API places it, not a marker.
    """

    breakpoints: tuple[Breakpoint, ...]
    skipped: tuple[tuple[str, str], ...]
    profile: ModelProfile
    automatic: Breakpoint | None = None

    def at(self, layer: str) -> Breakpoint | None:
        """The breakpoint planned at the end of ``layer``, or None."""
        return next((b for b in self.breakpoints if b.layer == layer), None)

    def explain(self) -> str:
        """One line per candidate: placed (with TTL and prefix tokens) or skipped (with why)."""
        lines = [f"{b.layer}: cache_control ttl={b.ttl} after {b.prefix_tokens:,} tokens" for b in self.breakpoints]
        if self.automatic is not None:
            lines.append(f"{self.automatic.layer}: top-level cache_control (automatic caching) ttl={self.automatic.ttl} "
                         f"after {self.automatic.prefix_tokens:,} tokens")
        lines += [f"{layer}: no breakpoint ({reason})" for layer, reason in self.skipped]
        return "\n".join(lines)


def check_ttls(ttls: Mapping[str, str], ttl_seconds: Mapping[str, int] | None = None) -> None:
    """Check TTL labels per layer: known to the provider, and never longer after shorter.

    Args:
        ttls: layer -> TTL label.
        ttl_seconds: label -> seconds (default: Anthropic's, from providers.toml).

    Raises:
        ValueError: an unknown layer or TTL label, or a longer TTL after a
            shorter one (naming both layers and the fix).
    """
    seconds = ttl_seconds if ttl_seconds is not None else provider_rules("anthropic")["ttl_seconds"]
    previous: tuple[str, str] | None = None
    for layer in ttls:
        if layer not in BREAKPOINT_LAYERS:
            raise ValueError(f"cache TTL for unknown layer {layer!r}; layers with breakpoints: "
                             f"{', '.join(BREAKPOINT_LAYERS)}")
    for layer in BREAKPOINT_LAYERS:
        ttl = ttls.get(layer)
        if ttl is None:
            continue
        if ttl not in seconds:
            raise ValueError(f"{layer} layer: unknown cache TTL {ttl!r}; "
                             f"use one of {', '.join(seconds)}")
        if previous is not None and seconds[ttl] > seconds[previous[1]]:
            raise ValueError(f"{layer} layer: a {ttl} breakpoint may not follow the {previous[1]} one of the "
                             f"{previous[0]} layer (Anthropic rejects a longer TTL after a shorter one); give "
                             f"{previous[0]} ttl {ttl!r} too, or {layer} ttl {previous[1]!r}")
        previous = (layer, ttl)


def automatic_ttl(cache_control: Any, profile: ModelProfile) -> str:
    """The TTL label of a top-level ``cache_control`` (automatic caching), checked as the API checks it.

    Args:
        cache_control: the value passed as the ``cache_control`` parameter of ``messages.create``.
        profile: the model's rules (TTL labels and the default TTL).

    Returns:
        ``"5m"`` or ``"1h"`` (the default TTL when the value has no ``ttl``).

    Raises:
        ValueError: not ``{"type": "ephemeral"[, "ttl": "5m" | "1h"]}`` (the API answers such a
            request with HTTP 400), naming what to pass instead.
    """
    fix = "pass cache_control={'type': 'ephemeral'} or {'type': 'ephemeral', 'ttl': '1h'}"
    if not isinstance(cache_control, Mapping):
        raise ValueError(f"cache_control must be an object, not {type(cache_control).__name__}; {fix}")
    if cache_control.get("type") != "ephemeral":
        raise ValueError(f"cache_control type {cache_control.get('type')!r} is not supported (only 'ephemeral'); {fix}")
    unknown = sorted(set(cache_control) - {"type", "ttl"})
    if unknown:
        raise ValueError(f"cache_control has unknown key(s) {unknown}; {fix}")
    ttl = cache_control.get("ttl", profile.default_ttl)
    if ttl not in profile.ttl_seconds:
        raise ValueError(f"cache_control ttl {ttl!r} is not one of {', '.join(profile.ttl_seconds)}; {fix}")
    return str(ttl)


def _check_automatic(boundaries: Sequence[Boundary], ttl: str, seconds: Mapping[str, int]) -> None:
    for b in boundaries:
        if b.layer != "history" and seconds[ttl] > seconds[b.ttl]:
            raise ValueError(f"top-level cache_control: ttl {ttl!r} (automatic caching, the moving breakpoint on the "
                             f"last block) may not follow the {b.ttl} breakpoint of the {b.layer} layer (Anthropic "
                             f"rejects a longer TTL after a shorter one); pass cache_control={{'type': 'ephemeral', "
                             f"'ttl': {b.ttl!r}}}, or .cache_ttl({b.layer}={ttl!r}) on the builder")


def plan_breakpoints(boundaries: Sequence[Boundary], model: str, *, reserved: int = 0,
                     profile: ModelProfile | None = None, automatic: str | None = None) -> BreakpointPlan:
    """Place up to ``max_breakpoints - reserved`` Anthropic cache breakpoints at layer boundaries.

    Args:
        boundaries: the non-empty layers' ends, in prompt order (at most one
            per layer of :data:`BREAKPOINT_LAYERS`), ``prefix_tokens`` increasing.
        model: the Anthropic model (minimum cacheable tokens and limits per model).
        reserved: slots used by other markers of the request (the automatic one is counted by ``automatic``).
        profile: use this profile instead of looking ``model`` up (tests, overrides).
        automatic: the TTL label of a top-level ``cache_control`` (automatic caching;
            :func:`automatic_ttl`). It is the moving breakpoint: the ``history``
            boundary gets no marker of its own (it is :attr:`BreakpointPlan.automatic`),
            one slot is used, and no stable layer may have a shorter TTL.

    Returns:
        A :class:`BreakpointPlan`; never more than 4 breakpoints, the automatic one included.

    Raises:
        ValueError: boundaries out of order, an unknown layer, or bad TTLs (:func:`check_ttls`),
            also a top-level TTL longer than a stable layer's.
    """
    profile = profile or model_profile("anthropic", model)
    if automatic is not None:
        if automatic not in profile.ttl_seconds:
            raise ValueError(f"automatic caching ttl {automatic!r} is not one of {', '.join(profile.ttl_seconds)}")
        _check_automatic(boundaries, automatic, profile.ttl_seconds)
    check_ttls({b.layer: b.ttl for b in boundaries}, profile.ttl_seconds)
    order = [BREAKPOINT_LAYERS.index(b.layer) for b in boundaries]
    if order != sorted(set(order)) or any(a.prefix_tokens > b.prefix_tokens for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be distinct layers in prompt order with non-decreasing prefix_tokens")
    moving: Breakpoint | None = None
    if automatic is not None:
        last = next((b for b in boundaries if b.layer == "history"), None)
        moving = Breakpoint("history", last.prefix_tokens, automatic) if last is not None else None
        boundaries = [b for b in boundaries if b.layer != "history"]
        reserved += 1
    minimum = profile.min_cacheable_tokens
    slots = max(0, (profile.max_breakpoints or 0) - reserved)
    skipped: list[tuple[str, str]] = []
    kept: list[Boundary] = []
    for b in boundaries:
        if b.prefix_tokens < minimum:
            skipped.append((b.layer, f"prefix of {b.prefix_tokens:,} tokens is below the {minimum:,}-token minimum "
                                     f"of {profile.model}"))
        else:
            kept.append(b)
    while len(kept) > slots:
        stable = [i for i, b in enumerate(kept) if b.layer != "history"] or list(range(len(kept)))
        gain = {i: kept[i].prefix_tokens - (kept[i - 1].prefix_tokens if i else 0) for i in stable}
        drop = min(stable, key=lambda i: (gain[i], i))
        skipped.append((kept[drop].layer, f"no slot left ({profile.max_breakpoints} per request, {reserved} reserved)"))
        del kept[drop]
    breakpoints = tuple(Breakpoint(b.layer, b.prefix_tokens, b.ttl) for b in kept)
    return BreakpointPlan(breakpoints, tuple(skipped), profile, moving)
