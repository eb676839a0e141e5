"""Per-request overhead of the prompt builder: build + render, and tokenisation, separately.

Workload (issue 3, "Acceptance"): a prompt with 40 tools, a ~20k-token
document and a 30-turn conversation (60 messages). Each measured request asks a
new question, so the turn is new every time while the stable layers and the
history are reused, as in a running app. Reported in microseconds per request
(median over ``--requests`` requests, after one warm-up request):

- ``build (shared base)``: ``base.history(conversation).user(q).build()``, the
  recommended pattern (a module-level base builder holds the stable layers);
- ``build (all layers per request)``: every builder call per request
  (``system``, ``tools`` with 40 tool dicts, ``document``, ``history``, ``user``);
- ``to_anthropic`` (with the breakpoint planner), ``to_openai_chat``, ``to_openai_responses``;
- tokenisation: ``to_tokens()`` (the whole prompt through ChatML / cl100k; each message's ids come from the
  per-message memo of :func:`promptcache.tokens.chatml.encode_message`, so only the new turn is encoded) and
  ``count_tokens()`` (memoised per layer and per message; only the new turn is encoded).

Goal: the builder's own work (build + ``to_anthropic``), excluding
tokenisation, under 1,000 us per request; reported for both build patterns. The first request of a
process pays the one-off normalisation and counting of the stable layers; it
is reported separately (``first request``).

Usage:  python bench/sdk_overhead.py [--requests 200]
Prints one JSON object, then a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from promptcache import Conversation, PromptBuilder
from promptcache.tokens.chatml import chatml_encoding
from promptcache.prompt.stability import LayerRegistry

TOPICS = ("orders", "returns", "refunds", "warranty", "shipping", "inventory", "accounts", "payments")
WORDS = ("customer order parcel courier refund warranty section policy staff store stock return label invoice "
         "exchange colour size delivery region carrier damage photo claim review approve note team window").split()


def make_tools(count: int = 40) -> list[dict[str, Any]]:
    """``count`` OpenAI-shaped function tools with 3-6 typed parameters each."""
    tools = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        props = {f"{topic}_field_{j}": {"type": "string" if j % 2 else "integer",
                                        "description": f"Field {j} of the {topic} record, as shown in the back office."}
                 for j in range(3 + i % 4)}
        tools.append({"type": "function", "function": {
            "name": f"{topic}_action_{i:02d}",
            "description": f"Run action {i} on {topic}: look the record up, check the policy and report the result.",
            "parameters": {"type": "object", "properties": props, "required": sorted(props)[:2]}}})
    return tools


def make_document(target_tokens: int = 20_000) -> str:
    """A handbook of numbered sections, about ``target_tokens`` cl100k tokens."""
    enc = chatml_encoding()
    lines, tokens, i = [], 0, 0
    while tokens < target_tokens:
        i += 1
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(24))
        line = f"Section {i}. {words.capitalize()}."
        lines.append(line)
        tokens += len(enc.encode(line)) + 1
    return "\n".join(lines)


def make_conversation(turns: int = 30) -> Conversation:
    conversation = Conversation()
    for i in range(turns):
        conversation.append({"role": "user", "content": f"Question {i}: what does section {i + 3} say about refunds?"})
        conversation.append({"role": "assistant", "content": f"Section {i + 3} says refunds take five business "
                                                             f"days after the return is scanned. " * 3})
    return conversation


def per_request(fn: Callable[[int], Any], requests: int) -> float:
    """Median microseconds of ``fn(i)`` over ``requests`` calls (after one warm-up)."""
    fn(-1)
    times = []
    for i in range(requests):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="measured requests per row (median reported)")
    args = parser.parse_args(argv)
    chatml_encoding()  # load the tokenizer outside the timings
    tools, document, conversation = make_tools(), make_document(), make_conversation()
    system = "You are the back-office assistant. Use the tools; quote the handbook section you rely on."
    registry = LayerRegistry()

    def full_builder() -> PromptBuilder:
        return PromptBuilder(registry=registry).system(system).tools(tools).document(document, name="handbook")

    start = time.perf_counter()
    base = full_builder()
    first_prompt = base.history(conversation).user("First question").build()
    first_prompt.to_anthropic("claude-sonnet-4-6")
    first_us = (time.perf_counter() - start) * 1e6

    prompts = {i: base.history(conversation).user(f"Question number {i}?").build() for i in range(-1, args.requests)}
    token_prompts = {i: base.history(conversation).user(f"Token question {i}?").build() for i in range(-1, args.requests)}
    count_prompts = {i: base.history(conversation).user(f"Count question {i}?").build() for i in range(-1, args.requests)}
    render_prompts = {i: base.history(conversation).user(f"Render question {i}?").build()
                      for i in range(-1, args.requests)}
    rows = {
        "build (shared base)": per_request(lambda i: base.history(conversation).user(f"Build {i}?").build(),
                                           args.requests),
        "build (all layers per request)": per_request(
            lambda i: full_builder().history(conversation).user(f"Full {i}?").build(), args.requests),
        "to_anthropic (with planner)": per_request(lambda i: render_prompts[i].to_anthropic("claude-sonnet-4-6"),
                                                   args.requests),
        "to_openai_chat": per_request(lambda i: prompts[i].to_openai_chat("gpt-4.1-mini", prompt_cache_key="bo"),
                                      args.requests),
        "to_openai_responses": per_request(lambda i: prompts[i].to_openai_responses("gpt-4.1-mini"), args.requests),
        "to_tokens (whole prompt)": per_request(lambda i: token_prompts[i].to_tokens(), args.requests),
        "count_tokens (memoised)": per_request(lambda i: count_prompts[i].count_tokens(), args.requests),
    }
    builder_us = rows["build (shared base)"] + rows["to_anthropic (with planner)"]
    naive_us = rows["build (all layers per request)"] + rows["to_anthropic (with planner)"]
    result = {
        "benchmark": "sdk_overhead",
        "workload": {"tools": len(first_prompt.tools), "document_tokens": len(chatml_encoding().encode(document)),
                     "history_messages": len(first_prompt.history), "prompt_tokens": first_prompt.count_tokens()},
        "us_per_request": {name: round(value, 1) for name, value in rows.items()},
        "first_request_us": round(first_us, 1),
        "builder_us_per_request": round(builder_us, 1),
        "builder_all_layers_us_per_request": round(naive_us, 1),
        "tokenisation_us_per_request": round(rows["to_tokens (whole prompt)"], 1),
        "goal": "build + to_anthropic under 1000 us per request, excluding tokenisation",
        "goal_met": builder_us < 1000,
        "goal_met_all_layers_per_request": naive_us < 1000,
    }
    print(json.dumps(result, indent=2))
    print()
    print(f"{'step':<34} {'us/request':>12}")
    print("-" * 47)
    for name, value in rows.items():
        print(f"{name:<34} {value:>12.1f}")
    print("-" * 47)
    print(f"{'builder (build + to_anthropic)':<34} {builder_us:>12.1f}   goal < 1000: {'met' if builder_us < 1000 else 'NOT met'}")
    print(f"{'builder, all layers per request':<34} {naive_us:>12.1f}   goal < 1000: "
          f"{'met' if naive_us < 1000 else 'NOT met'}")
    print(f"{'first request (cold caches)':<34} {first_us:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
