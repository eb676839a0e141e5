"""Document Q&A built with the promptcache SDK (OpenAI Chat Completions).

The good layout: instructions, then the long reference document, in one
byte-stable system message; the question last. Every user's first request
then shares the ~6k-token prefix (the shared trace ``bad_rag_question_first``
shows the other order: 0% cached). One ``prompt_cache_key`` for the app (not
per user, not per request) routes the requests to the same cache machine.

Runs offline by default (the real ``openai`` client over a mock transport,
see ``offline_provider.py``); ``--live`` uses the real API (``OPENAI_API_KEY``).

    python examples/doc_qa.py [--print-bodies] [--trace PATH] [--live]
"""

from __future__ import annotations

import json

import promptcache
from promptcache import Conversation, PromptBuilder

MODEL = "gpt-4.1-mini"

ENDPOINTS = [
    ("GET", "/v2/shipments", "List shipments, newest first; filter by status, carrier or destination country."),
    ("POST", "/v2/shipments", "Create a shipment from an order; returns the label URL and the tracking number."),
    ("GET", "/v2/shipments/{id}", "One shipment with its parcels, events and the current delivery estimate."),
    ("POST", "/v2/shipments/{id}/cancel", "Cancel a shipment that has not been handed to the carrier yet."),
    ("GET", "/v2/rates", "Quote rates for a parcel: weight in grams, dimensions in millimetres, origin, destination."),
    ("POST", "/v2/pickups", "Book a carrier pickup window for one or more shipments at a warehouse."),
    ("GET", "/v2/webhooks", "List webhook subscriptions and the events each one receives."),
    ("POST", "/v2/webhooks", "Subscribe a URL to events; payloads are signed with the account's webhook secret."),
]


def reference() -> str:
    """The API reference: one section per endpoint with parameters, errors and an example."""
    parts = ["# Parcelpoint API reference (v2)", "All requests need the header `Authorization: Bearer <key>`."]
    for method, path, summary in ENDPOINTS:
        parts.append(f"## {method} {path}\n\n{summary}\n\n"
                     "Parameters:\n" + "\n".join(f"- `{name}`: {text}" for name, text in [
                         ("limit", "page size, 1 to 100, default 20"), ("cursor", "opaque cursor of the next page"),
                         ("expand", "related objects to include: parcels, events, rates"),
                         ("idempotency_key", "repeat a POST safely; kept for 24 hours")]) +
                     "\n\nErrors: `400` invalid parameter (the body names it), `401` bad key, `404` unknown id, "
                     "`409` state conflict (for example cancelling a shipment already in transit), `429` rate "
                     "limited (retry after the `Retry-After` header).\n\nExample:\n"
                     f"    curl -X {method} https://api.parcelpoint.example.com{path} -H 'Authorization: Bearer KEY'")
    return "\n\n".join(parts * 3)


BASE = (PromptBuilder()
        .system("You answer developers' questions about the Parcelpoint API using only the reference below. "
                "Quote the endpoint you rely on; say so when the reference does not cover the question.")
        .document(reference(), name="parcelpoint-api-v2"))

QUESTIONS = {
    "dev-101": ["How do I cancel a shipment that is already with the carrier?"],
    "dev-102": ["What units does the rates endpoint expect?", "And can I get rates for several parcels at once?"],
    "dev-103": ["How are webhook payloads signed?"],
    "dev-104": ["Is POST /v2/shipments safe to retry?"],
}


def scripted_reply(body: dict) -> dict:
    return {"text": f"(offline model) See the reference for: {body['messages'][-1]['content'][:60]}"}


def main(argv: list[str] | None = None) -> int:
    from live_api import live_client
    from offline_provider import OfflineProvider, example_args, recorded_trace, report, wrap_options

    args = example_args(__doc__, argv)

    provider = OfflineProvider("openai.chat", scripted_reply)
    raw = live_client("openai") if args.live else provider.openai_client()
    requests = 0
    with recorded_trace(args.trace, "doc_qa.jsonl") as trace:  # kept only if every request succeeds
        client = promptcache.wrap(raw, trace=trace.recording, guard="raise", **wrap_options(provider, args.live))
        for session, questions in QUESTIONS.items():
            chat = Conversation()
            for question in questions:
                prompt = BASE.history(chat).user(question).build()
                requests += 1
                response = client.send(prompt, model=MODEL, session=session,
                                       prompt_cache_key="parcelpoint-docs-v2", max_completion_tokens=300)
                details = response.usage.prompt_tokens_details
                print(f"{session}: {response.usage.prompt_tokens:>6,} prompt tokens, {details.cached_tokens:>6,} "
                      f"cached  <- {question}")
                if args.print_bodies:
                    print(json.dumps(prompt.to_openai_chat(MODEL, prompt_cache_key="parcelpoint-docs-v2"),
                                     indent=1)[:2000])
    return report(client, requests, trace.path)


if __name__ == "__main__":
    from live_api import run

    raise SystemExit(run(main))
