"""Find volatile-looking values in text: timestamps, dates, clock times, UUIDs, random ids.

A prompt prefix that contains a value which changes per request (the clock, a
request id) can never be served from a prompt cache. This detector is shared by
the SDK's ``PrefixStabilityError`` guard (refusing such values in stable
layers) and by the miss classifier (:mod:`promptcache.misses.guard`, cause
``volatile_value``).

It is tuned for precision: things that look numeric but are stable content do
not count — version strings (``v7.2``, ``2.14.0``), prices (``$29.95``),
order and ticket numbers (``HL-40718``, ``#100234``, ``CHG-48213``), ranges
(``3-5``), opening hours (``9:00-18:00``), year-months (``2025-07``),
identifiers made of words (``get_service_status``, ``getServiceStatus``).

Kinds (:data:`KINDS`):

- ``datetime``: a date with a time of day: ISO 8601 (``2026-03-18T14:00:23+00:00``,
  ``20260318T140023Z``), RFC 2822 / HTTP dates (``Wed, 18 Mar 2026 14:00:23 GMT``),
  asctime, and common forms (``March 18, 2026 2:30 PM``, ``2026/03/18 14:00``).
- ``date``: a full calendar date without a time (``2026-03-18``, ``March 18, 2026``,
  ``18 Mar 2026``, ``03/18/2026``, ``18.03.2026``); changes daily at most.
- ``time``: a clock time with seconds (``14:00:23``, ``2:30:05 PM``), or with
  minutes when labelled (``current time: 14:05``, ``as of 9:30``), or with
  minutes and AM/PM or a time zone (``Time: 14:05 UTC``, ``at 2:05 PM today``,
  ``09:41 CET``) unless it reads as a schedule: part of a range
  (``9:00 AM - 5:00 PM ET``, ``9:00-17:00``, ``9am-5pm``), after a schedule word
  in its clause (``opens at 9:00 AM``, ``orders placed before 2:00 PM EST``,
  ``deadline 17:30 CEST``), or on a quarter hour with no "now" word near it
  (``the webinar starts 3:00 PM``; a clock reading has any minute,
  ``It is 2:00 PM now`` counts).
- ``unix_time``: a labelled 10- or 13-digit epoch (``timestamp=1773842400``).
- ``uuid``; ``hex_id``: 16+ hex digits mixing letters and digits;
  ``random_id``: a base62 / base64 run of 20+ characters with random-looking
  case and digit changes, or a prefixed id (``toolu_01...``, ``call_...``,
  ``req_8f3kQ2...``); ``request_id``: the value after a request / trace /
  session / correlation id label or an idempotency key; ``jwt``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable

KINDS = ("datetime", "date", "time", "unix_time", "uuid", "hex_id", "random_id", "request_id", "jwt")
TIMESTAMP_KINDS = frozenset({"datetime", "time", "unix_time"})
"""Kinds that change at least every minute."""

_MONTHS = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
_WEEKDAYS = r"(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:rs(?:day)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
_ZONE = r"(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}|[A-Z]{3,4}T))?"
_HMS = r"(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:[.,]\d{1,9})?)?"
_HMS_SECONDS = r"(?:[01]?\d|2[0-3]):[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?"
_AMPM = r"(?:\s?[AaPp]\.?[Mm]\.?)?"
_ISO_DATE = r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
_SLASH_DATE = (r"(?:\d{4}/(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])"
               r"|(?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01])/\d{4}"
               r"|(?:0?[1-9]|[12]\d|3[01])/(?:0?[1-9]|1[0-2])/\d{4}"
               r"|(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.\d{4})")
_WORD_DATE = (rf"(?:{_WEEKDAYS},?\s+)?(?:{_MONTHS}\.?\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?,?\s+\d{{4}}"
              rf"|(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?\s+{_MONTHS}\.?,?\s+\d{{4}})")
_TIME_LABEL = (r"(?i:current\s+(?:time|date(?:\s+and\s+time)?)|time\s+now|right\s+now|now|as\s+of|timestamp"
               r"|generated(?:\s+at)?|(?:last\s+)?updated(?:\s+at)?|retrieved(?:\s+at)?|fetched(?:\s+at)?|sent\s+at)")
_ID_LABEL = (r"(?i:x-request-id|request[_ -]?id|req[_-]id|trace[_ -]?id|traceparent|span[_ -]?id|correlation[_ -]?id"
             r"|session[_ -]?id|run[_ -]?id|message[_ -]?id|idempotency[_ -]?key)")

_EDGE_L = r"(?<![\w.:/+-])"
_EDGE_R = r"(?![\w/+]|[.:]\d|-\w)"


def _word_ok(match: re.Match[str]) -> bool:
    return True


def _random_ok(match: re.Match[str]) -> bool:
    return _looks_random(match.group("v"))


def _hex_ok(match: re.Match[str]) -> bool:
    value = match.group("v")
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


_CLOCK_ZONE = r"(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}|[A-Z]{1,4}T)\b"
_RANGE_BEFORE = re.compile(r"(?:-|\u2013|\u2014|\bto|\buntil|\btill|\band|\bthrough)\s*$", re.I)
_RANGE_AFTER = re.compile(r"^\s*(?:-|\u2013|\u2014|to\b|until\b|till\b|and\b|through\b)\s*\d", re.I)
_SCHEDULE_WORD = re.compile(
    r"\b(?:opens?|opening|open|closes?|closing|closed|from|until|till|between|before|after|by|every|each|daily"
    r"|weekdays?|weekends?|hours|starts?|starting|ends?|cut-?off|deadline|latest|later\s+than|scheduled?|due)\b", re.I)
_NOW_WORD = re.compile(r"\b(?:now|today|tonight|currently|current|time|it\s+is|it's|local)\b", re.I)
_CLAUSE_END = re.compile(r"[.;!?\n]")


def _clock_ok(match: re.Match[str]) -> bool:
    """A minutes-only clock time with AM/PM or a zone: volatile unless it reads as a schedule (see the module doc)."""
    text, start, end = match.string, match.start("v"), match.end("v")
    before, after = text[max(0, start - 40):start], text[end:end + 40]
    if _RANGE_BEFORE.search(before) or _RANGE_AFTER.match(after):
        return False
    clause_before = _CLAUSE_END.split(before)[-1]
    if _SCHEDULE_WORD.search(clause_before):
        return False
    if int(match.group("m")) % 15:  # a clock reading: any minute
        return True
    return bool(_NOW_WORD.search(clause_before) or _NOW_WORD.search(_CLAUSE_END.split(after)[0][:24]))


def _epoch_ok(match: re.Match[str]) -> bool:
    value = int(match.group("v")[:10])
    return 946_684_800 <= value <= 4_102_444_800  # 2000-01-01 .. 2100-01-01


_PATTERNS: list[tuple[str, re.Pattern[str], Callable[[re.Match[str]], bool]]] = [
    ("jwt", re.compile(r"(?P<v>\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,})"), _word_ok),
    ("uuid", re.compile(r"(?P<v>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"), _word_ok),
    ("datetime", re.compile(rf"{_EDGE_L}(?P<v>{_ISO_DATE}(?:T|\s){_HMS}{_ZONE}){_EDGE_R}"), _word_ok),
    ("datetime", re.compile(r"(?P<v>\b\d{4}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3])[0-5]\d(?:[0-5]\d)?Z?\b)"), _word_ok),
    ("datetime", re.compile(rf"(?P<v>\b(?:{_WEEKDAYS},?\s+)?(?:[12]\d|3[01]|0?[1-9])\s+{_MONTHS}\s+\d{{4}}\s+{_HMS}{_ZONE})"), _word_ok),
    ("datetime", re.compile(rf"(?P<v>\b{_WEEKDAYS}\s+{_MONTHS}\s+(?:[12]\d|3[01]|0?[1-9])\s+{_HMS_SECONDS}\s+\d{{4}}\b)"), _word_ok),
    ("datetime", re.compile(rf"(?P<v>\b(?:{_WORD_DATE}|{_SLASH_DATE})(?:,?\s+(?:at\s+)?){_HMS}{_AMPM}{_ZONE})"), _word_ok),
    ("date", re.compile(rf"{_EDGE_L}(?P<v>{_ISO_DATE}){_EDGE_R}"), _word_ok),
    ("date", re.compile(rf"(?P<v>\b{_WORD_DATE})\b"), _word_ok),
    ("date", re.compile(rf"{_EDGE_L}(?P<v>{_SLASH_DATE}){_EDGE_R}"), _word_ok),
    ("time", re.compile(rf"{_EDGE_L}(?P<v>{_HMS_SECONDS}{_AMPM}{_ZONE})(?![\w:])"), _word_ok),
    ("time", re.compile(rf"{_TIME_LABEL}\s*(?:is\s+)?[:=]?\s*(?P<v>(?:[01]?\d|2[0-3]):[0-5]\d{_AMPM}{_ZONE})(?![\w:])"), _word_ok),
    ("time", re.compile(rf"{_EDGE_L}(?P<v>(?:[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?:\s?[AaPp]\.?[Mm]\.?(?:\s?{_CLOCK_ZONE})?"
                        rf"|\s?{_CLOCK_ZONE}))(?![\w:])"), _clock_ok),
    ("unix_time", re.compile(r"(?i:\b(?:time(?:stamp)?|ts|epoch|created(?:_at)?|updated(?:_at)?|issued_at|iat|exp|now)"
                             r"[\"']?\s*[:=]\s*[\"']?)(?P<v>\d{13}|\d{10})\b"), _epoch_ok),
    ("request_id", re.compile(rf"{_ID_LABEL}[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9][\w.:-]{{5,}})"), _word_ok),
    ("hex_id", re.compile(r"(?P<v>\b(?:[0-9a-f]{16,}|[0-9A-F]{16,})\b)"), _hex_ok),
    ("random_id", re.compile(r"(?P<v>\b[a-z][a-z0-9]{1,11}[_-](?:[a-z0-9]{1,11}[_-])?[A-Za-z0-9]{8,}\b)"), _random_ok),
    ("random_id", re.compile(r"(?<![\w+/=-])(?P<v>[A-Za-z0-9+/]{20,}={0,2}|[A-Za-z0-9_-]{20,})(?![\w+/=-])"), _random_ok),
]
_CAMEL_WORDS = re.compile(r"^(?:[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z]))+\d{0,4}$")


def _looks_random(value: str) -> bool:
    """A base62/base64 run (or the tail of a prefixed id) that is not words, numbers or snake_case."""
    prefix = re.match(r"^[a-z][a-z0-9]{1,11}[_-](?:[a-z0-9]{1,11}[_-])?", value)
    tail = value[prefix.end():] if prefix and len(value) - prefix.end() >= 8 else value
    tail = tail.rstrip("=")
    digits = sum(c.isdigit() for c in tail)
    uppers = sum(c.isupper() for c in tail)
    lowers = sum(c.islower() for c in tail)
    if digits == 0 or digits == len(tail) or "_" in tail or (uppers + lowers) == 0:
        return False
    if _CAMEL_WORDS.match(tail):
        return False
    classes = ["d" if c.isdigit() else "u" if c.isupper() else "l" if c.islower() else "o" for c in tail]
    changes = sum(a != b for a, b in zip(classes, classes[1:], strict=False)) / max(1, len(tail) - 1)
    if prefix and tail is not value:  # a prefixed id: the tail mixes letters and digits
        return digits >= 2 and (uppers + lowers) >= 2 and changes >= 0.25
    if uppers and lowers:  # base62 / base64
        return changes >= 0.4
    return digits >= 4 and changes >= 0.4  # single-case base36


@dataclasses.dataclass(frozen=True, order=True)
class VolatileSpan:
    """A volatile-looking value in a text.

    Attributes:
        start, end: character offsets (``text[start:end]`` is the value).
        kind: one of :data:`KINDS`.
        text: the value itself.
    """

    start: int
    end: int
    kind: str
    text: str


def find_volatile(text: str, *, kinds: Iterable[str] | None = None) -> list[VolatileSpan]:
    """All volatile-looking values in ``text``, in order, non-overlapping (the longest wins).

    Args:
        text: any text (a system prompt, a document, a JSON string).
        kinds: restrict to these kinds (default: all of :data:`KINDS`).

    Returns:
        Spans sorted by ``start``; for a labelled value (``request_id: ...``,
        ``current time: 14:05``) the span covers the value, not the label.

    Raises:
        ValueError: an unknown kind in ``kinds``.
    """
    wanted = set(KINDS if kinds is None else kinds)
    unknown = wanted - set(KINDS)
    if unknown:
        raise ValueError(f"unknown volatile kind(s) {sorted(unknown)}; choose from {', '.join(KINDS)}")
    candidates: list[VolatileSpan] = []
    for kind, pattern, accept in _PATTERNS:
        if kind not in wanted:
            continue
        for match in pattern.finditer(text):
            if accept(match):
                start, end = match.span("v")
                candidates.append(VolatileSpan(start, end, kind, text[start:end]))
    kept: list[VolatileSpan] = []
    for span in sorted(candidates, key=lambda s: (s.start - s.end, s.start)):
        if all(span.end <= other.start or span.start >= other.end for other in kept):
            kept.append(span)
    return sorted(kept)


def span_at(spans: Iterable[VolatileSpan], offset: int) -> VolatileSpan | None:
    """The span containing character ``offset`` (``start <= offset < end``), or None."""
    return next((s for s in spans if s.start <= offset < s.end), None)


def is_volatile(value: str) -> bool:
    """True when ``value`` as a whole (surrounding whitespace ignored) is one volatile-looking value."""
    stripped = value.strip()
    spans = find_volatile(stripped)
    return len(spans) == 1 and spans[0].start == 0 and spans[0].end == len(stripped)
