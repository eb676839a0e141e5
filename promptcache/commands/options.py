"""What ``simulate``, ``verify`` and ``diff`` share on the command line: the ``--min-hit-rate`` type, the
``--strict`` advice and how the trace reader's warnings are printed (capped)."""

from __future__ import annotations

import datetime as _dt
import math
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

import click
from rich.console import Console

from promptcache.errors import DEVELOPER_WARNINGS
from promptcache.trace.output_path import check_writable_file
from promptcache.trace.records import TraceFormatWarning

STRICT_ADVICE = "(run without --strict to report it as a warning and go on)"
"""Appended to the error a malformed line or body gives under ``--strict``, by every command."""

MAX_LINE_WARNINGS = 10
"""Malformed trace lines named one by one; the rest are counted in one line."""


def warn_then_exit_on_error(caught: Iterable[warnings.WarningMessage], err: Console, error: str | None) -> None:
    """Print ``caught`` (:func:`print_warnings`), then, when reading failed, ``error: ...`` and exit 2.

    The shared end of reading a trace or body in ``simulate``, ``verify`` and ``diff``.

    Raises:
        SystemExit: code 2 when ``error`` is not None.
    """
    print_warnings(caught, err)
    if error is not None:
        err.print(f"error: {error}", markup=False)
        sys.exit(2)


def print_warnings(caught: Iterable[warnings.WarningMessage], err: Console, limit: int = MAX_LINE_WARNINGS) -> None:
    """Print caught warnings as ``warning: ...`` lines, each text once, in order.

    Trace warnings (:class:`~promptcache.trace.records.TraceFormatWarning`, one per
    malformed line) are capped: the first ``limit`` are printed, then one line
    ``... and N more lines skipped`` (``N more trace problems`` when some were
    not skipped lines), so a wrong kind of file does not flood the terminal.
    Other warnings are all printed, except :data:`~promptcache.errors.DEVELOPER_WARNINGS`.
    """
    shown, hidden, hidden_skips = 0, 0, 0
    for w in {str(w.message): w for w in caught}.values():
        if issubclass(w.category, DEVELOPER_WARNINGS):
            continue
        if issubclass(w.category, TraceFormatWarning):
            if shown >= limit:
                hidden += 1
                hidden_skips += str(w.message).endswith("; line skipped")
                continue
            shown += 1
        err.print(f"warning: {w.message}", markup=False)
    if hidden:
        what = "lines skipped" if hidden_skips == hidden else "trace problems"
        err.print(f"warning: ... and {hidden} more {what} (the first {limit} are shown)", markup=False)


def parse_rate(value: str | None) -> float | None:
    """A ``--min-hit-rate`` value as a fraction in 0..1.

    Two unambiguous forms: a fraction in ``[0, 1]`` (``"0.8"``, ``"1"`` = 100%)
    or a percentage with ``%`` in ``[0%, 100%]`` (``"80%"``, ``"12.5%"``). A bare
    number above 1 is refused rather than guessed at: ``"2"`` could mean 2% or
    a mistyped fraction, and ``"1"`` and ``"1.5"`` would otherwise mean 100%
    and 1.5%.

    Returns:
        None when ``value`` is None (no gate).

    Raises:
        click.BadParameter: not a number, a bare number above 1 (``80 is above 1: a
            bare number is a fraction in 0..1; write 0.8 or 80%``), or outside 0..1 / 0%..100%.
    """
    return None if value is None else _rate(value)


def _rate(value: str) -> float:
    text = value.strip()
    percent = text.endswith("%")
    try:
        number = float(text[:-1] if percent else text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate; use 0.8 or 80%") from None
    if not math.isfinite(number):
        raise click.BadParameter(f"{value!r} is not a rate; use 0.8 or 80%")
    if percent:
        if not 0 <= number <= 100:
            raise click.BadParameter(f"{value!r} is outside 0%..100%; use 0.8 or 80%")
        return number / 100
    if number > 1:  # the fraction and the percentage it may have meant, said once
        meant = f"{number / 100:g} or {number:g}%" if number <= 100 else "0.8 or 80%"
        raise click.BadParameter(f"{text} is above 1: a bare number is a fraction in 0..1; write {meant}")
    if number < 0:
        raise click.BadParameter(f"{value!r} is below 0; use 0.8 or 80%")
    return number


class HitRate(click.ParamType):
    """The click type of ``--min-hit-rate``: :func:`parse_rate`, with the option named in errors."""

    name = "RATE"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            return _rate(str(value))
        except click.BadParameter as exc:
            self.fail(exc.message, param, ctx)


HIT_RATE = HitRate()
"""``type=HIT_RATE`` for a ``--min-hit-rate`` option."""


class AsOfDate(click.ParamType):
    """The click type of ``--as-of``: an ISO date ``YYYY-MM-DD`` (a :class:`datetime.date`), the option named in
    errors (``Invalid value for '--as-of': 'yesterday' is not a date (YYYY-MM-DD)``)."""

    name = "YYYY-MM-DD"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> _dt.date:
        if isinstance(value, _dt.date):
            return value
        text = str(value).strip()
        try:
            if len(text) != 10:
                raise ValueError
            return _dt.date.fromisoformat(text)
        except ValueError as exc:
            reason = f": {exc}" if str(exc) and "isoformat" not in str(exc) else ""
            self.fail(f"{value!r} is not a date (YYYY-MM-DD){reason}", param, ctx)


AS_OF = AsOfDate()
"""``type=AS_OF`` for an ``--as-of`` option."""


def gate(threshold: float, passed: bool) -> dict[str, float | bool]:
    """The ``summary.gate`` object of ``--format json`` under ``--min-hit-rate``: ``{"min_hit_rate": 0.8 (a
    fraction in 0..1), "passed": false}``; ``passed`` is false exactly when the command exits non-zero for
    the gate."""
    return {"min_hit_rate": threshold, "passed": passed}


def writable_file(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """A click callback: a file option (``--html FILE``, ``-o FILE``) that cannot be written is a usage error
    before any work runs (:func:`~promptcache.trace.output_path.check_writable_file` says why)."""
    if value is not None:
        try:
            check_writable_file(value)
        except OSError as problem:
            raise click.BadParameter(f"cannot write {value}: {problem}", ctx=ctx, param=param) from None
    return value


def skipped_lines(caught: Iterable[warnings.WarningMessage]) -> list[str]:
    """The trace reader's message for each line or body it skipped, from recorded warnings."""
    return [str(w.message) for w in caught if issubclass(w.category, TraceFormatWarning)]
