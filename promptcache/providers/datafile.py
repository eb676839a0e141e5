"""The provider rules data: ``promptcache/data/providers.toml``, plus the user's overrides, and its age.

:func:`load_rules` returns the parsed data file (read once per process), merged
with the user's rules file when one is installed with :func:`install_user_rules`
(see :mod:`promptcache.providers.userfile`). :func:`data_age` and
:func:`stale_warning` say how old the data is: the file's ``reviewed`` date is
the day it was last checked against its sources.
"""

from __future__ import annotations

import datetime as _dt
import functools
import tomllib
import warnings
from collections.abc import Mapping
from importlib import resources
from typing import Any

PROVIDERS = ("anthropic", "openai", "gemini", "deepseek", "bedrock")

STALE_AFTER_DAYS = 90
"""``simulate`` warns when the data was last reviewed more than this many days ago."""

DATA_FILE = "promptcache/data/providers.toml"

_user: dict[str, Any] = {"data": None, "origin": None}


class StaleDataWarning(UserWarning):
    """The provider rules were last checked against their sources more than :data:`STALE_AFTER_DAYS` ago."""


@functools.cache
def base_rules() -> Mapping[str, Any]:
    """The installed data file, parsed (read once per process).

    Raises:
        ValueError: the file is not valid TOML or lacks a provider table; the
            message names the file so it can be fixed.
    """
    text = resources.files("promptcache").joinpath("data/providers.toml").read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{DATA_FILE} is not valid TOML: {exc}") from exc
    missing = [p for p in PROVIDERS if p not in data.get("providers", {})]
    if missing:
        raise ValueError(f"{DATA_FILE} lacks [providers.{missing[0]}]")
    return data


def load_rules() -> Mapping[str, Any]:
    """The rules in use: the installed data file, merged with the user's rules file if one is installed."""
    return _user["data"] if _user["data"] is not None else base_rules()


def user_rules_origin() -> str | None:
    """Where the installed user rules came from (a file path, ``pyproject.toml [tool.promptcache.providers]``), or None."""
    return _user["origin"]


def install_user_rules(merged: Mapping[str, Any] | None, origin: str | None = None) -> None:
    """Use ``merged`` (the data file with the user's rules merged in) from now on; None: the installed file only.

    Callers: :func:`promptcache.providers.userfile.use_user_rules`, which validates and merges first.
    """
    _user["data"], _user["origin"] = merged, origin if merged is not None else None


def today() -> _dt.date:
    """The date "today" means for retirement and staleness (the local date; tests pin it)."""
    return _dt.date.today()


def reviewed_on(rules: Mapping[str, Any] | None = None) -> _dt.date:
    """The day the installed data was last checked against its sources (``reviewed``, else ``compiled``)."""
    data = base_rules() if rules is None else rules
    return data.get("reviewed") or data["compiled"]


def data_age(on: _dt.date | None = None) -> int:
    """Days from the installed data's review to ``on`` (default: :func:`today`)."""
    return ((on or today()) - reviewed_on()).days


def stale_warning(on: _dt.date | None = None) -> str | None:
    """The warning text when the data is older than :data:`STALE_AFTER_DAYS` days on ``on`` (default today), else None."""
    age = data_age(on)
    if age <= STALE_AFTER_DAYS:
        return None
    return (f"the provider cache rules were last checked against the providers' docs on "
            f"{reviewed_on().isoformat()} ({age} days ago): prices, minimums and TTLs may have changed since. "
            f"Check `promptcache providers`, upgrade promptcache, or override values with --providers FILE")


def stale_models_warning(dated: Mapping[str, _dt.date | None], on: _dt.date | None = None) -> str | None:
    """The warning text when the values of some of the models ``dated`` maps to their date (the oldest document
    date of the values, :meth:`~promptcache.providers.modelprofile.ModelProfile.values_date`) are older than
    :data:`STALE_AFTER_DAYS` days on ``on`` (default today), else None. A document read recently may be old."""
    day = on or today()
    old = {model: date for model, date in dated.items() if date is not None and (day - date).days > STALE_AFTER_DAYS}
    if not old:
        return None
    named = ", ".join(f"{model} ({date.isoformat()}, {(day - date).days} days ago)"
                      for model, date in sorted(old.items(), key=lambda kv: (kv[1], kv[0])))
    return (f"the cache rules or prices used for {named} come from documents older than {STALE_AFTER_DAYS} days: "
            f"they may have changed since. `promptcache providers` names the sources; override values with "
            f"--providers FILE")


_stale_warned: set[object] = set()


def warn_if_stale(on: _dt.date | None = None, dated: Mapping[str, _dt.date | None] | None = None) -> None:
    """Issue :class:`StaleDataWarning` once per process when :func:`stale_warning` (the file's review) or, given
    ``dated`` (model -> date of its values), :func:`stale_models_warning` has something to say."""
    for key, text in ((reviewed_on(), stale_warning(on)),
                      (tuple(sorted(dated or {})), stale_models_warning(dated or {}, on))):
        if text is not None and key not in _stale_warned:
            _stale_warned.add(key)
            warnings.warn(text, StaleDataWarning, stacklevel=2)
