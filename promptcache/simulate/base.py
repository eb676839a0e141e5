"""What every provider cache simulator shares: the per-request result and the model profiles.

A simulator is fed one request at a time, in trace order, with the request's
start time ``t`` (seconds since the start of the trace); it keeps its cache
state (entries, TTLs, machines) between calls and returns the usage the
provider would report, normalised to :class:`promptcache.providers.usage.Usage`
(read / write short TTL / write long TTL / uncached).
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any

from promptcache.providers.profiles import ModelProfile, check_overrides, model_profile
from promptcache.simulate.render import PromptRender, render_prompt
from promptcache.trace.shape import MalformedBody, check_body
from promptcache.providers.usage import Usage


class RequestRefused(ValueError):
    """The real API would refuse the request (HTTP 400); the message is the reason, e.g. a fifth breakpoint."""


@dataclasses.dataclass(frozen=True)
class RequestResult:
    """The simulated outcome of one request.

    Attributes:
        usage: prompt tokens split into read / written (short, long TTL) / uncached;
            all zero when ``error`` is set (a refused request is not billed).
        prompt_tokens: tokens of the rendered prompt (also for a refused request).
        profile: the model rules applied.
        error: why the real API would refuse the request, else None.
        runtime_cause: ``below_minimum``, ``ttl_expired``, ``evicted`` or ``no_breakpoint``
            when the simulator saw the read fall short for that reason, else None.
        runtime_detail: one sentence on that runtime cause.
        render: the rendered prompt (None when it could not be rendered).
    """

    usage: Usage
    prompt_tokens: int
    profile: ModelProfile
    error: str | None = None
    runtime_cause: str | None = None
    runtime_detail: str = ""
    render: PromptRender | None = dataclasses.field(default=None, repr=False, compare=False)


class CacheSimulator(abc.ABC):
    """Base class: profile lookup, rendering, refusal handling.

    Subclasses set :attr:`provider` and :attr:`api` and implement :meth:`_simulate`.
    """

    provider: str = ""
    api: str = ""

    def __init__(self, *, model: str | None = None, as_of: Any = None,
                 overrides: Mapping[str, Any] | None = None) -> None:
        """
        Args:
            model: simulate every request as this model (default: each body's ``model``).
            as_of: the date whose rules apply (see :func:`promptcache.providers.profiles.model_profile`).
            overrides: :class:`~promptcache.providers.profiles.ModelProfile` fields to replace,
                for parameters the sources disagree on (``{"breakpoint_lookback": 50}``,
                ``{"min_cacheable_tokens": 2048}``, ``{"unit_rule": "fixed"}``).

        Raises:
            ValueError: an override that names no rule or has a value of the wrong type or range
                (:func:`promptcache.providers.profiles.check_overrides`).
        """
        self.model, self.as_of = model, as_of
        self.overrides = check_overrides(overrides or {})
        self._profiles: dict[str, ModelProfile] = {}

    def profile(self, model: str) -> ModelProfile:
        """The rules for ``model`` (unknown models: the family's conservative values, one warning)."""
        found = self._profiles.get(model)
        if found is None:
            found = model_profile(self.provider, model, as_of=self.as_of)
            if self.overrides:
                found = dataclasses.replace(found, **self.overrides)
                if found.ttl_seconds and found.default_ttl not in found.ttl_seconds:
                    raise ValueError(f"rule override default_ttl={found.default_ttl!r}: {model} has the TTLs "
                                     f"{', '.join(found.ttl_seconds)}")
            self._profiles[model] = found
        return found

    def model_of(self, body: Mapping[str, Any]) -> str:
        """The model a request is simulated as."""
        return self.model or str(body.get("model") or "")

    def simulate(self, body: Mapping[str, Any], t: float) -> RequestResult:
        """Simulate one request (a body of :attr:`api`) starting at ``t`` seconds.

        Requests must come in time order. A request the real API would refuse
        gets ``error`` set and changes no cache state.

        Raises:
            MalformedBody: the body is not a request body of :attr:`api`
                (:func:`~promptcache.trace.requests.check_body`) or cannot be rendered.
            ValueError: a rule override that does not fit the model (an unknown ``default_ttl``).
        """
        check_body(self.api, body, model_given=self.model is not None)
        model = self.model_of(body)
        profile = self.profile(model)
        try:
            render = render_prompt(self.prompt_body(body, profile), self.api, model=model)
        except MalformedBody:
            raise
        except ValueError as exc:  # decompose / convert name the body path they cannot render
            raise MalformedBody(f"cannot be rendered: {exc}") from exc
        try:
            return self._simulate(render, profile, float(t))
        except RequestRefused as refused:
            return RequestResult(Usage(), len(render), profile, error=str(refused), render=render)

    def prompt_body(self, body: Mapping[str, Any], profile: ModelProfile) -> Mapping[str, Any]:
        """The body as the provider builds the prompt from it (default: as sent; Anthropic strips earlier
        thinking blocks on some models)."""
        return body

    @abc.abstractmethod
    def _simulate(self, render: PromptRender, profile: ModelProfile, t: float) -> RequestResult:
        """Apply the provider's rules to one rendered request (raise :class:`RequestRefused` to refuse it)."""


def rounded(length: int, profile: ModelProfile) -> int:
    """Cached tokens for a matched prefix of ``length`` tokens: 0 below the minimum, else
    ``min + step * floor((length - min) / step)`` (OpenAI: 1,024 + 128·k; step 1 elsewhere)."""
    minimum, step = profile.min_cacheable_tokens, max(1, profile.cached_token_step)
    if length < minimum:
        return 0
    return minimum + step * ((length - minimum) // step)


def below_minimum_detail(prompt_tokens: int, profile: ModelProfile) -> str:
    """The detail of ``below_minimum`` for a whole prompt shorter than the model's minimum cacheable
    prompt (``providers.toml``, from the provider's caching doc): nothing can be cached, a breakpoint
    would not help."""
    return (f"the prompt ({prompt_tokens:,} tokens) is below the minimum cacheable prompt of "
            f"{profile.min_cacheable_tokens:,} tokens for {profile.model}: nothing to cache, nothing to fix")


def split_writes(read: int, written: list[tuple[int, str]], profile: ModelProfile) -> tuple[int, int, int]:
    """Bill the tokens written at breakpoints by TTL.

    Args:
        read: tokens read from the cache (the write starts there).
        written: ``(prefix length, TTL label)`` of each breakpoint written, in render order,
            every length > ``read``.

    Returns:
        ``(short-TTL tokens, long-TTL tokens, end of the last write)``: the tokens from
        ``read`` to each breakpoint are billed at that breakpoint's TTL (Anthropic usage
        ``cache_creation.ephemeral_5m/1h_input_tokens``; provider-cache-rules.md).
    """
    short = long = 0
    previous = read
    for end, ttl in written:
        size = max(0, end - previous)
        if ttl == profile.short_ttl:
            short += size
        else:
            long += size
        previous = max(previous, end)
    return short, long, previous
