"""Rule overrides (``--rule NAME=VALUE``, a ``--providers`` file): checked against the :class:`ModelProfile` fields."""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from promptcache.providers.datafile import PROVIDERS, load_rules
from promptcache.providers.modelprofile import ModelProfile

_PROFILE_FIELDS = {f.name for f in dataclasses.fields(ModelProfile)}
_NOT_RULES = ("provider", "model", "entry", "family", "known", "api", "as_of", "sources",
              "price_tiers", "retired", "successor", "assumed")
"""Fields that describe the model or its data rather than a cache rule: no `--rule` for them."""
_AT_LEAST_ONE = ("cached_token_step", "lookback_blocks", "unit_tokens", "overflow_requests_per_minute")
_CACHING_MODES = ("explicit_breakpoints", "automatic_prefix", "implicit", "prefix_units")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Check rule overrides (``--rule NAME=VALUE``) against the :class:`ModelProfile` fields, before any use.

    Every field but the identity ones (``provider``, ``model``, ``entry``, ``family``,
    ``known``, ``api``, ``as_of``, ``sources`` and the data fields ``price_tiers``, ``retired``,
    ``successor``, ``assumed``) can be overridden, with a value of
    the field's type: token counts, steps and limits are whole numbers >= 0
    (``cached_token_step``, ``lookback_blocks``, ``unit_tokens``,
    ``overflow_requests_per_minute`` >= 1); multipliers, prices and seconds are
    numbers >= 0; ``null`` (None) where the field allows it (no limit); a choice
    for ``caching`` and ``unit_rule``; ``true``/``false`` for ``refresh_on_read``;
    ``{label: number}`` for ``ttl_seconds`` and ``write_multipliers``.

    Returns:
        The overrides, with whole numbers given for float fields made floats.

    Raises:
        ValueError: naming the override, what it got and what it takes.
    """
    hints = typing.get_type_hints(ModelProfile)
    out: dict[str, Any] = {}
    for name, value in overrides.items():
        if name not in hints:
            raise ValueError(f"unknown rule override {name!r}; the rules are: "
                             + ", ".join(sorted(set(hints) - set(_NOT_RULES))))
        if name in _NOT_RULES:
            raise ValueError(f"rule override {name}: {name} identifies the model, it is not a rule; "
                             f"use --model / --provider / --as-of instead")
        hint = hints[name]
        args = typing.get_args(hint)
        base = next((a for a in args if a is not type(None)), hint) if args and type(None) in args else hint
        where = f"rule override {name}={value!r}"
        if value is None:
            if type(None) not in args:
                raise ValueError(f"{where}: {name} cannot be null")
            out[name] = None
        elif base is int:
            least = 1 if name in _AT_LEAST_ONE else 0
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= least):
                raise ValueError(f"{where}: expected a whole number >= {least}" + (" (or null: no limit)"
                                                                                    if type(None) in args else ""))
            out[name] = value
        elif base is float:
            if not (_is_number(value) and value >= 0):
                raise ValueError(f"{where}: expected a number >= 0")
            out[name] = float(value)
        elif base is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{where}: expected true or false")
            out[name] = value
        elif base is str:
            choices = _CACHING_MODES if name == "caching" else tuple(dict.fromkeys(
                c for p in PROVIDERS for c in load_rules()["providers"][p].get(f"{name}_alternatives", ()))) or None
            if not isinstance(value, str) or (choices and value not in choices):
                raise ValueError(f"{where}: expected " + (f"one of {', '.join(choices)}" if choices else "a string"))
            out[name] = value
        else:  # ttl_seconds, write_multipliers: {label: number}
            if not (isinstance(value, Mapping) and value and all(isinstance(k, str) and _is_number(v) and v >= 0
                                                                  for k, v in value.items())):
                raise ValueError(f"{where}: expected an object of TTL label -> number >= 0, e.g. {{\"5m\": 300}}")
            out[name] = MappingProxyType(dict(value))
    return out
