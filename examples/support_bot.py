"""A customer-support chat bot built with the promptcache SDK (Anthropic Messages API).

The good layout, by construction:

- tools, then the system instructions, then the handbook as a document: the
  stable prefix, byte-identical on every request of every customer, with cache
  breakpoints planned at the layer boundaries (minimum cacheable tokens of the model);
- per-request facts (the customer, their local time) in the newest user turn
  via ``context=``, never in the system prompt;
- one append-only :class:`promptcache.Conversation` per customer, truncated
  in large chunks if it ever passes its token budget.

Runs offline by default (the real ``anthropic`` client over a mock transport,
see ``offline_provider.py``); ``--live`` sends to the real API
(``ANTHROPIC_API_KEY``). Prints each request's cache usage, validates the
recorded trace, and ``--print-bodies`` shows the exact JSON sent.

    python examples/support_bot.py [--print-bodies] [--trace PATH] [--live]
"""

from __future__ import annotations

import json

import promptcache
from promptcache import Conversation, PromptBuilder

MODEL = "claude-sonnet-4-6"

INSTRUCTIONS = """\
You are Harbor, the chat assistant of Harborline Outfitters, an online shop for camping and paddling gear.
Answer in two to four short sentences. Quote the handbook section you rely on, e.g. "(handbook 4.2)".
Use the tools to look orders up; never guess an order status. Hand over to a person when the customer asks.
"""

POLICIES = [
    ("Returns", "Unused items can be returned within 45 days of delivery for a full refund to the original payment."),
    ("Worn items", "Worn or used items can be exchanged within 45 days if they failed under normal use."),
    ("Refund timing", "Refunds are issued within 5 business days after the return parcel is scanned at the warehouse."),
    ("Warranty", "Tents, poles and stoves carry a three-year warranty against defects in materials and workmanship."),
    ("Shipping", "Standard shipping takes 3 to 6 business days; express takes 1 to 2 business days."),
    ("Canada", "Orders to Canada ship with duties prepaid; kayaks and canoes ship by freight only."),
    ("Price adjustment", "If an item's price drops within 14 days of purchase, the difference is refunded once."),
    ("Rewards", "Members earn one point per dollar; 500 points convert to a 25 dollar reward."),
]


def handbook() -> str:
    """The support handbook: numbered sections with the policy and how staff apply it."""
    sections = []
    for i, (title, rule) in enumerate(POLICIES, 1):
        steps = "\n".join(f"   {i}.{k}. {text}" for k, text in enumerate([
            f"Check that the request is about {title.lower()} and read the order first.",
            "Confirm the order number and one verification factor (email or billing postal code).",
            f"Apply the rule exactly as written: {rule}",
            "Explain the next step, the expected timing and how the customer will be notified.",
            "Offer to hand over to a person if the customer disagrees or the case is unusual.",
        ], 1))
        sections.append(f"## {i}. {title}\n\n{rule}\n\nHow staff apply it:\n{steps}")
    return "# Harborline support handbook\n\n" + "\n\n".join(sections * 3)


TOOLS = [
    {"name": "start_return", "description": "Start a return for an order line and email the customer a label.",
     "input_schema": {"type": "object", "properties": {"order_number": {"type": "string"},
                                                       "sku": {"type": "string"}},
                      "required": ["order_number", "sku"]}},
    {"name": "lookup_order", "description": "Look up an order: status, items, delivery date, return window.",
     "input_schema": {"type": "object", "properties": {"order_number": {"type": "string"},
                                                       "postal_code": {"type": "string"}},
                      "required": ["order_number"]}},
]

# Built once at import: the stable layers every request shares.
BASE = (PromptBuilder().tools(TOOLS).system(INSTRUCTIONS).document(handbook(), name="handbook")
        .cache_ttl(documents="1h"))  # the handbook changes rarely: keep it (and what precedes it) for an hour

CUSTOMERS = {
    "sup-001": ("Customer A", "09:12", ["My tent pole cracked on the second trip. What are my options?",
                                        "Can I get a replacement pole instead of a refund?",
                                        "Thanks. How long does the replacement take?"]),
    "sup-002": ("Customer B", "14:40", ["Do you ship kayaks to Canada?", "Are duties included?"]),
}


def scripted_reply(body: dict) -> dict:
    """The offline model: a short answer naming the question it got."""
    question = body["messages"][-1]["content"][-1]["text"].split("\n\n")[-1]
    return {"text": f"(offline model) Here is what the handbook says about: {question[:60]}"}


def main(argv: list[str] | None = None) -> int:
    from live_api import live_client
    from offline_provider import OfflineProvider, example_args, recorded_trace, report, wrap_options

    args = example_args(__doc__, argv)

    provider = OfflineProvider("anthropic.messages", scripted_reply)
    raw = live_client("anthropic") if args.live else provider.anthropic_client()
    turns = [(session, i) for i in range(3) for session in CUSTOMERS if i < len(CUSTOMERS[session][2])]
    with recorded_trace(args.trace, "support_bot.jsonl") as trace:  # kept only if every request succeeds
        client = promptcache.wrap(raw, trace=trace.recording, guard="raise", **wrap_options(provider, args.live))
        chats = {session: Conversation(budget_tokens=20_000) for session in CUSTOMERS}
        for session, i in turns:
            name, local_time, questions = CUSTOMERS[session]
            prompt = BASE.history(chats[session]).user(
                questions[i], context={"customer": name, "local time": local_time}).build()
            if i == 0 and session == "sup-001":
                print(prompt.breakpoints(MODEL).explain(), end="\n\n")
            response = client.send(prompt, model=MODEL, max_tokens=400, session=session)  # appends turn + reply
            usage = response.usage
            print(f"{session} turn {i + 1}: read {usage.cache_read_input_tokens:>5,}  "
                  f"written {usage.cache_creation_input_tokens:>5,}  uncached {usage.input_tokens:>4,}")
            if args.print_bodies:
                print(json.dumps(prompt.to_anthropic(MODEL, max_tokens=400), indent=1)[:3000])
    return report(client, len(turns), trace.path)


if __name__ == "__main__":
    from live_api import run

    raise SystemExit(run(main))
