"""OpenAI rules pinned with exact numbers (provider-cache-rules.md, "OpenAI")."""

from __future__ import annotations

import dataclasses

import pytest
from simbodies import openai_body, openai_body_with_tokens, words

from promptcache.simulate import OpenAISimulator
from promptcache.simulate.base import rounded
from promptcache.providers.profiles import model_profile

BREAKPOINT = {"mode": "explicit"}


def repeat(body, times=2, gap=10.0, sim=None):
    sim = sim or OpenAISimulator()
    return [sim.simulate(body, i * gap) for i in range(times)]


def test_a_1023_token_prompt_caches_nothing():
    body = openai_body_with_tokens(1023)
    assert [r.usage.cache_read for r in repeat(body)] == [0, 0]


def test_a_repeat_of_a_1300_token_prompt_caches_1280():
    body = openai_body_with_tokens(1300)
    first, second = repeat(body)
    assert (first.usage.cache_read, second.usage.cache_read) == (0, 1280)
    assert (second.prompt_tokens, second.usage.uncached, second.usage.cache_write) == (1300, 20, 0)


@pytest.mark.parametrize(("length", "cached"), [(0, 0), (1023, 0), (1024, 1024), (1151, 1024), (1152, 1152),
                                                (6080, 6016)])
def test_128_token_steps(length, cached):
    assert rounded(length, model_profile("openai", "gpt-4.1-mini")) == cached


def test_the_2048_minimum_alternative_is_an_override():
    body = openai_body_with_tokens(1500)
    assert repeat(body, sim=OpenAISimulator(overrides={"min_cacheable_tokens": 2048}))[1].usage.cache_read == 0


def test_prompt_cache_key_routes_to_separate_machines():
    a = openai_body_with_tokens(1500, prompt_cache_key="tenant-a")
    b = dict(a, prompt_cache_key="tenant-b")
    sim = OpenAISimulator()
    sim.simulate(a, 0.0)
    assert sim.simulate(b, 5.0).usage.cache_read == 0
    assert sim.simulate(a, 10.0).usage.cache_read == 1408


def test_routing_prefix_divergence_sends_requests_elsewhere():
    shared = words(600)
    first = openai_body([{"role": "user", "content": "alpha " + shared}])
    second = openai_body([{"role": "user", "content": "omega " + shared}])
    sim = OpenAISimulator()
    sim.simulate(first, 0.0)
    assert sim.simulate(second, 5.0).usage.cache_read == 0  # diverges at token ~3, far inside 256


def test_more_than_15_requests_a_minute_overflow_to_cold_machines():
    body = openai_body_with_tokens(1300)
    results = repeat(body, times=17, gap=2.0)  # 17 requests in 32 s for one prefix+key
    assert [r.usage.cache_read for r in results] == [0] + [1280] * 14 + [0, 1280]
    assert results[15].runtime_cause == "evicted"
    assert "overflow" in results[15].runtime_detail


def test_in_memory_retention_idle_expiry_and_refresh():
    body = openai_body_with_tokens(1300)
    sim = OpenAISimulator()
    sim.simulate(body, 0.0)
    assert sim.simulate(body, 299.0).usage.cache_read == 1280  # refreshes the idle timer
    assert sim.simulate(body, 598.0).usage.cache_read == 1280
    late = sim.simulate(body, 598.0 + 301.0)
    assert late.usage.cache_read == 0 and late.runtime_cause == "ttl_expired"


def test_in_memory_retention_is_at_most_an_hour():
    body = openai_body_with_tokens(1300)
    sim = OpenAISimulator()
    results = [sim.simulate(body, t) for t in range(0, 3601, 240)]  # a reuse every 4 minutes
    assert [r.usage.cache_read for r in results] == [0] + [1280] * 14 + [0]  # written at 0 s, gone at 3,600 s
    assert results[-1].runtime_cause == "evicted"
    assert sim.simulate(body, 3700.0).usage.cache_read == 1280  # stored again by the request at 3,600 s


def test_24h_retention():
    """[O-G]: 24h "typically keeps entries available for around 30 minutes and can retain them for up to 24 hours"
    (providers.toml: 1,800 s, the typical value)."""
    body = openai_body_with_tokens(1300, prompt_cache_retention="24h")
    assert [r.usage.cache_read for r in repeat(body, gap=20 * 60.0)] == [0, 1280]
    assert [r.usage.cache_read for r in repeat(body, gap=3 * 3600.0)] == [0, 0]


def test_unknown_retention_is_refused():
    result = OpenAISimulator().simulate(openai_body_with_tokens(1300, prompt_cache_retention="forever"), 0.0)
    assert result.error == "prompt_cache_retention must be one of in_memory, 24h, not 'forever'"


def _explicit_body(*parts: str, mode: str | None = None, marker_on=(0,)):
    content = [{"type": "text", "text": text} for text in parts]
    for index in marker_on:
        content[index]["prompt_cache_breakpoint"] = dict(BREAKPOINT)
    extra = {"prompt_cache_options": {"mode": mode}} if mode else {}
    return openai_body([{"role": "user", "content": content}], model="gpt-5.6", **extra)


def test_gpt56_explicit_breakpoint_writes_are_billed_and_reads_are_not_rounded():
    sim = OpenAISimulator()
    first = sim.simulate(_explicit_body(words(1500), "question one"), 0.0)
    end = first.render.blocks[0].end
    assert first.usage.cache_write_5m == first.prompt_tokens  # breakpoint + implicit one at the end
    second = sim.simulate(_explicit_body(words(1500), "question two"), 10.0)
    assert second.usage.cache_read == end and end % 128 != 0
    assert second.usage.cache_write_5m == second.prompt_tokens - end
    assert first.profile.write_multiplier("30m") == 1.25 and first.profile.read_multiplier == 0.1


def test_gpt56_explicit_mode_without_breakpoints_does_not_cache():
    body = _explicit_body(words(1500), "q", mode="explicit", marker_on=())
    results = repeat(body)
    assert [r.usage.cache_read + r.usage.cache_write for r in results] == [0, 0]
    assert [r.runtime_cause for r in results] == ["no_breakpoint", "no_breakpoint"]


def test_gpt56_lookup_walks_the_request_s_own_breakpoints_first_2_and_latest_n():
    """[O-G] (OpenAI guide "Prompt caching", GPT-5.6 era; provider-audit-2026-12.md section 1, finding 6): lookup
    walks "the cache lookup boundaries ... in the incoming request": in explicit mode "the first 2 and latest 50
    explicit breakpoints". The breakpoint written by request 1 is the 3rd of request 2 and its 51st latest: found
    with a lookback of 80 (the SDK's number, the data's default), not with 50 (the guide's)."""
    head = [words(1200), "part one", "part two", "part three"]
    first = _explicit_body(*head, mode="explicit", marker_on=(3,))
    tail = [f"later part {i}" for i in range(50)]
    second = _explicit_body(*head, *tail, mode="explicit", marker_on=(1, 2, 3, *range(4, 4 + len(tail))))

    def read(lookback):
        sim = OpenAISimulator(overrides={"breakpoint_lookback": lookback})
        written = sim.simulate(first, 0.0)
        assert written.usage.cache_write_5m == written.render.blocks[3].end
        return sim.simulate(second, 5.0).usage.cache_read, written.render.blocks[3].end

    got, end = read(80)
    assert got == end
    assert read(50)[0] == 0
    assert model_profile("openai", "gpt-5.6").breakpoint_lookback == 80


def test_gpt56_explicit_request_checks_only_its_own_breakpoints():
    """[O-G]: "request 2 checks only the explicit breakpoints in its own input" (the audit's probe 3: an implicit
    request 1, then request 2 in explicit mode with a later breakpoint: a miss, where the old simulator read
    request 1's whole prompt)."""
    sim = OpenAISimulator()
    first = sim.simulate(_explicit_body(words(1500), marker_on=()), 0.0)  # implicit: written at its end
    assert first.usage.cache_write_5m == first.prompt_tokens
    second = sim.simulate(_explicit_body(words(1500), "and more", mode="explicit", marker_on=(1,)), 5.0)
    assert second.usage.cache_read == 0 and second.usage.cache_write_5m == second.render.blocks[1].end


def test_gpt56_bad_breakpoint_mode_is_refused():
    body = _explicit_body(words(1500), "q")
    body["messages"][0]["content"][0]["prompt_cache_breakpoint"] = {"mode": "implicit"}
    assert OpenAISimulator().simulate(body, 0).error == \
        "messages[0].content[0].prompt_cache_breakpoint.mode must be 'explicit'"


def test_response_format_schema_is_part_of_the_prefix():
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object"}}}
    body = openai_body_with_tokens(1300, response_format=schema)
    changed = dict(body, response_format={"type": "json_schema", "json_schema": {"schema": {"type": "object"},
                                                                                  "name": "answer"}})
    sim = OpenAISimulator()
    sim.simulate(body, 0.0)
    assert sim.simulate(changed, 5.0).usage.cache_read == 0
    assert sim.simulate(body, 10.0).usage.cache_read > 0


def test_profile_overrides_must_name_fields():
    with pytest.raises(ValueError, match="unknown rule override 'lookback'"):
        OpenAISimulator(overrides={"lookback": 50})
    assert dataclasses.replace(model_profile("openai", "gpt-5.6"), breakpoint_lookback=50).breakpoint_lookback == 50


def test_gpt56_writes_the_latest_explicit_breakpoints_only():
    parts = [f"part {i} " + words(600) for i in range(6)]  # part 1 ends above the 1,024 minimum
    five = list(range(5))
    changed = parts[:2] + ["changed " + words(600)] + parts[3:]

    def second_read(mode):
        sim = OpenAISimulator()
        first = sim.simulate(_explicit_body(*parts, mode=mode, marker_on=five), 0.0)
        return first, sim.simulate(_explicit_body(*changed, mode=mode, marker_on=five), 10.0).usage.cache_read

    first, implicit = second_read("implicit")  # implicit + latest 3 explicit: parts 2, 3, 4 and the end
    assert implicit == 0
    assert first.usage.cache_write_5m == first.prompt_tokens
    first, explicit = second_read("explicit")  # latest 4 explicit: parts 1, 2, 3, 4
    assert explicit == first.render.blocks[1].end
    assert first.usage.cache_write_5m == first.render.blocks[4].end and first.usage.uncached > 0
