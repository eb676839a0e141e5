"""The shared driver of the option-churn rules (PC306, PC501-PC503): one request option of two calls over one
history, or of one call on different calls, differs.

The facts (which calls share a history, what an option's value is, which values one call site takes) come from
:mod:`promptcache.lint.param_churn`; this module reports them and words the messages.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint.index import Scope
from promptcache.lint.param_churn import ABSENT, Pair, history_name, keyword_node, shared_pairs, value_key, varying
from promptcache.lint.request_view import Request, requests
from promptcache.lint.rule import LintRule

#: The middle of every option-churn message: what differs, and over which history.
TAIL = ": {kw}= is {here} here but {there} {how} over the same history `{history}`; "


def shown(key: str) -> str:
    """A key as the message shows it: on one line, and at most 60 characters of quoted code (newcomer helper-97:
    a comprehension over three lines broke the one-line report)."""
    if key == ABSENT:
        return "not passed"
    text = " ".join(key.split())
    return text if len(text) <= 60 or not text.startswith("`") else text[:56] + "...`"


class OptionChurnRule(LintRule):
    """Shared driver of PC306 / PC501-PC503: one option (of ``keywords``) of two calls over one history, or of
    one call on different calls, differs. ``key(kw, expr, scope)`` gives the comparable value (None: unknown).
    Requests come from :func:`promptcache.lint.request_view.requests` (keywords and ``**params`` dicts)."""

    keywords: tuple[str, ...] = ()
    #: keyword -> the value keys that mean what leaving the keyword out means (the provider default).
    defaults: dict[str, tuple[str, ...]] = {}
    default_name: dict[str, str] = {}
    message = ""

    def key(self, kw: str, expr: cst.BaseExpression | None, scope: Scope) -> str | None:
        found = value_key(self.flow, expr, scope)
        if kw in self.defaults and (found == ABSENT or found in self.defaults[kw]):
            return self.default_name[kw]
        return None if found == ABSENT else found

    def option_key(self, kw: str, req: Request) -> str | None:
        """The comparable value of option ``kw`` of ``req``: None when it may take several or is not shown."""
        v = req.value(kw)
        return None if v is None else self.key(kw, v.expr, v.scope)

    def message_for(self, req: Request) -> str:
        """The message template for a finding at ``req`` (a rule whose cost differs by provider overrides it)."""
        return self.message

    def skip_pair(self, pair: Pair) -> bool:
        """True for a pair this rule does not judge (none by default)."""
        return False

    def single_site(self, req: Request, kw: str) -> list[str]:
        """The values one call site takes on different calls (:func:`varying`)."""
        return varying(self.flow, req, kw, lambda e, s: self.key(kw, e, s))

    def leave_Module(self, node: cst.Module) -> None:
        if not self.flow.is_llm_file:
            return
        flow = self.flow
        reported: set[int] = set()
        for pair in shared_pairs(flow):
            if self.skip_pair(pair):
                continue
            for kw in self.keywords:
                a = self.option_key(kw, pair.earlier)
                b = self.option_key(kw, pair.later)
                if a is not None and b is not None and a != b:
                    at = keyword_node(flow, pair.later, kw)
                    reported.add(id(pair.later.call))
                    self.report(at, self.message_for(pair.later).format(kw=kw, history=pair.history, here=shown(b), there=shown(a),
                                                        how="in an earlier call"))
                    break
        for req in requests(flow):
            if id(req.call) in reported:
                continue
            for kw in self.keywords:
                values = self.single_site(req, kw)
                if values:
                    history = history_name(flow, req)
                    self.report(keyword_node(flow, req, kw), self.message_for(req).format(
                        kw=kw, history=history, here=shown(values[-1]), there=shown(values[0]),
                        how="on other calls"))
                    break


__all__ = ["TAIL", "OptionChurnRule", "shown"]
