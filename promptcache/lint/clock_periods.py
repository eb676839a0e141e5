"""How often a clock read changes, read from the syntax that keeps part of it (PC101's "once a day", "once an
hour", "every minute").

A clock read is per request unless the code keeps only a coarser unit of it:

- a strftime format or an f-string / ``str.format`` spec: ``%Y-%m-%d`` a day, ``%H:00`` an hour, ``%H:%M`` a
  minute, ``%B %Y`` a month, ``%Y`` a year (a zone, ``%Z``, is fixed per process; ``%%`` is a literal ``%``);
- a field or method of a ``datetime``: ``now.hour``, ``now.minute``, ``now.day``, ``now.date()``, ``now.year``;
- ``now.isoformat(timespec="hours" | "minutes")``; ``now.replace(minute=0, second=0, microsecond=0)`` (each unit
  below the one kept set);
- a floor division of a timestamp in seconds (``time.time()``, ``now.timestamp()``, maybe through ``int()`` or a
  name bound only to one): ``int(time.time() // 3600)`` an hour, ``// 60`` a minute.

A period is one of :data:`PERIODS`; ``""`` is per request. A clock kept to the month or the year changes the
prefix at most twelve times a year: no cache rule reports it (:func:`promptcache.lint.sources.as_period`).
"""

from __future__ import annotations

import re
import string

import libcst as cst

from promptcache.lint.expressions import int_value
from promptcache.lint.index import ModuleIndex, Scope

PERIODS = ("minute", "hour", "day", "month", "year")  # finest first

_TIME_DIRECTIVES = re.compile(r"%[-#]?[HIMSfpXcTrRsLlkzZ]")
_BELOW_HOUR = re.compile(r"%[-#]?[MSfXcTrRs]")  # minutes or finer (%R is %H:%M, %T / %X / %c / %r hold seconds)
_BELOW_MINUTE = re.compile(r"%[-#]?[SfXcTrs]")
_DAY_DIRECTIVES = re.compile(r"%[-#]?[dejaAwuUWVxDF]")  # a day of the month, year or week (%x / %D / %F: a date)
_MONTH_DIRECTIVES = re.compile(r"%[-#]?[mbBh]")
_YEAR_DIRECTIVES = re.compile(r"%[-#]?[YyGCmbBh]")
_FIELDS = {"hour": "hour", "minute": "minute", "day": "day", "month": "month", "year": "year"}
_DATE_METHODS = frozenset({"date", "weekday", "isoweekday", "toordinal"})
_TIMESPECS = {"hours": "hour", "minutes": "minute"}
# `replace(...)` setting each unit up to this one keeps this period: microseconds only, the second is still there
_REPLACED = (("microsecond", ""), ("second", "minute"), ("minute", "hour"), ("hour", "day"))


def clock_period(fmt: cst.BaseExpression | None) -> str:
    """How often a clock formatted with ``fmt``, a literal strftime format, changes (:data:`PERIODS`); ``""`` for
    seconds or finer, or a format that is not a literal."""
    text = fmt.evaluated_value if isinstance(fmt, cst.SimpleString) else None
    return format_period(text) if isinstance(text, str) else ""


def format_period(text: str) -> str:
    """:func:`clock_period` of a format's text (``"%H:%M"``: ``"minute"``); ``""`` without a directive."""
    if "%" not in text:
        return ""
    text = re.sub(r"%[-#]?[zZ]", "", text.replace("%%", ""))  # a literal %, and the zone: fixed per process
    if _TIME_DIRECTIVES.search(text):
        return "" if _BELOW_MINUTE.search(text) else "minute" if _BELOW_HOUR.search(text) else "hour"
    if _DAY_DIRECTIVES.search(text) or not _YEAR_DIRECTIVES.search(text):  # (an unknown directive: a date)
        return "day"
    return "month" if _MONTH_DIRECTIVES.search(text) else "year"


def field_period(attr: str) -> str:
    """``now.hour`` keeps the hour: the period of a ``datetime`` field read (``""`` for any other attribute)."""
    return _FIELDS.get(attr, "")


def method_period(method: str, call: cst.Call) -> str:
    """The period of ``now.<method>(...)``: ``strftime``, ``date()``, ``isoformat(timespec=...)``, ``replace(...)``."""
    args = call.args
    if method == "strftime" and args:
        return clock_period(args[0].value)
    if method in _DATE_METHODS and not args:
        return "day"
    if method == "isoformat":
        spec = next((a.value for a in args if a.keyword is not None and a.keyword.value == "timespec"), None)
        return _TIMESPECS.get(spec.evaluated_value, "") if isinstance(spec, cst.SimpleString) else ""
    if method == "replace":
        zeroed = {a.keyword.value for a in args if a.keyword is not None and int_value(a.value) is not None}
        kept = ""
        for unit, period in _REPLACED:  # each unit below the one kept must be set
            if unit not in zeroed:
                return kept
            kept = period
        return kept
    return ""


def division_period(op: cst.BinaryOperation, index: ModuleIndex, scope: Scope) -> str:
    """``time.time() // 3600``: a timestamp divided down to at least a minute. The divisor is read in the
    timestamp's unit (:func:`_unit`): ``time.time_ns() // 60_000_000_000`` and ``int(time.time() * 1000) // 60000``
    keep minutes too. Not an id, a random number or a number of unknown unit."""
    divisor = int_value(op.right) if isinstance(op.operator, cst.FloorDivide) else None
    unit = _unit(op.left, index, scope) if divisor is not None else None
    if unit is None or divisor * unit < 60:
        return ""
    seconds = divisor * unit
    return "minute" if seconds < 3600 else "hour" if seconds < 86400 else "day"


_NS = 1e-9


def _unit(expr: cst.BaseExpression, index: ModuleIndex, scope: Scope, depth: int = 0) -> float | None:
    """The seconds one unit of the timestamp ``expr`` stands for: 1 for ``time.time()`` and ``now.timestamp()``,
    1e-9 for ``time.time_ns()``, scaled by a product or a floor division with a number (``time.time() * 1000``:
    milliseconds), maybe through ``int()`` / ``float()`` / ``round()``, or of a name bound only to one; None when
    ``expr`` is no timestamp."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("int", "float", "round") \
            and len(expr.args) == 1:
        expr = expr.args[0].value
    if isinstance(expr, cst.Call):
        qualified = index.qualified(expr.func, scope)
        if qualified == "time.time" or isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "timestamp" \
                and not expr.args:
            return 1.0
        return _NS if qualified == "time.time_ns" else None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.FloorDivide)):
        factor = int_value(expr.right)
        unit = _unit(expr.left, index, scope, depth) if factor else None
        if unit is None:
            return None
        return unit / factor if isinstance(expr.operator, cst.Multiply) else unit * factor
    if isinstance(expr, cst.Name) and depth < 2:
        bindings = index.lookup(expr.value, scope)[1]
        units = {_unit(b.value, index, b.scope, depth + 1) if b.kind == "assign" and isinstance(b.value, cst.BaseExpression)
                 else None for b in bindings}
        return units.pop() if len(units) == 1 else None
    return None


def format_periods(template: cst.BaseExpression, call: cst.Call) -> dict[int, str]:
    """``"{:%H:%M}".format(now)``: ``id(argument)`` -> the period its replacement field's spec keeps, for the
    arguments of ``template.format(...)`` whose field has a strftime spec."""
    text = template.evaluated_value if isinstance(template, cst.SimpleString) else None
    if not isinstance(text, str):
        return {}
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    seen: dict[int, list[str]] = {}
    auto = 0
    try:
        fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name is not None]
    except ValueError:
        return {}
    for name, spec in fields:
        key = name.split(".")[0].split("[")[0]
        if key == "":
            key, auto = str(auto), auto + 1
        arg = positional[int(key)] if key.isdigit() and int(key) < len(positional) else keywords.get(key)
        if arg is not None:
            seen.setdefault(id(arg), []).append(format_period(spec) if spec else "")
    # an argument in two fields changes as often as its finest one
    return {arg: min(periods, key=PERIODS.index) for arg, periods in seen.items() if "" not in periods}
