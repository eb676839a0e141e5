"""A tool-using agent built with the promptcache SDK (OpenAI Chat Completions or Anthropic Messages).

The agent loop every request appends to: the model's tool calls and their
results enter the conversation in order and are never edited, so each step
reads the whole previous step from the cache. The tools are given in any
order and any provider's shape; the builder sorts them by name and writes
canonical JSON (the shared trace ``bad_agent_tool_shuffle`` shows what a
shuffled tool list costs: 0% cached). A tool call is never separated from its
result: the builder refuses a turn that leaves a call unanswered.

Runs offline by default (the real SDK client over a mock transport, see
``offline_provider.py``); ``--live`` uses the real API.

    python examples/tool_agent.py [--provider openai|anthropic] [--print-bodies] [--trace PATH] [--live]
"""

from __future__ import annotations

import json
from typing import Any

import promptcache
from promptcache import Conversation, PromptBuilder

MODELS = {"openai": "gpt-4.1-mini", "anthropic": "claude-sonnet-4-6"}


def _schema(**props: str) -> dict[str, Any]:
    return {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}, "required": sorted(props)}


# Deliberately unordered and mixed shapes: the builder makes them canonical.
TOOLS = [
    {"type": "function", "function": {"name": "query_metrics", "description": "A metric's time series for a service.",
                                      "parameters": _schema(service="string", metric="string", minutes="integer")}},
    {"name": "get_service_status", "description": "Health of a service: status, latency percentiles, error rate.",
     "input_schema": _schema(service="string", region="string")},
    {"type": "function", "function": {"name": "search_runbooks", "description": "Search the runbooks; returns titles and links.",
                                      "parameters": _schema(query="string")}},
    {"name": "list_deployments", "description": "Recent deployments of a service with their versions and authors.",
     "input_schema": _schema(service="string", hours="integer")},
]

RUNBOOK_RULES = "\n".join(f"{i}. {rule}" for i, rule in enumerate([
    "Start with get_service_status for the service named in the alert.",
    "If latency or errors are up, check query_metrics over the last 120 minutes before anything else.",
    "Correlate with list_deployments; a deployment in the hour before the change is the first suspect.",
    "Recommend a rollback only with the deployment version and the metric that supports it.",
    "Link the runbook found with search_runbooks; never invent a runbook link.",
] * 20, 1))

BASE = (PromptBuilder()
        .system("You are Relay, the operations assistant of the platform team. Be precise and brief.")
        .tools(TOOLS)
        .document(RUNBOOK_RULES, name="triage-rules"))

TOOL_RESULTS = {
    "get_service_status": {"status": "degraded", "latency_ms": {"p50": 188, "p95": 912}, "error_rate": 0.0041},
    "query_metrics": {"metric": "latency_ms", "p95_series": [231, 244, 238, 905, 912]},
    "list_deployments": {"deployments": [{"version": "v412", "author": "Engineer B", "minutes_ago": 48}]},
    "search_runbooks": {"results": [{"title": "Checkout latency", "link": "https://runbooks.example.com/checkout"}]},
}
PLAN = [("get_service_status", {"service": "checkout-api", "region": "eu-west-1"}),
        ("query_metrics", {"service": "checkout-api", "metric": "latency_ms", "minutes": 120}),
        ("list_deployments", {"service": "checkout-api", "hours": 6})]


def scripted_model() -> Any:
    """The offline model: three tool calls, then an answer."""
    steps = iter([{"tool_calls": [call]} for call in PLAN] + [
        {"text": "(offline model) p95 rose to 912 ms 48 minutes after deployment v412; roll it back."}])
    return lambda body: next(steps)


def main(argv: list[str] | None = None) -> int:
    from live_api import live_client
    from offline_provider import AGENT_GAPS, OfflineProvider, example_args, recorded_trace, report, wrap_options

    args = example_args(__doc__, argv, provider={"choices": sorted(MODELS), "default": "openai"})

    api = "openai.chat" if args.provider == "openai" else "anthropic.messages"
    provider = OfflineProvider(api, scripted_model(), gaps=AGENT_GAPS)
    if args.live:
        raw = live_client(args.provider)
    else:
        raw = provider.openai_client() if args.provider == "openai" else provider.anthropic_client()
    with recorded_trace(args.trace, "agent.jsonl") as trace:  # kept only if every request succeeds
        client = promptcache.wrap(raw, trace=trace.recording, session="incident-7", guard="raise",
                                  **wrap_options(provider, args.live))
        chat = Conversation(budget_tokens=50_000)
        builder = BASE.history(chat).user("Alert: CheckoutApiLatencyHigh in eu-west-1. Can you take a look?",
                                          context={"on call": "Engineer A"})
        for step in range(8):
            prompt = builder.build()
            if args.provider == "anthropic":
                client.send(prompt, model=MODELS[args.provider], max_tokens=500)
            else:
                client.send(prompt, model=MODELS[args.provider], max_completion_tokens=500, prompt_cache_key="relay")
            calls = chat[-1].tool_calls  # the reply was appended to the conversation by send()
            print(f"step {step + 1}: "
                  f"{'calls ' + ', '.join(c.name for c in calls) if calls else 'answers: ' + chat[-1].text}")
            if not calls:
                break
            builder = BASE.history(chat)
            for call in calls:
                builder = builder.tool_result(call.id, TOOL_RESULTS[call.name])
    if args.print_bodies:
        print(json.dumps(prompt.to_openai_chat(MODELS["openai"]) if args.provider == "openai"
                         else prompt.to_anthropic(MODELS["anthropic"]), indent=1)[-3000:])
    print(f"tools in the order sent: {', '.join(t.name for t in prompt.tools)}")
    return report(client, step + 1, trace.path)


if __name__ == "__main__":
    from live_api import run

    raise SystemExit(run(main))
