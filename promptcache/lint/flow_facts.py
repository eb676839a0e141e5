"""The facts the data flow gives the rules: a :class:`Flow` (the sources that reach a slot, and where), and the
:class:`Issue` a rule makes of one (:meth:`promptcache.lint.rule.FlowRule.findings`).

Computed by :class:`promptcache.lint.dataflow.FlowAnalysis`; kept apart so that the rules' side of the contract
is one short module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.request_size import Weight
from promptcache.lint.slots import Slot
from promptcache.lint.sources import Source


@dataclass(eq=False)
class Issue:
    """A finding a rule made of a :class:`Flow`: rule ``code`` at ``node``; ``detail`` names the first source.

    ``sources`` are all the sources the message names (every volatile or
    identity source that reaches the slot through ``node``), ``()`` for rules
    whose message names one origin. ``more_slots`` are the other slots the
    same ``node`` reaches with the same code (one constant read by two
    ``tools=``), reported once, at ``node``: a fix must cover them all.
    """

    code: str
    node: cst.CSTNode
    detail: str
    slot: Slot
    sources: tuple[Source, ...] = ()
    more_slots: list[Slot] = field(default_factory=list)
    origin: cst.CSTNode | None = None  # where the first source starts (the listing call of PC302), when known
    fixed_call_only: bool = False  # stands only if an importer calls the builder with fixed arguments (cross_module)
    weight: Weight | None = None  # a one-shot request's literal text: PC102 is info below the minimum (cross_module)


@dataclass(eq=False)
class Flow:
    """A fact of the data flow: the ``sources`` that reach ``slot`` enter it at ``node``.

    ``area`` says which part of the request the slot is: ``"system"`` (the
    system prompt and prompt-named text), ``"tools"`` (``tools=`` and tool
    tables), ``"tool_content"`` (text inside a tool definition),
    ``"messages"`` (a message before the last in a conversation literal),
    ``"cached_block"`` (an Anthropic message block at or before the last
    cache breakpoint) or ``"cache_key"`` (``prompt_cache_key=``).
    ``per_request`` holds the ``(func_id, index)`` of parameters of the slot's
    function that callers do not bind to one fixed value (system slots only).
    """

    slot: Slot
    node: cst.CSTNode
    sources: frozenset[Source]
    area: str
    per_request: frozenset[tuple[int, int]] = frozenset()
    after_last_breakpoint: bool = False  # an Anthropic system block past the request's last cache_control
    behind_template_input: bool | str = False  # in a builder's text after a per-call input (template_inputs.py)

    @cached_property
    def by_kind(self) -> dict[str, list[Source]]:
        """The sources by kind, each list in a stable order."""
        return _by_kind(self.sources)

    def has(self, *kinds: str) -> bool:
        """True when a source of any of ``kinds`` is on the path."""
        return any(k in self.by_kind for k in kinds)

    def of(self, *kinds: str) -> tuple[Source, ...]:
        """The sources of ``kinds``, kind by kind (the order messages name them in)."""
        return tuple(s for kind in kinds for s in self.by_kind.get(kind, ()))

    def per_request_params(self) -> tuple[Source, ...]:
        """The parameter sources that differ between calls (see ``per_request``)."""
        return tuple(s for s in self.by_kind.get(S.PARAM, ()) if (s.func_id, s.index) in self.per_request)


def identity(s: Source) -> tuple:
    return (s.kind, s.detail, s.origin_id, s.func_id, s.index)


def _by_kind(t: frozenset[Source]) -> dict[str, list[Source]]:
    out: dict[str, list[Source]] = {}
    for s in sorted(t, key=lambda s: (s.kind, s.detail, s.origin_id)):
        out.setdefault(s.kind, []).append(s)
    return out


def dedupe(issues: list[Issue]) -> list[Issue]:
    """One issue per (code, node), the first; the slots of the others go to its ``more_slots``."""
    seen: dict[tuple[str, int], Issue] = {}
    for issue in issues:
        key = (issue.code, id(issue.node))
        first = seen.get(key)
        if first is None:
            seen[key] = issue
        elif issue.slot is not first.slot and issue.slot not in first.more_slots:
            first.more_slots.append(issue.slot)
    return list(seen.values())


def tools_label(slot: Slot) -> str:
    """How a message names where a tool list goes: the request option (``tools=``, a wrapper's ``tool_specs=``) or
    ``bind_tools()``; ``tools=`` for a tool builder or constant, whose list is sent as the tools."""
    return slot.label if slot.label.endswith(("=", "bind_tools()")) else "tools="


__all__ = ["Flow", "Issue", "dedupe", "identity", "tools_label"]
