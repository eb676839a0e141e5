"""Option parsing shared by several commands (``simulate`` and ``verify``)."""

from __future__ import annotations

import math

import click


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
        click.BadParameter: not a number, a bare number above 1 (the message says
            to write ``0.8`` or ``80%``), or outside 0..1 / 0%..100%.
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
    if number > 1:
        raise click.BadParameter(f"{value!r} is above 1: a bare number is a fraction in 0..1, so use 0.8 "
                                 f"or 80% (write {number:g}% for a percentage)")
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
