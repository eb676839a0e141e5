"""``extra-sinks`` and ``extra-volatile-sources`` entries: what the configuration may name, checked when it is read.

An extra sink is an app's own wrapper around an LLM call. An entry is a name, or a table that also says which
of the wrapper's arguments carry which request option (docs/lint.md, Configuration)::

    extra-sinks = [
        "myapp.llm.complete",                      # a module function
        "myapp.llm.LLM.chat",                      # a method, matched where the object's class shows
        "*.ask_model",                             # any call whose last names are these
        { call = "myapp.llm.LLM.ask", system = "system_prompt", messages = ["history", 1] },
    ]

In a table an option's value is a keyword (its name), a positional argument (its index: 0 is the first
argument the call passes, ``self`` is not one), or a list of them, the first the call passes winning. Without a
table the wrapper's keywords are read by the SDKs' names (``system=``, ``messages=``, ``tools=``, ...).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass

from promptcache.lint.sinks import SINK_KEYWORDS

_NAME = re.compile(r"(\*\.)?[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class EntryError(ValueError):
    """An entry that names no call promptcache could match; the message says what to write instead."""


@dataclass(frozen=True)
class ExtraSink:
    """One ``extra-sinks`` entry: ``call`` (a dotted name, or ``*.`` and the last names) and ``arguments``
    (request option -> the keywords or positions that carry it, in the order tried)."""

    call: str
    arguments: tuple[tuple[str, tuple[int | str, ...]], ...] = ()


def check_name(name: str, wildcard: bool = True) -> str:
    """``name`` when it is a dotted Python name (``*.`` in front too when ``wildcard``); raises :class:`EntryError`
    saying what to write for ``""``, ``"*"``, ``"LLM.chat()"``, ``"myapp.llm:LLM.chat"``."""
    if _dotted(name, wildcard):
        return name
    if not name.strip():
        raise EntryError("an empty name: write a function's qualified name, like 'myapp.llm.complete'")
    if name.strip("*. ") == "":
        raise EntryError(f"{name!r} names no call: '*.' must be followed by the call's last names, like '*.chat'")
    if "*" in name and not wildcard:
        raise EntryError(f"{name!r}: a pattern is not accepted here; write the call's qualified name")
    fixed = name.strip().replace(":", ".").removesuffix("()").strip(".")
    hint = f"write {fixed!r}" if _dotted(fixed, wildcard) else "write one like 'myapp.llm.complete' or '*.chat'"
    raise EntryError(f"{name!r} is not a dotted name: {hint}")


def _dotted(name: str, wildcard: bool) -> bool:
    return bool(_NAME.fullmatch(name)) and (wildcard or not name.startswith("*."))


def parse_entry(raw: object) -> ExtraSink:
    """One ``extra-sinks`` entry from the TOML value (a string or a table); raises :class:`EntryError`."""
    if isinstance(raw, str):
        return ExtraSink(check_name(raw))
    if not isinstance(raw, dict):
        raise EntryError(f"expected a name or a table like {{call = \"myapp.llm.LLM.ask\", system = \"system_prompt\"}}, "
                         f"got {toml(raw)}")
    if not isinstance(raw.get("call"), str):
        raise EntryError(f"{toml(raw)}: a table needs `call`, the name of the wrapper (a string)")
    call = check_name(raw["call"])
    for option in sorted(set(raw) - {"call"} - SINK_KEYWORDS):
        close = difflib.get_close_matches(option, sorted(SINK_KEYWORDS), n=1)
        raise EntryError(f"{call!r}: unknown option {option!r}; {f'did you mean {close[0]!r}? ' if close else ''}a "
                         f"table maps the request options {', '.join(sorted(SINK_KEYWORDS))} to the wrapper's "
                         "keywords or positions")
    arguments, taken = [], {}
    for option in sorted(set(raw) - {"call"}):
        value = raw[option]
        sources = value if isinstance(value, list) else [value]
        if not sources or not all(_is_source(s) for s in sources):
            digits = next((s for s in sources if isinstance(s, str) and s.isdigit()), None)
            hint = f"; a position is a number: {option} = {int(digits)}, without quotes" if digits else ""
            raise EntryError(f"{call!r}: {option} = {toml(value)}: expected a keyword name (\"system_prompt\"), "
                             f"a position (0 is the call's first argument) or a list of them{hint}")
        for source in sources:
            if source in taken:
                raise EntryError(f"{call!r}: {toml(source)} is mapped to both {taken[source]} and {option}; one "
                                 "argument carries one request option")
            taken[source] = option
        arguments.append((option, tuple(sources)))
    return ExtraSink(call, tuple(arguments))


def toml(value: object) -> str:
    """``value`` written as TOML writes it (a message quotes what the user wrote, not Python's repr)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, default=str)  # (a TOML date or time: its text)


def _is_source(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) and value >= 0 or isinstance(value, str) and value.isidentifier()
