"""Gemini implicit caching and DeepSeek prefix units, pinned with exact numbers."""

from __future__ import annotations

from simbodies import openai_body, words

from promptcache.simulate import DeepSeekSimulator, GeminiSimulator
from promptcache.simulate.render import render_prompt


def chat(*messages: tuple[str, str], model: str) -> dict:
    return openai_body([{"role": role, "content": text} for role, text in messages], model=model)


def test_gemini_caches_the_common_prefix_above_the_model_minimum():
    short = chat(("system", words(1900)), ("user", "a"), model="gemini-2.5-flash")    # below 2,048
    long = chat(("system", words(2500)), ("user", "a"), model="gemini-2.5-flash")
    sim = GeminiSimulator()
    sim.simulate(short, 0.0)
    missed = sim.simulate(chat(("system", words(1900)), ("user", "b"), model="gemini-2.5-flash"), 1.0)
    assert missed.usage.cache_read == 0 and missed.runtime_cause == "below_minimum"
    sim.simulate(long, 2.0)
    follow = sim.simulate(chat(("system", words(2500)), ("user", "b"), model="gemini-2.5-flash"), 3.0)
    shared = render_prompt(long, "openai.chat").messages[1].start + 3  # system message + "<|im_start|>user\n"
    assert follow.usage.cache_read == shared  # step 1: not rounded
    assert follow.profile.min_cacheable_tokens == 2048


def test_gemini_3_minimum_is_4096():
    body = chat(("system", words(3000)), ("user", "a"), model="gemini-3-pro")
    sim = GeminiSimulator()
    assert [sim.simulate(body, t).usage.cache_read for t in (0, 1)] == [0, 0]


def test_deepseek_legacy_rule_reads_whole_64_token_units():
    sim = DeepSeekSimulator(overrides={"unit_rule": "fixed"})
    first = chat(("system", words(300)), ("user", "first question"), model="deepseek-chat")
    second = chat(("system", words(300)), ("user", "second question"), model="deepseek-chat")
    sim.simulate(first, 0.0)
    result = sim.simulate(second, 1.0)
    common = render_prompt(first, "openai.chat").messages[1].start + 3
    assert result.usage.cache_read == 64 * (common // 64)


def test_deepseek_boundary_rule_needs_a_whole_unit():
    a, b, c, d = words(200, "alpha"), words(50, "beta"), words(50, "gamma"), words(50, "delta")
    sim = DeepSeekSimulator()
    first = chat(("system", a), ("user", b), model="deepseek-chat")
    written = sim.simulate(first, 0.0)
    # A + B + C: matches the unit A + B (the first request's user input end)
    extended = chat(("system", a), ("user", b), ("assistant", c), ("user", d), model="deepseek-chat")
    result = sim.simulate(extended, 10.0)
    output_end = render_prompt(extended, "openai.chat").messages[2].end
    assert result.usage.cache_read == output_end  # A + B + the reply: the output-end unit
    assert written.prompt_tokens < output_end
    # A + C: no whole unit matches ...
    other = DeepSeekSimulator()
    other.simulate(first, 0.0)
    assert other.simulate(chat(("system", a), ("user", c), model="deepseek-chat"), 10.0).usage.cache_read == 0
    # ... but the common prefix A is now a unit of its own, so A + D hits it
    hit = other.simulate(chat(("system", a), ("user", d), model="deepseek-chat"), 20.0).usage.cache_read
    common = render_prompt(first, "openai.chat").messages[1].start + 3
    assert hit == common


def test_deepseek_units_below_64_tokens_are_not_cached():
    body = chat(("user", words(40)), model="deepseek-chat")
    sim = DeepSeekSimulator()
    assert [sim.simulate(body, t).usage.cache_read for t in (0, 1)] == [0, 0]


def test_deepseek_interval_units_when_the_interval_is_given():
    sim = DeepSeekSimulator(interval_tokens=100)
    sim.simulate(chat(("user", words(450) + " end one"), model="deepseek-chat"), 0.0)
    result = sim.simulate(chat(("user", words(450) + " end two"), model="deepseek-chat"), 1.0)
    assert result.usage.cache_read == 400
