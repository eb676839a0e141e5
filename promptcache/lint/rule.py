"""The rule base class (Fixit-style) and the rule registry.

A rule is one class: ``code``, ``name``, ``severity``, ``message``, a
docstring in ruff's documentation shape (What it does / Why is this bad? /
Example / Use instead / Fix safety / When it does not fire), visitor methods
(``visit_<Node>`` / ``leave_<Node>``, run in the engine's single batched
walk) and ``VALID`` / ``INVALID`` cases that the test suite runs.

Defining a subclass with a ``code`` registers it; the engine never imports a
rule by name (:func:`promptcache.lint.registry.discover` imports the rule
packages and reads this registry).
"""

from __future__ import annotations

import dataclasses

import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.finding import Applicability, Severity
from promptcache.lint.source_refs import SourcedMessage, agreement, source_refs

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.context import FileContext
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.request_size import Weight

_REGISTRY: dict[str, type[LintRule]] = {}


_RST_CODE = re.compile(r"(?<!`)``([^`]+)``(?!`)")  # reST code in the docstrings (not a ``` fence)


def markdown_code(text: str) -> str:
    """``text`` with the docstrings' reST code (two backticks) written as Markdown's (one); fences kept."""
    return _RST_CODE.sub(r"`\1`", text)


@dataclass(frozen=True)
class Valid:
    """A snippet on which the rule must report nothing; ``path`` is the file name it is linted as."""

    code: str
    path: str = "case.py"


@dataclass(frozen=True)
class Invalid:
    """A snippet on which the rule must report; ``line`` (1-based, in the dedented snippet) when given."""

    code: str
    line: int | None = None
    path: str = "case.py"


@dataclass(frozen=True)
class NodeFix:
    """A fix expressed on nodes: replace each node's source with new text, and insert text just before
    (or, with ``after`` True, just after) each node of ``insertions`` (an ``import`` line among a module's
    imports); positions are resolved by the engine."""

    description: str
    applicability: Applicability
    replacements: tuple[tuple[cst.CSTNode, str], ...] = field(default=())
    insertions: tuple[tuple[cst.CSTNode, str, bool], ...] = field(default=())  # (node, text, after)


class LintRule:
    """Base class of every rule; one instance per file, fed by the batched walk."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.WARNING
    message: ClassVar[str] = ""
    #: "safe", "unsafe" or None: whether the rule offers a fix (shown by ``promptcache rules``).
    fixable: ClassVar[str | None] = None
    #: True for engine codes that a narrower ``select`` cannot turn off (only an explicit ``ignore`` can),
    #: as ruff always reports syntax errors: PC901.
    always_selected: ClassVar[bool] = False
    VALID: ClassVar[list[Valid | str]] = []
    INVALID: ClassVar[list[Invalid | str]] = []

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("code"):
            existing = _REGISTRY.get(cls.code)
            if existing is not None and existing.__qualname__ != cls.__qualname__:
                raise TypeError(f"rule code {cls.code} is defined twice: {existing.__qualname__} and {cls.__qualname__}")
            _REGISTRY[cls.code] = cls

    def __init__(self, context: FileContext) -> None:
        self.context = context

    @property
    def flow(self) -> FlowAnalysis:
        """The file's shared data-flow answers."""
        return self.context.flow

    def report(self, node: cst.CSTNode, message: str | SourcedMessage | None = None, fix: NodeFix | None = None,
               severity: Severity | None = None, symbols: tuple[str, ...] | None = None,
               weight: Weight | None = None, requires: tuple[str, str] | None = None) -> None:
        """Report a finding of this rule at ``node`` (at ``severity`` when given, else the rule's).

        A :class:`~promptcache.lint.source_refs.SourcedMessage` names sources
        on other lines: the engine renders it once lines are known, and a
        ``# noqa: <code>`` on a source's line silences that source. ``symbols``: the prompt module's named
        definitions the finding depends on (:attr:`promptcache.lint.context.Report.symbols`); ``weight``: the
        one-shot request's literal text (:class:`promptcache.lint.request_size.Weight`); ``requires``: an imported
        template and the variable it must name for the finding to stand (:mod:`promptcache.lint.template_fills`).
        """
        self.context.add(self, node, message or self.message, fix, severity, symbols, weight, requires)

    @classmethod
    def documentation(cls) -> str:
        """The rule's documentation page (its docstring, dedented)."""
        return textwrap.dedent(cls.__doc__ or "").strip() + "\n"

    @classmethod
    def summary(cls) -> str:
        """The first sentence of "What it does", up to its first colon and without its asides in parentheses when
        longer than 120 characters, in Markdown (SARIF ``shortDescription``: "Finds a volatile value ... that
        reaches the system prompt.")."""
        doc = cls.documentation()
        marker = "## What it does"
        body = doc.split(marker, 1)[1] if marker in doc else doc
        paragraph = body.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
        sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z\"])", markdown_code(paragraph), maxsplit=1)[0]
        if len(sentence) > 120:
            while (shorter := re.sub(r"\s*\([^()]*\)", "", sentence)) != sentence:
                sentence = shorter
            colon = next((m.start() for m in re.finditer(": ", sentence) if sentence.count("`", 0, m.start()) % 2 == 0), None)
            sentence = sentence[:colon].rstrip(".") + "." if colon is not None else sentence
        return sentence

    @staticmethod
    def cases(items: list[Valid | Invalid | str], kind: type) -> list:
        """Normalise ``VALID``/``INVALID`` entries to case objects with dedented code."""
        out = []
        for item in items:
            if isinstance(item, str):
                item = kind(item)
            out.append(dataclasses.replace(item, code=textwrap.dedent(item.code).lstrip("\n")))
        return out


class FlowRule(LintRule):
    """A rule that reads the file's data-flow facts (:class:`~promptcache.lint.dataflow.Flow`) and decides
    which are its findings (:meth:`findings`), with what message (:meth:`issue_message`).

    ``message`` may use ``{detail}`` (the first source, e.g. ``datetime.datetime.now()``),
    ``{slot}`` (where it lands, e.g. ``system=``) and, for issues that carry
    their sources (PC101-PC105), ``{sources}`` with ``{reach}`` / ``{be}`` / ``{value}``
    (every source that reaches the slot, with its line when it is elsewhere:
    :class:`~promptcache.lint.source_refs.SourcedMessage`).
    """

    #: One report per value: the first of the issues at one node (the slots of the others go to its
    #: ``more_slots``), and none at a node that contains another issue of this rule.
    one_per_node: ClassVar[bool] = True
    innermost_only: ClassVar[bool] = True

    def flows(self) -> list:
        """The facts this rule reads (default: values reaching the system prompt, tools and earlier messages)."""
        return self.flow.prefix_flows

    def findings(self, flow) -> list:
        """The :class:`~promptcache.lint.dataflow.Issue` s this rule makes of one fact (none: not its finding)."""
        raise NotImplementedError  # pragma: no cover - every flow rule defines it

    def issues(self) -> list:
        """Every finding of this rule in the file, one per value."""
        from promptcache.lint.dataflow import dedupe

        found = [issue for flow in self.flows() for issue in self.findings(flow)]
        if self.one_per_node:
            found = self._reported_at_caller(self._reported_at_use(self._reported_at_source(dedupe(found))))
        return self.flow.innermost(found) if self.innermost_only else found

    def _reported_at_source(self, issues: list) -> list:
        """Drop an issue whose every source starts inside another issue of this rule elsewhere: a prompt constant
        ``SYSTEM = f"...{date.today()}"`` is reported there, not again where ``system=`` (or a ``**params``
        dict) reads it; one problem, one report (issue 11)."""
        within = self.flow.facts.within

        def elsewhere(i, j) -> bool:
            return j is not i and not within(i.node, j.node) and not within(j.node, i.node)

        out = []
        for i in issues:
            origins = [s.origin for s in i.sources]
            if not origins or None in origins or not any(elsewhere(i, j) and all(within(o, j.node) for o in origins) for j in issues):
                out.append(i)
        return out

    def _reported_at_use(self, issues: list) -> list:
        """Drop an issue at a prompt builder's return whose sources are exactly those of an issue at a request slot:
        the system message a builder writes is reported there, not again at the ``return`` that hands it on (quivr's
        ``_define_custom_prompts()``; issue 11), nor at a second return of the same builder with the same sources
        (R2R's ``_build_aware_system_instruction``: one date, two returns; ``now = datetime.now()`` read as ``{now}``
        in each return: the call, not the name reads, decides). Two request slots reading one source
        are two places to fix: both stay."""
        def origins(i) -> frozenset | None:
            found = [s.origin for s in i.sources]
            if found and None not in found:  # a clock-named read (`{now}` in each return) beside the clock: the clock
                calls = [s.origin for s in i.sources if not (s.kind == S.VOLATILE and isinstance(s.origin, cst.Name))]
                return frozenset(map(id, calls or found))
            return None

        of = {id(i): origins(i) for i in issues}
        used = {of[id(i)] for i in issues if i.slot.kind != "builder"} - {None}
        out, returned = [], set()  # (builder, origins) reported: a second return of the same sources is the same fix
        for i in issues:
            key = (id(i.slot.scope), of[id(i)])
            if i.slot.kind != "builder" or key[1] is None or key[1] not in used and key not in returned:
                out.append(i)
                returned.add(key)
        return out

    def _reported_at_caller(self, issues: list) -> list:
        """Drop an issue at a prompt builder's return whose sources are all parameter reads when the builder's
        callers are all in the module (private, nested or a script's: :meth:`CallSites.visible_calls`) and another
        issue of this rule, in the function of each call, names a source of what that call passes: the caller's
        value is reported where it enters the prompt (``_skills_section(user_id)`` inside
        ``apply_prompt_template(user_id)``: one problem, one report; issue 11). A builder other modules may call
        keeps its issue: what they pass is not seen here (review helper-98)."""
        flow = self.flow
        kept = list(issues)
        changed = True
        while changed:
            changed = False
            for i in kept:
                if i.slot.kind != "builder" or not i.sources or not all(self._parameter_read(s) for s in i.sources):
                    continue
                calls = flow.call_sites.visible_calls(i.slot.scope)
                if calls and all(self._named_by_caller(i, call, scope, kept) for call, scope in calls):
                    kept.remove(i)
                    changed = True
                    break
        return kept

    def _named_by_caller(self, issue, call: cst.Call, scope, issues: list) -> bool:
        """Another of ``issues``, in the function making ``call`` (not ``issue``'s builder itself), names a source
        of what ``call`` passes."""
        caller = self.flow.holder_of(scope)
        if caller is None or caller is issue.slot.scope:
            return False
        passed = self.flow.taint.union((a.value for a in call.args), scope)
        return any(j is not issue and self.flow.holder_of(j.slot.scope) is caller and not passed.isdisjoint(j.sources)
                   for j in issues)

    def _parameter_read(self, source) -> bool:
        """``source`` is a parameter of a function of this module, or a read of one by name."""
        if source.kind == S.PARAM:
            return True
        origin = source.origin
        scope = self.flow.scope_at(origin) if isinstance(origin, cst.Name) else None
        holder = self.flow.holder_of(scope) if scope is not None else None
        return holder is not None and origin.value in holder.params

    def owned_by(self, flow, *owners: tuple[str, str]) -> bool:
        """The fact is another rule's finding: it carries one of the ``(source kind, rule code)`` pairs and that
        rule runs on this file. One problem, one report, chosen among the enabled rules only: an ignored
        ``--ignore PC101`` hides nothing (issue 11)."""
        return any(flow.has(kind) and self.flow.enabled(code) for kind, code in owners)

    def leave_Module(self, node: cst.Module) -> None:
        if not (self.flow.is_llm_file or self.flow.message_lists and self.code == "PC101"):
            return  # a request shown only by an app's own message list: its clock or id is certain, the rest is not
        from promptcache.lint.prompt_definitions import definition_symbols

        for issue in self.issues():
            self.report(issue.node, self.issue_message(issue), self.issue_fix(issue), self.issue_severity(issue),
                        definition_symbols(self.flow, issue), issue.weight, issue.slot.requires)

    def issue(self, flow, node: cst.CSTNode | None = None, detail: str | None = None, sources: tuple = (), origin=None):
        """An issue of this rule for ``flow`` (at ``flow.node`` unless ``node`` is given)."""
        from promptcache.lint.dataflow import Issue

        return Issue(self.code, node if node is not None else flow.node, detail if detail is not None else "", flow.slot,
                     sources, origin=origin)

    def issue_severity(self, issue) -> Severity | None:
        """The severity of one issue when it differs from the rule's (None: the rule's)."""
        return None

    def issue_fix(self, issue) -> NodeFix | None:
        """The fix of one issue of this rule (None: the rule offers none)."""
        return None

    def issue_message(self, issue) -> str | SourcedMessage:
        """The message of one :class:`~promptcache.lint.dataflow.Issue` of this rule."""
        fields = {"detail": issue.detail, "slot": issue.slot.label}
        if not issue.sources:
            return self.message.format(**fields, sources=f"`{issue.detail}`", **agreement(1))
        refs = source_refs(self.flow, issue.sources, _NAMED_KINDS)
        return SourcedMessage(self.message, fields, refs)


_NAMED_KINDS = (S.VOLATILE, S.IDENTITY, S.ENV, S.PARAM)


def registered() -> dict[str, type[LintRule]]:
    """Every registered rule class by code (sorted by code)."""
    return dict(sorted(_REGISTRY.items()))
