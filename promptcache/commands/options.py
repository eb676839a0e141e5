"""Option parsing shared by several commands (``simulate`` and ``verify``)."""

from __future__ import annotations

import click


def parse_rate(value: str | None) -> float | None:
    """A ``--min-hit-rate`` value as a fraction in 0..1: ``"0.8"``, ``"80%"`` or ``"80"`` all give 0.8.

    Returns:
        None when ``value`` is None (no gate).

    Raises:
        click.BadParameter: not a number, or outside 0..1 (0%..100%).
    """
    if value is None:
        return None
    text = value.strip().rstrip("%")
    try:
        number = float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a rate; use 0.8 or 80%") from None
    number = number / 100 if value.strip().endswith("%") or number > 1 else number
    if not 0 <= number <= 1:
        raise click.BadParameter(f"{value!r} is outside 0..1 (0%..100%)")
    return number
