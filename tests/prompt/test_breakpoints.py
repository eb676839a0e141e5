"""The breakpoint planner: per-model minimums, at most 4 markers, TTL order, unknown models."""

from __future__ import annotations

import json

import pytest

from promptcache import PromptBuilder
from promptcache.prompt.breakpoints import Boundary, plan_breakpoints
from promptcache.providers.profiles import UnknownModelWarning, model_profile
from promptcache.simulate import AnthropicSimulator
from promptcache.prompt.stability import LayerRegistry

SECTION = " ".join(f"Guideline {i}: keep answers short, friendly and specific to the order in question."
                   for i in range(1, 61))  # ~1,150 tokens


def prompt():
    return (PromptBuilder(registry=LayerRegistry()).system(SECTION).document(SECTION + " Extra.", name="a")
            .document(SECTION + " More.", name="b").example("q", "a").user("Hello").build())


def markers(body: dict) -> list[str]:
    """Where the cache_control markers are, as 'system[i]' / 'messages[i]' / 'tools[i]' / 'top'."""
    out = ["top"] if "cache_control" in body else []
    for key in ("tools", "system"):
        out += [f"{key}[{i}]" for i, block in enumerate(body.get(key, [])) if "cache_control" in block]
    out += [f"messages[{i}]" for i, m in enumerate(body["messages"]) if any("cache_control" in b for b in m["content"])]
    return out


def test_boundaries_are_the_whole_prompt_counts() -> None:
    p = prompt()
    plan = p.breakpoints("claude-sonnet-4-6")
    counts = {b.layer: b.prefix_tokens for b in plan.breakpoints}
    assert counts["history"] == p.count_tokens() == len(p.to_tokens())
    assert counts["system"] < counts["documents"] < counts["examples"] < counts["history"]


@pytest.mark.parametrize(("model", "minimum", "placed"), [
    ("claude-opus-5", 512, ["system", "documents", "examples", "history"]),
    ("claude-sonnet-4-6", 1024, ["system", "documents", "examples", "history"]),
    ("claude-opus-4-7", 2048, ["documents", "examples", "history"]),
    ("claude-haiku-4-5", 4096, []),
])
def test_no_breakpoint_below_the_model_minimum(model: str, minimum: int, placed: list[str]) -> None:
    p = prompt()
    plan = p.breakpoints(model)
    assert plan.profile.min_cacheable_tokens == minimum
    assert [b.layer for b in plan.breakpoints] == placed
    assert all(b.prefix_tokens >= minimum for b in plan.breakpoints)
    assert all(f"below the {minimum:,}-token minimum of {model}" in why for _, why in plan.skipped)


def test_marker_positions_and_ttls_in_the_body() -> None:
    p = (PromptBuilder(registry=LayerRegistry()).system(SECTION).document(SECTION + " Extra.", name="a")
         .document(SECTION + " More.", name="b").example("q", "a").cache_ttl(documents="1h").user("Hello").build())
    body = p.to_anthropic("claude-sonnet-4-6")
    assert markers(body) == ["system[0]", "system[2]", "system[3]", "messages[0]"]  # last document, not each
    assert [b.get("cache_control") for b in body["system"]] == [
        {"type": "ephemeral", "ttl": "1h"}, None, {"type": "ephemeral", "ttl": "1h"}, {"type": "ephemeral"}]


def test_a_top_level_cache_control_is_the_moving_breakpoint() -> None:
    """Automatic caching marks the last block itself: no history marker of our own, 3 stable slots."""
    body = prompt().to_anthropic("claude-sonnet-4-6", cache_control={"type": "ephemeral"})
    assert markers(body) == ["top", "system[0]", "system[2]", "system[3]"]
    plan = prompt().breakpoints("claude-sonnet-4-6", cache_control={"type": "ephemeral"})
    assert [b.layer for b in plan.breakpoints] == ["system", "documents", "examples"] and plan.skipped == ()
    assert plan.automatic is not None and (plan.automatic.layer, plan.automatic.ttl) == ("history", "5m")
    assert plan.automatic.prefix_tokens == prompt().count_tokens()
    assert "history: top-level cache_control (automatic caching) ttl=5m after" in plan.explain()
    mark = prompt().breakpoints("claude-sonnet-4-6", reserved=1)  # a marker of the caller's own still takes a slot
    assert mark.skipped == (("examples", "no slot left (4 per request, 1 reserved)"),) and mark.automatic is None


def test_a_1h_top_level_cache_control_gives_the_stable_layers_1h() -> None:
    """/tmp/rev/bp.py: a 5m history marker plus a 1h top-level one is HTTP 400 (1h after 5m)."""
    body = prompt().to_anthropic("claude-sonnet-4-6", cache_control={"type": "ephemeral", "ttl": "1h"})
    assert body["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert markers(body) == ["top", "system[0]", "system[2]", "system[3]"]
    assert {json.dumps(b.get("cache_control")) for b in body["system"]} == {
        json.dumps({"type": "ephemeral", "ttl": "1h"}), "null"}
    result = AnthropicSimulator().simulate(body, 0.0)  # the API's checks: accepted, written for an hour
    assert result.error is None and result.usage.cache_write_5m == 0
    assert result.usage.cache_write_1h == result.prompt_tokens - result.usage.uncached > 0


def test_top_level_cache_control_is_checked() -> None:
    with pytest.raises(ValueError, match=r"top-level cache_control: ttl '1h' .* may not follow the 5m breakpoint of "
                                         r"the system layer"):
        (PromptBuilder(registry=LayerRegistry()).system(SECTION).cache_ttl(system="5m").user("q").build()
         .to_anthropic("claude-sonnet-4-6", cache_control={"type": "ephemeral", "ttl": "1h"}))
    with pytest.raises(ValueError, match=r"is the moving breakpoint, but the prompt sets cache_ttl\(history='1h'\)"):
        (PromptBuilder(registry=LayerRegistry()).system(SECTION).cache_ttl(history="1h").user("q").build()
         .to_anthropic("claude-sonnet-4-6", cache_control={"type": "ephemeral"}))
    for bad, message in [({"type": "persistent"}, "type 'persistent' is not supported"),
                         ({"type": "ephemeral", "ttl": "2h"}, "ttl '2h' is not one of 5m, 1h"),
                         ({"type": "ephemeral", "scope": "org"}, r"unknown key\(s\) \['scope'\]"),
                         ("ephemeral", "must be an object, not str")]:
        with pytest.raises(ValueError, match=message):
            prompt().to_anthropic("claude-sonnet-4-6", cache_control=bad)


def test_tools_only_prefix_marks_the_last_tool() -> None:
    tools = [{"name": f"tool_{i}", "description": SECTION[:400], "input_schema": {"type": "object"}} for i in range(12)]
    body = PromptBuilder(registry=LayerRegistry()).tools(tools).user("q").build().to_anthropic("claude-sonnet-4-6")
    assert markers(body) == ["tools[11]", "messages[0]"]


def test_planner_keeps_the_moving_breakpoint_and_drops_the_smallest_gain() -> None:
    profile = model_profile("anthropic", "claude-sonnet-4-6")
    boundaries = [Boundary("system", 2000), Boundary("documents", 9000), Boundary("examples", 9100),
                  Boundary("history", 9500)]
    plan = plan_breakpoints(boundaries, "claude-sonnet-4-6", reserved=2, profile=profile)
    assert [b.layer for b in plan.breakpoints] == ["documents", "history"]
    assert [layer for layer, _ in plan.skipped] == ["examples", "system"]
    assert plan_breakpoints(boundaries, "claude-sonnet-4-6", reserved=4, profile=profile).breakpoints == ()
    with pytest.raises(ValueError, match="distinct layers in prompt order"):
        plan_breakpoints(boundaries[::-1], "claude-sonnet-4-6", profile=profile)
    with pytest.raises(ValueError, match=r"documents layer: a 1h breakpoint may not follow the 5m one of the system"):
        plan_breakpoints([Boundary("system", 2000, "5m"), Boundary("documents", 9000, "1h")], "claude-sonnet-4-6")


def test_unknown_model_gets_the_most_conservative_minimum_with_a_warning() -> None:
    with pytest.warns(UnknownModelWarning, match=r"model 'claude-nova-9-planner-test' has no entry.*"
                                                  r"min cacheable tokens 4096"):
        plan = prompt().breakpoints("claude-nova-9-planner-test")
    assert plan.profile.min_cacheable_tokens == 4096 and plan.breakpoints == ()
    assert "below the 4,096-token minimum of claude-nova-9-planner-test" in plan.explain()


def test_explain_lists_every_candidate() -> None:
    text = prompt().breakpoints("claude-opus-4-7").explain()
    assert text.splitlines()[0].startswith("documents: cache_control ttl=5m after ")
    assert text.splitlines()[-1].startswith("system: no breakpoint (prefix of ")
    assert json.dumps(prompt().to_anthropic("claude-opus-4-7")).count("cache_control") == 3
