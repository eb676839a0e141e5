"""A user's provider rules: override or add models without editing the installed ``providers.toml``.

Two places, same layout as ``promptcache/data/providers.toml``:

- a file given with ``--providers FILE`` (``[providers.anthropic]`` defaults,
  ``[[providers.anthropic.models]]`` entries, ``[sources.KEY]``);
- ``[tool.promptcache.providers]`` in the nearest ``pyproject.toml`` (``[tool.promptcache.providers.anthropic]``,
  ``[[tool.promptcache.providers.anthropic.models]]``, ``[tool.promptcache.providers.sources.KEY]``).

A model entry whose ``id`` is already listed is updated field by field; a new ``id`` is added; a
family with a new ``name`` is tried before the installed ones. An entry without ``source`` gets
the source ``user_file`` (the file's name, read on the file's modification date). Every value is
checked against the :class:`~promptcache.providers.modelprofile.ModelProfile` field types before
anything is used: a malformed file raises :class:`ProvidersFileError` naming the file, the entry
and the field.
"""

from __future__ import annotations

import copy
import datetime as _dt
import difflib
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from promptcache.providers import datafile
from promptcache.providers.modelprofile import ModelProfile
from promptcache.providers.overrides import check_overrides
from promptcache.providers.profiles import clear_cache

USER_SOURCE = "user_file"
_FIELDS = {f for f in ModelProfile.__dataclass_fields__}
_IDENTITY = {"provider", "model", "entry", "family", "known", "api", "as_of", "sources"}
_DATA_FIELDS = {"price_tiers", "retired", "successor", "assumed"}
_ENTRY_META = {"source", "read", "field_sources", "price_source", "price_read", "history", "assumed"}
_PROVIDER_META = {"families", "models", "model_prefixes", "min_cacheable_tokens_alternatives",
                  "breakpoint_lookback_alternatives", "unit_rule_alternatives", "api"}


class ProvidersFileError(ValueError):
    """A user's provider rules file is malformed; the message names the file, the entry and what to write."""


def _fail(where: str, text: str) -> None:
    raise ProvidersFileError(f"{where}: {text}")


def _check_entry(entry: Any, where: str, sources: Mapping[str, Any], keys: set[str]) -> None:
    """Check one provider / family / model / history table: known keys, values of the right type."""
    if not isinstance(entry, Mapping):
        _fail(where, f"expected a table, got {type(entry).__name__}")
    rules: dict[str, Any] = {}
    for key, value in entry.items():
        if key in keys or key in _ENTRY_META:
            continue
        if key not in _FIELDS or key in _IDENTITY:
            names = sorted((_FIELDS - _IDENTITY) | keys | _ENTRY_META)
            same_start = [n for n in names if n.split("_")[0] == key.split("_")[0]]
            close = difflib.get_close_matches(key, same_start, n=1, cutoff=0) or \
                difflib.get_close_matches(key, names, n=1)
            _fail(where, f"unknown field {key!r}" + (f"; did you mean {close[0]!r}?" if close else
                                                     "; see `promptcache providers --json` for the field names"))
        if key in _DATA_FIELDS:
            _check_data_field(key, value, where)
        else:
            rules[key] = value
    try:
        check_overrides(rules)
    except ValueError as exc:
        _fail(where, str(exc).replace("rule override ", "field "))
    for key in ("source", "price_source", *entry.get("field_sources", {}).values()):
        name = entry.get(key) if key in ("source", "price_source") else key
        if name is not None and name not in sources:
            _fail(where, f"source {name!r} is not a [sources.{name}] table (add one with `title` and `read`)")
    for key in ("read", "price_read"):
        if key in entry and not isinstance(entry[key], _dt.date):
            _fail(where, f"{key} must be a date (read = 2026-12-01), not {entry[key]!r}")
    for number, past in enumerate(entry.get("history", ())):
        if not isinstance(past, Mapping) or not isinstance(past.get("until"), _dt.date):
            _fail(f"{where} history[{number}]", "each history entry needs `until = YYYY-MM-DD`")
        _check_entry(past, f"{where} history[{number}]", sources, {"until"})


def _check_data_field(key: str, value: Any, where: str) -> None:
    if key == "retired" and not isinstance(value, _dt.date):
        _fail(where, f"retired must be a date (retired = 2026-07-24), not {value!r}")
    if key == "successor" and not isinstance(value, str):
        _fail(where, f"successor must be a model id string, not {value!r}")
    if key == "assumed" and not (isinstance(value, list) and all(v in _FIELDS for v in value)):
        _fail(where, f"assumed must be a list of field names, not {value!r}")
    if key == "price_tiers":
        ok = isinstance(value, list) and all(
            isinstance(t, Mapping) and set(t) <= {"above_tokens", "input_usd_per_mtok", "output_usd_per_mtok"}
            and isinstance(t.get("above_tokens"), int) and t["above_tokens"] >= 0
            and isinstance(t.get("input_usd_per_mtok"), int | float) and t["input_usd_per_mtok"] >= 0
            for t in value)
        if not ok:
            _fail(where, "price_tiers must be a list of { above_tokens = N, input_usd_per_mtok = X, "
                         "output_usd_per_mtok = Y }")


def _stamp(entry: dict[str, Any]) -> None:
    if "source" not in entry:
        entry["source"] = USER_SOURCE
    if "input_usd_per_mtok" in entry and "price_source" not in entry:
        entry["price_source"] = entry["source"]


def merge_user_rules(base: Mapping[str, Any], user: Mapping[str, Any], origin: str,
                     read: _dt.date) -> dict[str, Any]:
    """The data file ``base`` with the user's tables ``user`` (``{"providers": ..., "sources": ...}``) merged in.

    Raises:
        ProvidersFileError: an unknown top-level key, provider or field, a value of the wrong type, a
            model without ``id``, a family without ``name`` / ``match``, an unknown source key.
    """
    extra = set(user) - {"providers", "sources"}
    if extra:
        _fail(origin, f"unknown top-level key {sorted(extra)[0]!r}; expected [providers.NAME] and [sources.KEY]")
    merged = copy.deepcopy(dict(base))
    sources = merged.setdefault("sources", {})
    sources[USER_SOURCE] = {"title": f"user rules: {origin}", "read": read}
    for key, table in user.get("sources", {}).items():
        if not isinstance(table, Mapping) or not isinstance(table.get("read"), _dt.date):
            _fail(f"{origin} [sources.{key}]", "a source needs `title = \"...\"` and `read = YYYY-MM-DD`")
        if "dated" in table and not isinstance(table["dated"], _dt.date):
            _fail(f"{origin} [sources.{key}]", f"dated (the document's own date) must be a date (dated = "
                                               f"2026-11-30), not {table['dated']!r}")
        sources[key] = dict(table)
    providers = user.get("providers", {})
    if not isinstance(providers, Mapping):
        _fail(origin, "providers must be a table ([providers.anthropic], ...)")
    for name, table in providers.items():
        if name not in datafile.PROVIDERS:
            _fail(origin, f"unknown provider {name!r}: a rules file can change or add models of "
                          f"{', '.join(datafile.PROVIDERS)}")
        where = f"{origin} [providers.{name}]"
        _check_entry(table, where, sources, _PROVIDER_META)
        target = merged["providers"][name]
        _overlay(target, {k: v for k, v in table.items() if k not in ("models", "families")}, sources)
        _merge_list(target, table.get("families", []), "name", f"{where} families", sources)
        _merge_list(target, table.get("models", []), "id", f"{where} models", sources)
    return merged


def _overlay(target: dict[str, Any], user: Mapping[str, Any], sources: Mapping[str, Any]) -> None:
    """Lay the user's values over a listed entry: each value the user gives gets the user's source (its
    ``field_sources``, else its ``source``, else ``user_file``); the entry's other values keep theirs; history
    entries are added; a value the user sets is no longer assumed unless the user says so."""
    source = user.get("source", USER_SOURCE)
    own = dict(target.get("field_sources", {}))
    for key, value in user.items():
        if key in _ENTRY_META or key in ("id", "name"):
            continue
        target[key] = copy.deepcopy(value)
        if key in _FIELDS and key not in ("input_usd_per_mtok", "output_usd_per_mtok", "price_tiers"):
            own[key] = source
    own.update(user.get("field_sources", {}))
    if own:
        target["field_sources"] = own
    if any(k in user for k in ("input_usd_per_mtok", "output_usd_per_mtok", "price_tiers")):
        target["price_source"] = user.get("price_source", source)
        target["price_read"] = user.get("price_read", sources[target["price_source"]]["read"])
    target["history"] = [*target.get("history", ()), *copy.deepcopy(user.get("history", []))]
    target["assumed"] = [a for a in target.get("assumed", ()) if a not in user] + list(user.get("assumed", ()))


def _merge_list(target: dict[str, Any], entries: Any, key: str, where: str, sources: Mapping[str, Any]) -> None:
    plural = "families" if key == "name" else "models"
    if not isinstance(entries, list):
        _fail(where, f"expected [[...{plural}]] tables")
    existing = target.setdefault(plural, [])
    for number, entry in enumerate(entries):
        label = f"{where}[{number}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get(key), str) or not entry[key]:
            _fail(label, f"each entry needs {key} = \"...\"" + (" and match = \"regex\"" if key == "name" else ""))
        label = f"{where}[{number}] ({key} {entry[key]!r})"
        _check_entry(entry, label, sources, {"id", "aliases", "name", "match"})
        aliases = entry.get("aliases", [])
        if not (isinstance(aliases, list) and all(isinstance(a, str) and a for a in aliases)):
            _fail(label, f"aliases must be a list of model ids (aliases = [\"claude-y\"]), not {aliases!r}")
        try:
            re.compile(str(entry.get("match", "")))
        except re.error as exc:
            _fail(label, f"match is not a regular expression: {exc}")
        entry = copy.deepcopy(dict(entry))
        found = next((e for e in existing if e.get(key) == entry[key]), None)
        if found is not None:
            _overlay(found, entries[number], sources)
            continue
        _stamp(entry)
        entry.setdefault("read", sources[entry["source"]]["read"])
        if "price_source" in entry:
            entry.setdefault("price_read", sources[entry["price_source"]]["read"])
        if key == "name":
            if "match" not in entry:
                _fail(label, "a new family needs match = \"regex\"")
            existing.insert(0, entry)
        else:
            existing.append(entry)


def read_rules_file(path: str | Path) -> dict[str, Any]:
    """The data file merged with the rules file ``path`` (providers.toml layout).

    Raises:
        ProvidersFileError: the file cannot be read, is not TOML, or is malformed (see :func:`merge_user_rules`).
    """
    path = Path(path)
    try:
        user = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProvidersFileError(f"{path}: cannot read the providers file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProvidersFileError(f"{path}: not valid TOML: {exc}") from None
    read = _dt.date.fromtimestamp(path.stat().st_mtime)
    return merge_user_rules(datafile.base_rules(), user, str(path), read)


def find_pyproject_rules(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """``[tool.promptcache.providers]`` of the nearest ``pyproject.toml`` at or above ``start`` (default: the
    current directory) as ``(path, {"providers": ..., "sources": ...})``; None when the nearest has none.

    Raises:
        ProvidersFileError: the nearest pyproject.toml is not valid TOML.
    """
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        path = candidate / "pyproject.toml"
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ProvidersFileError(f"{path}: not valid TOML: {exc}") from None
            table = data.get("tool", {}).get("promptcache", {}).get("providers")
            if table is None:
                return None
            if not isinstance(table, Mapping):
                raise ProvidersFileError(f"{path}: [tool.promptcache.providers] must be a table")
            table = dict(table)
            return path, {"sources": table.pop("sources", {}), "providers": table}
    return None


def use_user_rules(path: str | Path | None = None, *, start: Path | None = None) -> str | None:
    """Merge the user's rules into the rules in use: ``path`` when given, else ``[tool.promptcache.providers]``
    of the nearest pyproject.toml. Returns where they came from (None: no user rules, installed data only).

    Raises:
        ProvidersFileError: the file is missing or malformed; nothing is changed then.
    """
    if path is not None:
        merged, origin = read_rules_file(path), str(path)
    else:
        found = find_pyproject_rules(start)
        if found is None:
            datafile.install_user_rules(None)
            clear_cache()
            return None
        origin = f"{found[0]} [tool.promptcache.providers]"
        read = _dt.date.fromtimestamp(found[0].stat().st_mtime)
        merged = merge_user_rules(datafile.base_rules(), found[1], origin, read)
    datafile.install_user_rules(merged, origin)
    clear_cache()
    return origin
