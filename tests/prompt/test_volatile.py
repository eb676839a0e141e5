"""The volatile-value detector: what counts, what must not, and the shared traces' stable layers."""

from __future__ import annotations

import json

import pytest

from promptcache import PromptBuilder, VolatileValueError
from promptcache.prompt.stability import LayerRegistry
from promptcache.prompt.volatile import KINDS, VolatileSpan, find_volatile, is_volatile, span_at

POSITIVE = [
    ("Current time: 2026-03-18T14:00:23+00:00", "datetime", "2026-03-18T14:00:23+00:00"),
    ("Date: Wed, 18 Mar 2026 14:00:23 GMT", "datetime", "Wed, 18 Mar 2026 14:00:23 GMT"),
    ("Wed Mar 18 14:00:23 2026", "datetime", "Wed Mar 18 14:00:23 2026"),
    ("on March 18, 2026 at 2:30 PM sharp", "datetime", "March 18, 2026 at 2:30 PM"),
    ("run 2026/03/18 14:00", "datetime", "2026/03/18 14:00"),
    ("built 20260318T140023Z", "datetime", "20260318T140023Z"),
    ("today is 2026-03-18.", "date", "2026-03-18"),
    ("Wednesday, March 18, 2026", "date", "Wednesday, March 18, 2026"),
    ("due 18 Mar 2026", "date", "18 Mar 2026"),
    ("due 03/18/2026", "date", "03/18/2026"),
    ("due 18.03.2026", "date", "18.03.2026"),
    ("- 2026-01-15: added webhooks", "date", "2026-01-15"),
    ("logged at 14:00:23Z", "time", "14:00:23Z"),
    ("current time: 14:05", "time", "14:05"),
    ("as of 9:30 AM", "time", "9:30 AM"),
    ("Time: 14:05 UTC", "time", "14:05 UTC"),           # a zone: a clock reading, not a schedule
    ("the parcel left at 2:05 PM today", "time", "2:05 PM"),  # AM/PM on an odd minute
    ("It is 2:00 PM now.", "time", "2:00 PM"),           # a quarter hour, but "now"
    ("last sync 09:41 CET", "time", "09:41 CET"),
    ("received 14:05Z", "time", "14:05Z"),
    ('{"timestamp": 1773842400}', "unix_time", "1773842400"),
    ("ts=1773842400123", "unix_time", "1773842400123"),
    ("id 6f1c0b8e-2d7a-4c44-9b1e-8a3f5d2c7e90", "uuid", "6f1c0b8e-2d7a-4c44-9b1e-8a3f5d2c7e90"),
    ("commit 3f9a2c1b7d8e4f60a1b2", "hex_id", "3f9a2c1b7d8e4f60a1b2"),
    ("toolu_01Xb3kQ9zP2mN7vR4tY8wL1c", "random_id", "toolu_01Xb3kQ9zP2mN7vR4tY8wL1c"),
    ("call_JVQAx6L9zT9eWhaoWhGBaMUb", "random_id", "call_JVQAx6L9zT9eWhaoWhGBaMUb"),
    ("deployment dep_7hq2k9sd", "random_id", "dep_7hq2k9sd"),
    ("key dGhpcyBpcyBhIHJhbmRvbSBzdHJpbmc9PQ==", "random_id", "dGhpcyBpcyBhIHJhbmRvbSBzdHJpbmc9PQ=="),
    ("request_id: abc123def", "request_id", "abc123def"),
    ("X-Request-ID=8e1b2c", "request_id", "8e1b2c"),
    ("session_id=sess-42ab9", "request_id", "sess-42ab9"),
    ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
]

NEGATIVE = [
    "Customer Support Handbook (v7.2)", "anthropic 2.14.0 and openai 3.57.0", "Standard shipping costs $6.95; express $29.95",
    "a refund of 12.40 or 5,000.00 USD", "order HL-40718, ticket #100234, change CHG-48213, incident INC-2291",
    "ships in 3-5 business days", "Hours: Mon-Fri 9:00-18:00, Sat 10:00-16:00", "opens at 9:00 AM",
    "lot 2025-08 (recall range) since 2025-07", "get_service_status and getServiceStatusForRegion2", "HMAC-SHA256",
    "POST /v3/webhook_endpoints/{id}/rotate_secret", "ISO 3166-1 alpha-2", "4x6 labels", "t=1773842400,v1=5f2c",
    "rows=1998214 actual time=412.118..2987.502", "p50/p95/p99 latency", "10.0.0.1", "internationalization",
    "https://api.parcelway.example/v3/shipments", "SEV2", "call 555-0142", "ORDER-10045",
    "include the request_id of the failing call", "checkout-api", "99.9% uptime", "2xx responses", "Python 3.11",
    # opening hours and schedules in a handbook: ranges, schedule words, quarter hours
    "Support hours: 9:00-17:00", "Mon-Fri 9am-5pm", "Phone: 9:00 AM - 5:00 PM ET", "chat 9:00 AM\u20136:00 PM PT",
    "Orders placed before 2:00 PM EST ship the same day", "Returns desk closes at 5:30 PM", "deadline 17:30 CEST",
    "open 9:00 AM to 5:45 PM", "The webinar starts 3:00 PM", "Reply by 5:45 PM.", "Pickups every day at 10:15 UTC",
]


@pytest.mark.parametrize(("text", "kind", "value"), POSITIVE)
def test_volatile_values_are_found(text: str, kind: str, value: str) -> None:
    spans = find_volatile(text)
    assert [(s.kind, s.text) for s in spans] == [(kind, value)]
    assert text[spans[0].start:spans[0].end] == value


@pytest.mark.parametrize("text", NEGATIVE)
def test_stable_content_does_not_count(text: str) -> None:
    assert find_volatile(text) == []


def test_every_kind_is_covered() -> None:
    assert {kind for _, kind, _ in POSITIVE} == set(KINDS)


def test_kinds_filter_span_at_and_is_volatile() -> None:
    text = "at 2026-03-18T14:00:23Z, request_id=req-778a9b"
    spans = find_volatile(text)
    assert [s.kind for s in spans] == ["datetime", "request_id"]
    assert find_volatile(text, kinds=["request_id"]) == [spans[1]]
    assert span_at(spans, 10) == spans[0] and span_at(spans, 0) is None
    assert is_volatile(" 6f1c0b8e-2d7a-4c44-9b1e-8a3f5d2c7e90 ") and not is_volatile("order 2026-03-18")
    with pytest.raises(ValueError, match="unknown volatile kind"):
        find_volatile(text, kinds=["color"])


def _stable_text(body: dict) -> str:
    system = body.get("system")
    if system is None:
        system = body["messages"][0]["content"]
    if isinstance(system, list):
        system = "\n\n".join(block["text"] for block in system)
    return system + json.dumps(body.get("tools", []))


def test_shared_traces_stable_layers(traces) -> None:
    """Tools and system prompts of every trace are clean, except the one with the clock at the top."""
    for name, records in traces.items():
        for record in records:
            spans = find_volatile(_stable_text(record.body))
            if name == "bad_timestamp_system":
                assert [(s.kind, s.start) for s in spans] == [("datetime", 14)]
            else:
                assert spans == [], (name, spans)
    assert find_volatile(traces["bad_timestamp_system"][1].body["system"][0]["text"][:60])[0] == VolatileSpan(
        14, 39, "datetime", "2026-03-18T14:00:23+00:00")


def test_the_builder_refuses_clock_times_with_a_zone_or_am_pm_and_keeps_opening_hours() -> None:
    for text in ("Time: 14:05 UTC", "Last update at 2:05 PM today."):
        with pytest.raises(VolatileValueError, match=r"system layer: time value"):
            PromptBuilder(registry=LayerRegistry()).system(text)
    handbook = "Support hours: Mon-Fri 9am-5pm, phone 9:00 AM - 5:00 PM ET. Returns desk closes at 5:30 PM."
    PromptBuilder(registry=LayerRegistry()).system(handbook).document(handbook, name="hours")
