"""What an unseen call does with the values it is given, judged without its body (issue 11, skyvern, deer-flow).

An id given as is to a call that makes no text is the key of a lookup (``get_secret_values_for_run(run_id)``): the
result carries it only as written, not in a field, element or method of it (:func:`lookup_arguments`,
:attr:`~promptcache.lint.sources.Source.keyed`). A call named to make text keeps it (:func:`text_call`:
``slugify(run_id)``, ``.replace("{ID}", run_id)``); a redacting call keeps only the text it cleans (:func:`redacts`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import last_name
from promptcache.lint.index import ModuleIndex, Scope
from promptcache.lint.sources import Source, through_call

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.taint import TaintEngine

TEXT_METHODS = frozenset({"format", "format_map", "join", "replace"})  # their arguments become text
# Callees that take values out of a text (`redact_secrets_from_text(text, secrets)`, `mask_pii`, `scrub`).
_REDACTS = re.compile(r"(?i)(^|_)(redact|mask|scrub|anonymi[sz]e|censor)(_|$)")
_ID_NAME = re.compile(r"(^|_)(id|ids|uuid|guid|ID|IDS|UUID|GUID)$|[a-z0-9](Id|Ids|ID|IDs)$")  # `run_id`, `runId`; not `sid`
# Callees that make text of their argument whatever it is: they keep an id's text (`slugify(user_id)`, `quote(...)`).
_TEXT_CALL = re.compile(r"(?i:(^|_)(str|string|text|slug(ify)?|quote|escape|encode|hex|hash|digest|(to|as)_\w+)$)|^to[A-Z]")


# A call named as a yes/no question (`is_feature_enabled_cached(flag, run_id)`, `has_access(user)`, `isValid`):
# Python's naming convention for a predicate (PEP 8 gives none; `str.isdigit`, `os.path.isfile`, Django's
# `has_perm` follow it). Its bool picks one of a fixed set of texts; it does not carry its arguments' text.
_PREDICATE_RE = re.compile(r"^_*(is|has|should|can|needs|must|supports|allows)(_|[A-Z])")


def predicate_call(name: str) -> bool:
    """``name`` (a called function's or method's last name) reads as a yes/no question (``is_enabled``, ``hasPerm``)."""
    return bool(_PREDICATE_RE.match(name))


# A feature-flag or experiment service (PostHog, LaunchDarkly, Unleash, GrowthBook, Statsig, OpenFeature, an app's
# own `EXPERIMENTATION_PROVIDER`): what it returns is one of the variants configured in it, whoever asks.
_FLAG_SERVICE_RE = re.compile(r"(?i)experiment|feature_?flag|posthog|launch_?darkly|ld_?client|unleash|"
                              r"growth_?book|statsig|open_?feature")


def flag_service(name: str) -> bool:
    """``name`` (a call's receiver's last name) names a feature-flag or experiment service."""
    return bool(_FLAG_SERVICE_RE.search(name))


def text_call(name: str) -> bool:
    """A callee whose name says it makes text of its arguments (``slugify``, ``to_json``, ``quote``, ``replace``)."""
    return bool(_TEXT_CALL.search(name)) or name in TEXT_METHODS


def redacts(name: str) -> bool:
    """A callee whose name says it takes values out of a text (``redact_secrets_from_text``, ``mask_pii``)."""
    return bool(_REDACTS.search(name))


def lookup_arguments(engine: TaintEngine, args: list, scope: Scope) -> list[frozenset[Source]]:
    """The taints of the arguments of an unseen call that makes no text. A run's or request's id given as is
    (``get_secret_values_for_run(task.workflow_run_id)``) is the key of a lookup: marked
    :attr:`~promptcache.lint.sources.Source.keyed`, in the result as written (``get_trace_url(run_id)`` in an
    f-string) but not in a field, element or method of it (skyvern; issue 11). A user's id alone is not a key:
    what is looked up by it is that user's data (``db.get_projects(user_id)``); beside another entity's id
    that is not a constant it scopes the lookup (``get_workflow(workflow_id=w, organization_id=o)``, not
    ``get_notes(bot_id=BOT_ID, user_id=u)``). A user's value given as is is not known to be in a tool schema
    the call makes (deer-flow's ``build_skill_search_setup(user_skills).describe_skill_tool``: a closure). The
    element order of any argument (a set) is in the result as it is, not in a field of it (letta's
    ``self.agent_state = manager.append_messages(new_messages, ...)``, then ``self.agent_state.tools``)."""
    taints = [(engine.of(a, scope), _id_key(a)) for a in args]
    entity = any(key and not any(s.kind == S.IDENTITY for s in t) and not _constant_id(engine.index, a, scope)
                 for (t, key), a in zip(taints, args))
    kinds = (S.VOLATILE, S.IDENTITY) if entity else (S.VOLATILE,)
    return [S.keyed(through_call(S.keyed(t, kinds)) if key else through_call(t) if as_is(a) and not _text_bound(a, scope)
                    else t, S.ORDER_KINDS) for (t, key), a in zip(taints, args)]


def list_order_only(engine: TaintEngine, call: cst.Call, scope: Scope, taint: frozenset[Source]) -> frozenset[Source]:
    """``taint``, an unseen call's, without the element order of its other arguments when its first argument is a
    list in a fixed order (a list literal or comprehension, or a name bound to one, that carries no order of its
    own): the result's elements come in that list's order, and a set beside it parameterises the call
    (letta's ``runtime_override_tool_json_schema(tool_list=schemas, terminal_tools={...})``; issue 11)."""
    first = call.args[0].value if len(call.args) > 1 and not call.args[0].star else None
    if first is None or not any(s.kind in S.ORDER_KINDS for s in taint):
        return taint
    lists = [(first, scope)]
    if isinstance(first, cst.Name):  # its bindings but the one this call's result makes (`x = f(tool_list=x, ...)`)
        bound = [b for b in engine.index.lookup(first.value, scope)[1] if b.value is not call]
        lists = [(b.value, b.scope) for b in bound] if all(b.kind == "assign" for b in bound) else []
    if not lists or not all(isinstance(value, (cst.List, cst.ListComp)) for value, _ in lists) \
            or any(s.kind in S.ORDER_KINDS for value, where in lists for s in engine.of(value, where)):
        return taint
    return frozenset(s for s in taint if s.kind not in S.ORDER_KINDS)


def _constant_id(index: ModuleIndex, e: cst.BaseExpression, scope: Scope) -> bool:
    """``e`` names a module-level or all-caps constant (``BOT_ID``, ``settings.APP_ID``)."""
    root = e
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return True  # not a name (a literal, an `or` of ids): counted as no entity, so the user's id stays
    found, _ = index.lookup(root.value, scope)
    return S.is_constant_name(last_name(e)) or found is None or found.kind == "module"


def _text_bound(e: cst.BaseExpression, scope: Scope) -> bool:
    """``e`` is a name bound in ``scope`` to text built here (``desc = f"Orders of {user.email}"``)."""
    if not isinstance(e, cst.Name):
        return False
    return any(b.kind == "assign" and textual(b.value) for b in scope.bindings.get(e.value, []))


def _id_key(e: cst.BaseExpression) -> bool:
    """``e`` is an id given as is (``task.workflow_run_id``, ``run_id or task_id``, ``ctx.run_id if ctx else None``),
    or a dict literal of ids and literals."""
    if isinstance(e, (cst.Name, cst.Attribute)):
        return as_is(e) and bool(_ID_NAME.search(last_name(e)))
    if isinstance(e, cst.IfExp):
        return all(_id_key(x) or isinstance(x, cst.Name) and x.value == "None" for x in (e.body, e.orelse))
    if isinstance(e, cst.BooleanOperation):
        return _id_key(e.left) and _id_key(e.right)
    if isinstance(e, cst.Dict):  # `properties={"organization_id": task.organization_id}`: keys of a lookup
        return bool(e.elements) and all(isinstance(el, cst.DictElement) and (
            _id_key(el.value) or isinstance(el.value, (cst.SimpleString, cst.Integer))) for el in e.elements)
    return False


def textual(e: cst.BaseExpression) -> bool:
    """``e`` makes text here: a string literal or f-string, ``+`` / ``%`` with one, ``.format`` / ``.join``."""
    if isinstance(e, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Modulo)):
        return textual(e.left) or textual(e.right)
    if isinstance(e, cst.IfExp):
        return textual(e.body) or textual(e.orelse)
    return isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute) and e.func.attr.value in TEXT_METHODS


def as_is(e: cst.BaseExpression) -> bool:
    """A name, an attribute of one, or a tuple of those and literals (a lookup key): not text built around it."""
    if isinstance(e, cst.Name):
        return True
    if isinstance(e, cst.Attribute):
        return as_is(e.value)
    if isinstance(e, cst.Tuple):
        return all(isinstance(el.value, (cst.SimpleString, cst.Integer)) or as_is(el.value) for el in e.elements)
    return False


__all__ = ["TEXT_METHODS", "as_is", "flag_service", "lookup_arguments", "predicate_call", "redacts", "text_call",
           "textual"]
