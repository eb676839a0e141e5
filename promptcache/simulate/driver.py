"""Feed a trace through a provider cache simulator: clock, body conversion, miss causes, costs.

:func:`simulate_trace` reads a trace (:func:`promptcache.trace.records.read_trace`:
a malformed line is reported with its line number and skipped, or raises with
``strict=True``), picks the simulator of the provider, converts each body when
the trace's API differs from the provider's (:func:`promptcache.convert.convert_body`,
shared with ``verify``; an ``openai.responses`` trace is read through its Chat
view, and its miss causes name paths of the Responses bodies), runs the requests in order with the clock from their
``t``, classifies every request against the earlier ones with the one
miss-cause classifier (:mod:`promptcache.misses.guard`), attaches the runtime causes
only the simulator knows (``below_minimum``, ``ttl_expired``, ``evicted``,
``no_breakpoint``) and
costs each request from the model's profile (:func:`promptcache.providers.usage.usage_cost`).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from promptcache.providers.apis import ANTHROPIC_MESSAGES, BEDROCK_CONVERSE, OPENAI_CHAT, OPENAI_RESPONSES, sdk_ordered
from promptcache.convert import convert_body
from promptcache.convert.from_bedrock import converse_to_anthropic
from promptcache.misses.causes import Divergence, MissCause
from promptcache.misses.guard import PrefixGuard, ReplyNumbers
from promptcache.providers.profiles import PROVIDERS, ModelProfile, load_rules, provider_for_model
from promptcache.simulate.anthropic import AnthropicSimulator
from promptcache.simulate.base import CacheSimulator, RequestResult
from promptcache.simulate.bedrock import BedrockSimulator
from promptcache.simulate.render import PromptRender
from promptcache.simulate.deepseek import DeepSeekSimulator
from promptcache.simulate.gemini import GeminiSimulator
from promptcache.simulate.openai import OpenAISimulator
from promptcache.trace.requests import usable_records
from promptcache.trace.shape import MalformedBody
from promptcache.tokens.tokenizers import encoding_name_for_model, is_approximate
from promptcache.trace.records import EmptyTraceError, SkippedLines, TraceFormatError, TraceRecord, read_trace
from promptcache.providers.usage import Cost, Usage, usage_cost

SIMULATORS: dict[str, type[CacheSimulator]] = {
    "anthropic": AnthropicSimulator, "openai": OpenAISimulator,
    "gemini": GeminiSimulator, "deepseek": DeepSeekSimulator, "bedrock": BedrockSimulator,
}
"""Provider -> simulator class."""

_API_PROVIDER = {ANTHROPIC_MESSAGES: "anthropic", OPENAI_CHAT: "openai", OPENAI_RESPONSES: "openai",
                 BEDROCK_CONVERSE: "bedrock"}
_PROVIDER_NAMES = {"anthropic": "an Anthropic", "openai": "an OpenAI", "gemini": "a Gemini", "deepseek": "a DeepSeek",
                   "bedrock": "a Bedrock"}


def _model_key(api: str) -> str:
    """The body key naming the model: ``modelId`` in a Bedrock Converse body, else ``model``."""
    return "modelId" if api == BEDROCK_CONVERSE else "model"
_HIT_CAUSES = (MissCause.NEW_TURN.value, MissCause.REPEAT.value)


def make_simulator(provider: str, **options: Any) -> CacheSimulator:
    """A fresh simulator for ``provider`` (``anthropic``, ``openai``, ``gemini``, ``deepseek``).

    Raises:
        ValueError: unknown provider, or bad options (see :class:`~promptcache.simulate.base.CacheSimulator`).
    """
    if provider not in SIMULATORS:
        raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
    return SIMULATORS[provider](**options)


@dataclasses.dataclass(frozen=True)
class SimulatedRequest:
    """One request of a simulated trace.

    Attributes:
        index: position in the trace (from 0; skipped malformed lines are not counted).
        t, session: from the trace record.
        model: the model simulated.
        prompt_tokens: tokens of the rendered prompt.
        usage: read / written / uncached tokens (all zero for a refused request).
        profile: the model rules applied.
        miss_cause: why the request read less than a full prefix hit (a
            :class:`~promptcache.misses.causes.MissCause` value), None for a hit.
        divergence: the classifier's full report (layer, path, token offset, detail, hint).
        error: why the real API would refuse the request, else None.
        cache_key: the body's OpenAI ``prompt_cache_key`` (None when unset).
        api: the trace record's API (before any conversion).
        recorded_usage: the provider's usage object recorded with the request (trace ``usage``), else None.
        render: the rendered prompt (its ``tokens``; None when it could not be rendered).
    """

    index: int
    t: float
    session: str
    model: str
    prompt_tokens: int
    usage: Usage
    profile: ModelProfile
    miss_cause: str | None
    divergence: Divergence | None
    error: str | None
    cache_key: str | None = None
    api: str = ""
    recorded_usage: Mapping[str, Any] | None = None
    render: PromptRender | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def expected(self) -> bool:
        """True for a hit or an ordinary miss (``first_request``, ``other_cache_key``, a ``new_turn`` that only
        appends); False for every miss a CI gate should flag: a broken prefix, a runtime cause
        (``no_breakpoint``, ``below_minimum``, ``ttl_expired``, ``evicted``), a ``new_turn`` with static content
        after it (variable content first), and a refused request."""
        return self.error is None and self.divergence is not None and self.divergence.expected


@dataclasses.dataclass
class Simulation:
    """A simulated trace: per-request results, totals and notes for the report.

    Attributes:
        provider: the provider whose rules were applied.
        model: the model simulated (``--model``, or the trace's single model; models joined by ``,``).
        requests: one :class:`SimulatedRequest` per trace request, in order.
        cost_unit: ``USD`` when every model has a list price (or asked for), else ``relative``
            (one uncached input token = 1).
        approximate: True when token counts come from a stand-in tokenizer.
        encoding: the tiktoken encoding(s) used.
        notes: what the report should say (conversions, approximations, skipped lines).
    """

    provider: str
    model: str
    requests: list[SimulatedRequest]
    cost_unit: str
    approximate: bool
    encoding: str
    notes: list[str] = dataclasses.field(default_factory=list)

    def cost(self, request: SimulatedRequest) -> Cost:
        """The input cost of one request in :attr:`cost_unit` (zero for a refused request)."""
        return usage_cost(request.usage, request.profile, unit=self.cost_unit)

    def totals(self, requests: Iterable[SimulatedRequest] | None = None) -> tuple[Usage, Cost]:
        """Summed usage and cost of ``requests`` (default: all), refused requests excluded."""
        usage, with_cache, without = Usage(requests=0), 0.0, 0.0
        for request in self.requests if requests is None else requests:
            if request.error:
                continue
            usage = usage + request.usage
            cost = self.cost(request)
            with_cache, without = with_cache + cost.with_cache, without + cost.without_cache
        return usage, Cost(with_cache, without, self.cost_unit)

    def groups(self, key: Callable[[SimulatedRequest], str]) -> dict[str, tuple[Usage, Cost]]:
        """Totals per group (e.g. ``key=lambda r: r.session``), in first-seen order."""
        grouped: dict[str, list[SimulatedRequest]] = {}
        for request in self.requests:
            grouped.setdefault(key(request), []).append(request)
        return {name: self.totals(members) for name, members in grouped.items()}

    def summary(self) -> dict[str, Any]:
        """``{"hit_rate", "write_rate", "cost", "cost_without_cache", "savings", "cost_unit"}``."""
        usage, cost = self.totals()
        return {"hit_rate": usage.hit_rate, "write_rate": usage.write_rate, "cost": cost.with_cache,
                "cost_without_cache": cost.without_cache, "savings": cost.savings, "cost_unit": cost.unit}

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (issue #6): provider, model, requests, summary."""
        rows = []
        for r in self.requests:
            rows.append({
                "index": r.index, "session": r.session, "prompt_tokens": r.prompt_tokens,
                "cache_read_tokens": r.usage.cache_read, "cache_write_tokens": r.usage.cache_write,
                "cache_write_5m_tokens": r.usage.cache_write_5m, "cache_write_1h_tokens": r.usage.cache_write_1h,
                "uncached_tokens": r.usage.uncached, "cost": self.cost(r).with_cache,
                "miss_cause": r.miss_cause, "expected": r.expected, "error": r.error,
            })
        return {"provider": self.provider, "model": self.model, "requests": rows, "summary": self.summary()}


def miss_cause(divergence: Divergence | None, result: RequestResult) -> tuple[str | None, Divergence | None]:
    """The miss cause of a simulated request and the divergence it rests on.

    A request that reads something and only diverges as expected (a new turn, a
    repeat) is a hit (None). Otherwise the classifier's cause stands, unless it
    is a benign divergence and the simulator saw a runtime reason
    (``below_minimum``, ``ttl_expired``, ``evicted``, ``no_breakpoint``), which
    then replaces it (and makes it unexpected; ``below_minimum`` for a whole
    prompt below the model's minimum stays expected, hint-free: nothing to fix).
    """
    if result.error or divergence is None:
        return None, divergence
    if result.runtime_cause and divergence.expected and divergence.cause in _HIT_CAUSES:
        short = result.runtime_cause == MissCause.BELOW_MINIMUM and \
            result.prompt_tokens < result.profile.min_cacheable_tokens
        divergence = divergence.with_cause(result.runtime_cause, result.runtime_detail, expected=short or None)
    if divergence.expected and divergence.cause in _HIT_CAUSES and result.usage.cache_read > 0:
        return None, divergence
    return divergence.cause, divergence


def as_of_coverage(as_of: _dt.date | str | None) -> str | None:
    """A note when ``as_of`` is before the earliest ``read`` date of the sources in ``providers.toml``: the
    rules data was compiled from pages read later, so it may not cover that date (only its ``history``
    entries go back in time). None when the date is covered or not given. Nothing is invented for it.

    Raises:
        ValueError: ``as_of`` is a string that is not an ISO date.
    """
    if as_of is None:
        return None
    day = _dt.date.fromisoformat(as_of) if isinstance(as_of, str) else as_of
    reads = [source["read"] for source in load_rules().get("sources", {}).values() if "read" in source]
    earliest = min(reads, default=None)
    if earliest is None or day >= earliest:
        return None
    return (f"--as-of {day.isoformat()} is before the earliest date the rules data was read "
            f"({earliest.isoformat()}, providers.toml): the rules and prices of that date may differ from "
            "what is simulated (only the recorded history entries go back)")


def _pick_provider(records: list[TraceRecord], provider: str | None, model: str | None) -> str:
    if provider:
        if provider not in SIMULATORS:
            raise ValueError(f"unknown provider {provider!r}; choose one of {', '.join(PROVIDERS)}")
        return provider
    name = model or (str(records[0].body.get(_model_key(records[0].api)) or "") if records else "")
    try:
        return provider_for_model(name)
    except ValueError:
        return _API_PROVIDER.get(records[0].api, "anthropic") if records else "anthropic"


def _api_mix(records: list[TraceRecord]) -> str:
    """``"3 anthropic.messages, 2 openai.chat requests"`` when the records mix APIs, else ""."""
    counts = collections.Counter(record.api for record in records)
    return ", ".join(f"{n} {api}" for api, n in counts.items()) + " requests" if len(counts) > 1 else ""


def _prepare(record: TraceRecord, target: str, provider: str, model: str | None,
             auto_cache: bool, notes: dict[str, int], mix: str = "") -> dict[str, Any]:
    body: Mapping[str, Any] = record.body
    if target == BEDROCK_CONVERSE and record.api == ANTHROPIC_MESSAGES:  # InvokeModel, Claude Messages body
        notes[f"simulated {record.api} bodies as Bedrock InvokeModel bodies (Claude Messages format)"] = 1
        return dict(body) if model is None else {**body, "model": model}
    if record.api != target:
        if BEDROCK_CONVERSE in (record.api, target):
            raise ValueError(f"a {record.api} trace cannot be simulated under {provider}'s rules: a bedrock.converse "
                             "trace is simulated with --provider bedrock, and Bedrock's rules take bedrock.converse "
                             "and (InvokeModel) anthropic.messages bodies only")
        body_model = str(body.get("model") or "")
        if model is None:
            try:
                foreign = provider_for_model(body_model) != provider
            except ValueError:
                foreign = False
            if foreign:
                name = _PROVIDER_NAMES.get(provider, provider)
                if mix:
                    raise ValueError(f"the trace mixes APIs ({mix}); its {record.api} model {body_model!r} is not "
                                     f"{name} model: simulate each API's requests with its own provider (one trace "
                                     f"per API, e.g. jq -c 'select(.api == \"{record.api}\")'), or pass --model "
                                     f"({name} model id) to simulate every request under {provider}'s rules")
                raise ValueError(f"the trace's model {body_model!r} is not {name} model; pass --model "
                                 f"(for example {name} model id) to simulate it under {provider}'s rules")
        try:
            converted = convert_body(body, record.api, target)
        except ValueError as exc:  # the converter names the body path it cannot convert
            raise MalformedBody(f"cannot convert the {record.api} body to {target}: {exc}") from exc
        body = dict(converted.body)
        if record.api == OPENAI_RESPONSES and target == OPENAI_CHAT:
            notes[f"read {record.api} bodies through their {target} view (promptcache.convert.responses_to_chat)"] = 1
        else:
            notes[f"converted {record.api} bodies to {target} (promptcache.convert)"] = 1
        for label in converted.dropped_labels():
            notes[f"dropped in conversion (no {target} counterpart): {label}"] = 1
        if target == ANTHROPIC_MESSAGES and auto_cache and "cache_control" not in body:
            body["cache_control"] = {"type": "ephemeral"}
            body = sdk_ordered(target, body)
            notes["added top-level cache_control (automatic caching) to the converted bodies"] = 1
    key = _model_key(target)
    if model is not None and body.get(key) != model:
        body = {**body, key: model}
    return dict(body)


def _guarded(record: TraceRecord, body: dict[str, Any], target: str, model: str | None) -> tuple[dict[str, Any], str]:
    """The body and API the miss classifier compares: an ``openai.responses`` record simulated under OpenAI's
    rules is compared as itself (same tokens as its Chat view, paths of the Responses body: ``input[2].content``);
    every other record as the body the simulator ran."""
    if record.api == OPENAI_RESPONSES and target == OPENAI_CHAT:
        return (dict(record.body) if model is None else {**record.body, "model": model}), record.api
    if target == BEDROCK_CONVERSE:  # the classifier reads Claude Messages bodies: the Converse body's equivalent
        return (converse_to_anthropic(body, model) if record.api == BEDROCK_CONVERSE else body), ANTHROPIC_MESSAGES
    return body, target


def _skip(problem: TraceFormatError, strict: bool, skip: SkippedLines) -> None:
    if strict:
        raise problem
    skip(problem)


def simulate_records(records: Iterable[TraceRecord], *, provider: str | None = None, model: str | None = None,
                     as_of: Any = None, overrides: Mapping[str, Any] | None = None, unit: str | None = None,
                     auto_cache: bool = True, simulator_options: Mapping[str, Any] | None = None,
                     strict: bool = False, on_problem: Callable[[TraceFormatError], None] | None = None,
                     source: str = "<trace>", limit: int | None = None,
                     progress: Callable[[int, int], None] | None = None) -> Simulation:
    """Simulate trace records in order under one provider's cache rules.

    Args:
        records: :class:`~promptcache.trace.records.TraceRecord` objects in time order.
        provider: ``anthropic``, ``openai``, ``gemini`` or ``deepseek``; None: from
            the model (``--model`` or the first body's), else from the trace's API.
        model: simulate every request as this model; None: each body's model.
        as_of: apply the rules in force on this date (``YYYY-MM-DD``).
        overrides: ModelProfile fields to replace (``{"breakpoint_lookback": 50}``).
        unit: ``USD`` or ``relative``; None: USD when every model has a list price.
        auto_cache: when OpenAI bodies are converted for Anthropic, add top-level
            automatic caching (they carry no ``cache_control`` markers to convert).
        simulator_options: extra keyword arguments for the simulator class
            (``{"interval_tokens": 1024}`` for DeepSeek).
        strict: raise a :class:`~promptcache.trace.records.TraceFormatError` for a record whose
            body is not a request body (:func:`~promptcache.trace.requests.check_body`,
            or one that cannot be rendered or converted) and for a ``t`` that does not
            increase, instead of reporting it (a ``TraceFormatWarning`` naming the line,
            or ``on_problem``) and skipping the record, resp. simulating it at the
            previous ``t`` (the simulators' clock never runs backwards).
        on_problem: called with each of those problems; a
            :class:`~promptcache.trace.records.SkippedLines` already given to
            :func:`~promptcache.trace.records.read_trace` adds the records skipped here to
            the lines skipped there (the count :class:`~promptcache.trace.records.EmptyTraceError` reports).
        source: the file name used in those reports (with each record's line number).
        limit: stop after this many simulated requests (``diff --at N`` needs N + 1).
        progress: called with ``(records done, records in all)`` after each record (a progress bar).

    Returns:
        A :class:`Simulation`.

    Raises:
        ValueError: unknown provider, a foreign model without ``model``, a bad override,
            or ``unit="USD"`` for a model without a price.
        EmptyTraceError: no record left to simulate (none given, or every body skipped).
        TraceFormatError: with ``strict``, a malformed body or a ``t`` that does not increase.
    """
    records = list(records)
    skip = SkippedLines.of(on_problem)
    provider = _pick_provider(records, provider, model)
    simulator = make_simulator(provider, model=model, as_of=as_of, overrides=overrides,
                               **dict(simulator_options or {}))
    target = simulator.api
    mix = _api_mix(records)
    guard = PrefixGuard(ANTHROPIC_MESSAGES if target == BEDROCK_CONVERSE else target, max_requests=1 << 20,
                        as_of=as_of)
    replies = ReplyNumbers()
    notes: dict[str, int] = {}
    results: list[tuple[TraceRecord, str, RequestResult, Divergence | None]] = []
    keys: list[str | None] = []
    clock: float | None = None
    usable = usable_records(records if limit != 0 else (), strict=strict, on_problem=skip, source=source,
                            model_given=model is not None)
    for done, record in enumerate(usable, 1):  # lazy: nothing past ``limit`` is checked or reported
        if progress is not None:
            progress(done, len(records))
        try:
            body = _prepare(record, target, provider, model, auto_cache, notes, mix)
        except MalformedBody as exc:
            _skip(TraceFormatError(f"malformed request body: {exc}", source=source, line=record.line), strict, skip)
            continue
        if clock is not None and record.t <= clock:
            problem = TraceFormatError(f"t={record.t:g} is not after the previous request's t={clock:g}; t must be "
                                       f"strictly increasing", source=source, line=record.line)
            if strict:
                raise problem
            skip.report(problem, f"simulated at t={clock:g}")
        start = record.t if clock is None else max(clock, record.t)
        try:
            if target == BEDROCK_CONVERSE and record.api == ANTHROPIC_MESSAGES:
                result = simulator.simulate_invoke(body, start)  # type: ignore[attr-defined]
            else:
                result = simulator.simulate(body, start)
        except MalformedBody as exc:
            _skip(TraceFormatError(f"malformed request body: {exc}", source=source, line=record.line), strict, skip)
            continue
        clock = start
        name = str(body.get(_model_key(record.api)))
        keys.append(body.get("prompt_cache_key") or record.body.get("prompt_cache_key"))
        divergence = None
        if not result.error:  # a refused request never reaches the cache
            guard_body, guard_api = _guarded(record, body, target, model)
            divergence = guard.compare(guard_body, guard_api, session=record.session, number=len(results),
                                       continues=replies.parent(record, len(results)))
        results.append((record, name, result, divergence))
        if limit is not None and len(results) >= limit:
            break
    if not results and (limit is None or limit > 0):
        raise EmptyTraceError(source, skip.count)
    models = list(dict.fromkeys(name for _, name, *_ in results))
    profiles = [simulator.profile(name) for name in models]
    if unit is None:
        unit = "USD" if profiles and all(p.has_usd_price for p in profiles) else "relative"
    elif unit == "USD":
        unpriced = [p.model for p in profiles if not p.has_usd_price]
        if unpriced:
            raise ValueError(f"no USD price for model {unpriced[0]!r} in providers.toml; use --unit relative "
                             f"or pass --model with a price")
    requests = []
    for index, (record, name, result, divergence) in enumerate(results):
        cause, divergence = miss_cause(divergence, result)
        requests.append(SimulatedRequest(index, record.t, record.session, name, result.prompt_tokens,
                                         result.usage, result.profile, cause, divergence, result.error, keys[index],
                                         record.api, record.usage, result.render))
    encodings = sorted({res.render.encoding for _, _, res, _ in results if res.render is not None})
    expected = sorted({encoding_name_for_model(name) for name in models})
    approximate = any(is_approximate(name) for name in models) or encodings != expected
    note_list = list(notes) + [n for n in dict.fromkeys(r.profile.assumed_note() for r in requests) if n]
    coverage = as_of_coverage(as_of)
    if coverage:
        note_list.append(coverage)
    if approximate:
        note_list.insert(0, f"token counts are approximate: {', '.join(encodings) or 'cl100k_base'} on a ChatML "
                            f"rendering stands in for {', '.join(models) or 'the model'}'s tokenizer")
    return Simulation(provider, model or ",".join(models), requests, unit, approximate, ",".join(encodings), note_list)


def simulate_trace(path: str | os.PathLike[str], *, strict: bool = False,
                   on_problem: Callable[[TraceFormatError], None] | None = None, **options: Any) -> Simulation:
    """Read a trace file and simulate it (see :func:`simulate_records` for ``options``).

    A malformed line is reported (``TraceFormatWarning`` "file:LINE: reason;
    line skipped", or ``on_problem``) and skipped, a ``t`` that does not
    increase is reported too; ``strict=True`` raises
    :class:`~promptcache.trace.records.TraceFormatError` instead. A trace with no
    usable request (empty, or every line skipped) raises
    :class:`~promptcache.trace.records.EmptyTraceError` naming ``path`` and the lines skipped.
    """
    skip = SkippedLines.of(on_problem)
    records = read_trace(path, strict=strict, on_problem=skip)
    try:
        return simulate_records(records, strict=strict, on_problem=skip, source=os.path.basename(os.fspath(path)),
                                **options)
    except EmptyTraceError as exc:
        raise EmptyTraceError(os.fspath(path), exc.skipped) from None
