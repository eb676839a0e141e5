"""Property tests (hypothesis) for the Anthropic and OpenAI simulators."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from simbodies import EPHEMERAL, WORDS, anthropic_body, openai_body, words

from promptcache.misses.prefix_index import common_prefix
from promptcache.simulate import AnthropicSimulator, OpenAISimulator
from promptcache.simulate.base import rounded

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SYSTEMS = (words(1100), words(1100) + " and one more rule", words(700, "cache") + " " + words(400))

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)
turn = st.tuples(st.lists(text, min_size=1, max_size=4), st.lists(text, min_size=1, max_size=4))
markers = st.sampled_from(["auto", "last", "system+last", "none"])


def anthropic_request(system: str, turns: list, question: list[str], marking: str) -> dict:
    messages = []
    for asked, answered in turns:
        messages.append({"role": "user", "content": [{"type": "text", "text": t} for t in asked]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": t} for t in answered]})
    messages.append({"role": "user", "content": [{"type": "text", "text": t} for t in question]})
    if marking in ("last", "system+last"):
        messages[-1]["content"][-1]["cache_control"] = EPHEMERAL
    block = {"type": "text", "text": system}
    if marking == "system+last":
        block["cache_control"] = EPHEMERAL
    extra = {"cache_control": EPHEMERAL} if marking == "auto" else {}
    return anthropic_body([block], messages, **extra)


def openai_request(system: str, turns: list, question: list[str], key: str | None) -> dict:
    messages = [{"role": "system", "content": system}]
    for asked, answered in turns:
        messages.append({"role": "user", "content": " ".join(asked)})
        messages.append({"role": "assistant", "content": " ".join(answered)})
    messages.append({"role": "user", "content": " ".join(question)})
    return openai_body(messages, **({"prompt_cache_key": key} if key else {}))


request_shape = st.tuples(st.sampled_from(SYSTEMS), st.lists(turn, max_size=4), st.lists(text, min_size=1, max_size=3))
gaps = st.floats(min_value=0.2, max_value=420.0, allow_nan=False)


def _never_beyond_common_prefix(simulator, bodies, times):
    seen = []
    for body, t in zip(bodies, times, strict=True):
        result = simulator.simulate(body, t)
        tokens = result.render.tokens
        best = max((common_prefix(tokens, earlier) for earlier in seen), default=0)
        assert result.usage.cache_read <= best
        assert result.usage.prompt_tokens in (0, result.prompt_tokens)
        if result.error is None:
            seen.append(tokens)


@SETTINGS
@given(st.lists(st.tuples(request_shape, markers, gaps), min_size=2, max_size=5))
def test_anthropic_reads_never_exceed_the_common_prefix(requests):
    bodies = [anthropic_request(*shape, marking) for shape, marking, _ in requests]
    times = [sum(gap for *_, gap in requests[:i + 1]) for i in range(len(requests))]
    _never_beyond_common_prefix(AnthropicSimulator(), bodies, times)


@SETTINGS
@given(st.lists(st.tuples(request_shape, st.sampled_from([None, "a", "b"]), gaps), min_size=2, max_size=5))
def test_openai_reads_never_exceed_the_common_prefix(requests):
    bodies = [openai_request(*shape, key) for shape, key, _ in requests]
    times = [sum(gap for *_, gap in requests[:i + 1]) for i in range(len(requests))]
    _never_beyond_common_prefix(OpenAISimulator(), bodies, times)


within_ttl = st.floats(min_value=5.0, max_value=290.0, allow_nan=False)  # >= 1 s visibility, < 5 min TTL


@SETTINGS
@given(st.sampled_from(SYSTEMS), st.lists(turn, min_size=2, max_size=6),
       markers.filter(lambda m: m != "none"), st.lists(within_ttl, min_size=6, max_size=6))
def test_anthropic_appending_a_turn_never_lowers_the_hit(system, turns, marking, gaps):
    simulator, t, previous, cached_end = AnthropicSimulator(), 0.0, 0, 0
    for k in range(len(turns)):  # request k+1 = request k + its answer + the next question (< 20 blocks)
        result = simulator.simulate(anthropic_request(system, turns[:k], turns[k][0], marking), t)
        assert result.usage.cache_read >= previous
        assert result.usage.cache_read >= cached_end  # all the earlier request read or wrote is found
        previous, cached_end = result.usage.cache_read, result.usage.cache_read + result.usage.cache_write
        t += gaps[k % len(gaps)]


@SETTINGS
@given(st.sampled_from(SYSTEMS), st.lists(turn, min_size=2, max_size=6),
       st.sampled_from([None, "tenant"]), st.lists(within_ttl, min_size=6, max_size=6))
def test_openai_appending_a_turn_never_lowers_the_hit(system, turns, key, gaps):
    simulator, t, previous, cacheable = OpenAISimulator(), 0.0, 0, 0
    for k in range(len(turns)):  # request k+1 = request k + its answer + the next question
        result = simulator.simulate(openai_request(system, turns[:k], turns[k][0], key), t)
        assert result.usage.cache_read >= previous
        assert result.usage.cache_read >= cacheable  # the whole earlier prompt, in 128-token steps
        previous, cacheable = result.usage.cache_read, rounded(result.prompt_tokens, result.profile)
        t += gaps[k % len(gaps)]
