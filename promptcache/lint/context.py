"""The per-file context shared by the indexer and every rule of one batched walk."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from promptcache.lint.config import LintConfig
from promptcache.lint.dataflow import FlowAnalysis
from promptcache.lint.finding import Severity
from promptcache.lint.index import ModuleIndex
from promptcache.lint.rule import LintRule, NodeFix
from promptcache.lint.request_size import Weight
from promptcache.lint.source_refs import SourcedMessage
from promptcache.lint.walk import TreeFacts


@dataclass(eq=False)
class Report:
    """A finding before positions are known: the rule, the node, the message and an optional fix.

    A :class:`SourcedMessage` is rendered by the engine once the lines of its sources are known.
    ``severity`` is this finding's when it differs from the rule's (None: the rule's; PC101's daily case).
    ``symbols``: in a prompt module, the named definitions the finding depends on (it stands when an importer
    puts one of them in a prefix slot: :mod:`promptcache.lint.cross_module`); None: it stands on its own.
    """

    rule: type[LintRule]
    node: cst.CSTNode
    message: str | SourcedMessage
    fix: NodeFix | None
    severity: Severity | None = None
    symbols: tuple[str, ...] | None = None
    weight: Weight | None = None  # a one-shot request's literal text (PC102): below the minimum, it is info
    requires: tuple[str, str] | None = None  # (imported template, variable): stands only if the template names it


@dataclass(eq=False)
class FileContext:
    """One file being linted: its tree, index, config and the reports made so far.

    ``prompt_module`` is True for a file that no LLM code is in but that a
    file with LLM calls imports (its prompt-named constants are prefix slots).
    """

    path: str
    module: cst.Module
    config: LintConfig
    index: ModuleIndex
    facts: TreeFacts
    prompt_module: bool = False
    reports: list[Report] = field(default_factory=list)
    enabled: frozenset[str] | None = None  # the codes that run on this file (None: all)

    @cached_property
    def flow(self) -> FlowAnalysis:
        """The data-flow answers, built on first use (only files whose rules ask pay for them)."""
        return FlowAnalysis(self.module, self.index, self.facts, self.config, self.prompt_module, self.path,
                            self.enabled)

    def release(self) -> None:
        """Break the reference cycles the index and the data-flow analysis hold (their parts point back
        at each other), so the tree is freed as soon as the file is done; the context is unusable after."""
        flow = self.__dict__.pop("flow", None)
        if flow is not None:
            flow.__dict__.clear()  # FlowAnalysis <-> Turns / Summaries / PromptText, and its cached answers
        self.index.release()

    def add(self, rule: LintRule, node: cst.CSTNode, message: str | SourcedMessage, fix: NodeFix | None,
            severity: Severity | None = None, symbols: tuple[str, ...] | None = None, weight: Weight | None = None,
            requires: tuple[str, str] | None = None) -> None:
        self.reports.append(Report(type(rule), node, message, fix, severity, symbols, weight, requires))
