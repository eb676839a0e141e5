"""Lint one file: one parse, one batched walk, positions for the reported nodes, suppressions.

Bad input never raises: NUL bytes, undecodable text, a syntax error or a
libcst failure become a PC901 finding for that file, with a message that says
what to do.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import libcst as cst

from promptcache.lint import suppression
from promptcache.lint.config import LintConfig
from promptcache.lint.context import FileContext, Report
from promptcache.lint.errors import unparsable
from promptcache.lint.expected_values import blank_expected_values
from promptcache.lint.finding import Finding, Fix, Severity
from promptcache.lint.fixes import merge, resolve
from promptcache.lint.imports import is_llm_module
from promptcache.lint.index import Indexer
from promptcache.lint.positions import node_ranges, source_lines
from promptcache.lint.prompt_uses import UNSEEN, import_uses
from promptcache.lint.request_size import Weight, module_sizes
from promptcache.lint.rule import LintRule, registered
from promptcache.lint.template_fills import template_fields
from promptcache.lint.source_refs import SourcedMessage, SourceRef
from promptcache.lint.unused_noqa import UnusedNoqa, unused
from promptcache.lint.walk import TreeFacts, walk


_RECURSION_LIMIT = 30_000
# Collector thresholds while one file is parsed and linted. A parse allocates about 400,000 nodes per MB of
# source, all of which survive until the file is done; at the default thresholds (700, 10, 10) the cyclic
# collector walks them again and again (pydantic-ai's 555 parsed files, one process: 37 s of CPU against 40 s,
# 2026-12-02). The trees are freed by reference counting; collecting less often frees the same memory.
# Restored after the file; a collector the caller disabled (threshold 0) stays disabled.
_GC_THRESHOLDS = (50_000, 20, 100)
_STATED_POSITION = re.compile(r"error at (\d+):(\d+)")
_NOQA_BYTES = re.compile(rb"(?i)noqa")
# A `# noqa:` whose codes may hold one of ours (a code PC900 can judge); a comment never spans lines. Without
# one, and without reports to suppress, a file's comments cannot change its findings: it is not tokenized.
_NOQA_PC_BYTES = re.compile(rb"(?i)noqa:[^\n]*pc")


@dataclass
class FileResult:
    """What linting one file produced. ``parsed`` is False when the file was not (or could not be) parsed.

    The cross-module facts (:mod:`promptcache.lint.prompt_uses`), kept with the findings so the run can
    settle them against the other files (:mod:`promptcache.lint.cross_module`): ``depends`` maps a finding's
    ``(code, line)`` to the prompt module's named definitions it depends on (absent: it stands on its own);
    ``uses`` maps each imported prompt-named name (qualified as imported) to where it lands here; it is
    ``UNSEEN`` when the file's uses could not be computed (a file-level ``# promptcache: noqa``, a file that
    does not parse or could not be analysed), so that whatever it imports counts as used somewhere unknown.
    ``weights``: a finding's one-shot request text, and ``sizes``: the text of this module's constants
    (:mod:`promptcache.lint.request_size`), settled into the finding's severity by the run; ``requires``: a
    finding's imported template and variable, and ``fields``: the variables of this module's template constants
    (:mod:`promptcache.lint.template_fills`), settled into whether the finding stands.
    """

    path: str
    findings: list[Finding] = field(default_factory=list)
    parsed: bool = False
    depends: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    uses: dict[str, tuple[str, ...]] = field(default_factory=dict)
    weights: dict[tuple[str, int], Weight] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    requires: dict[tuple[str, int], tuple[tuple[str, str], ...]] = field(default_factory=dict)
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # extra-sinks entry -> what this module shows of it: "named" (a call it names), "unread" (one passing no
    # request option it can read), "unresolved" (its method called on an object of unknown class); the run warns
    sinks_seen: dict[str, tuple[str, ...]] = field(default_factory=dict)


def parse(data: bytes, path: str) -> cst.Module | Finding:
    """Parse ``data`` with libcst, or return the PC901 finding that explains why it cannot be."""
    if b"\x00" in data:
        offset = data.index(b"\x00")
        line = data.count(b"\n", 0, offset) + 1
        return unparsable(path, f"contains a NUL byte (line {line}): it looks like a binary file; remove the NUL bytes or exclude the file", line)
    try:
        return _parse_module(data)
    except cst.ParserSyntaxError as exc:
        return _syntax_error(data, path, exc)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1  # 1-based, in bytes
        return unparsable(
            path,
            f"is not valid {exc.encoding.upper()} (byte 0x{data[exc.start]:02x} at offset {exc.start}): "
            "re-save it as UTF-8 or declare its encoding with a coding comment",
            line,
            column,
        )
    except (LookupError, SyntaxError) as exc:
        return unparsable(path, f"cannot be decoded ({exc}): fix its coding comment or re-save it as UTF-8")
    except (RecursionError, MemoryError) as exc:
        return unparsable(path, f"is too deeply nested or too large for libcst to parse ({type(exc).__name__}); exclude it")
    except Exception as exc:  # noqa: BLE001 - libcst reports some failures with bare exceptions
        return unparsable(path, f"libcst could not parse it ({type(exc).__name__}: {exc}); exclude it or report the file")


def _skip_validation(self: cst.CSTNode) -> None:
    return None


def _parse_module(data: bytes) -> cst.Module:
    """``cst.parse_module(data)`` without libcst's check of every node as the parser builds it
    (``CSTNode.__post_init__`` calls ``_validate``; restored after the parse, also when it raises).

    The native parser builds nodes only for code its grammar accepted, and validation never changes a node:
    on 21,139 files (CPython 3.11's standard library and site-packages, 14 real LLM-app code bases;
    2026-12-02) it rejected none that the parser accepted, and it cost 2.5 s of the 22 s that parsing
    pydantic-ai's 555 files takes. Where it does reject valid Python (libcst issue #1061:
    ``() if 0 else(lambda:())`` raises TypeError, a PC901 before), the file is now linted. Node validation
    is off for the whole process during the parse: a thread building libcst nodes at that moment is not
    checked either."""
    saved = cst.CSTNode.__dict__["__post_init__"]
    cst.CSTNode.__post_init__ = _skip_validation
    try:
        return cst.parse_module(data)
    finally:
        cst.CSTNode.__post_init__ = saved


def _syntax_error(data: bytes, path: str, exc: cst.ParserSyntaxError) -> Finding:
    """Locate a syntax error with CPython's parser, whose messages and positions are the familiar ones."""
    try:
        compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        line, column = max(err.lineno or 1, 1), max(err.offset or 1, 1)
        return unparsable(path, f"syntax error: {err.msg} (fix the syntax, or exclude the file if it is not Python 3)", line, column)
    except (ValueError, RecursionError, MemoryError):
        pass
    # libcst's native parser states the position in its message ("error at 25:8"); raw_line can be one off.
    stated = _STATED_POSITION.search(exc.message)
    if stated is not None:
        line, column = max(int(stated.group(1)), 1), int(stated.group(2)) + 1
    else:
        line, column = max(exc.raw_line, 1), exc.raw_column + 1
    return unparsable(
        path,
        f"libcst cannot parse this file although Python can ({exc.message.splitlines()[0]}); exclude it or report it to libcst",
        line,
        column,
    )


@lru_cache(maxsize=4)
def _sink_names(entries: tuple[str, ...]) -> frozenset[str]:
    """The last name of each ``extra-sinks`` entry's call (``ask`` for ``myapp.llm.ask``)."""
    return frozenset(entry.rsplit(".", 1)[-1] for entry in entries)


def lint_bytes(
    data: bytes,
    path: str,
    rules: Sequence[type[LintRule]],
    config: LintConfig,
    prompt_module: bool = False,
    *,
    blank_expected: bool = True,
) -> FileResult:
    """Lint the contents of one file with ``rules`` (selected rule classes).

    ``path`` is the display path used in findings. Returns findings sorted by
    (line, column, code), suppressions applied. Never raises for bad input.
    ``blank_expected`` leaves the plain-data sides of assertions out of the parse
    (:mod:`promptcache.lint.expected_values`: speed only, the findings are the same).
    """
    skip = suppression.file_noqa(data)
    if skip is None:
        return FileResult(path, uses=UNSEEN)  # not linted: its uses of a prompt module are not known either
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))  # long `a + b + ...` chains nest one level per operand
    thresholds = gc.get_threshold()
    if thresholds[0]:
        gc.set_threshold(*(max(ours, theirs) for ours, theirs in zip(_GC_THRESHOLDS, thresholds)))
    try:
        blanked = blank_expected_values(data, re.compile(config.prompt_name_regex), _sink_names(config.extra_sink_names)) \
            if blank_expected else data
        parsed = parse(blanked, path)
        if isinstance(parsed, Finding) and blanked is not data:
            parsed = parse(data, path)  # the error as the file has it
        if isinstance(parsed, Finding):
            return FileResult(path, [parsed] if skip is False or parsed.code not in skip else [], uses=UNSEEN)
        try:
            return _lint_module(parsed, data, path, rules, config, prompt_module, skip)
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the run
            reason = f"promptcache could not analyse this file ({type(exc).__name__}: {exc}); please report it"
            return FileResult(path, [unparsable(path, reason)], True, uses=UNSEEN)
    finally:
        sys.setrecursionlimit(limit)
        gc.set_threshold(*thresholds)


def _lint_module(module: cst.Module, data: bytes, path: str, rules, config, prompt_module, skip) -> FileResult:
    indexer = Indexer()
    enabled = frozenset(rule.code for rule in rules) - (skip if skip is not False else set())
    context = FileContext(path, module, config, indexer.index, TreeFacts(), prompt_module, enabled=enabled)
    try:
        return _report(context, [indexer, *(rule(context) for rule in rules)], data, rules, skip)
    finally:
        context.release()


def _add_condition(table: dict, key: tuple[str, int], items) -> None:
    """Merge one report's conditions into its finding's: ``None`` (a report that stands on its own) makes the
    finding unconditional; otherwise the sets are joined."""
    if items is None or (key in table and table[key] is None):
        table[key] = None
    else:
        table.setdefault(key, set()).update(items)


def _report(context: FileContext, visitors: list, data: bytes, rules, skip) -> FileResult:
    """Walk the tree with ``visitors``, then turn the context's reports into findings (suppressions applied)."""
    module, path = context.module, context.path
    walk(module, visitors, context.facts)
    # Every file that imports code gives its uses; the run counts only LLM code's (cross_module, pre-filter).
    uses = import_uses(context.flow) if _imports_code(context.index) else {}
    sizes = module_sizes(context.index)
    fields = template_fields(context.index)
    seen = _sinks_seen(context)
    has_noqa = _NOQA_BYTES.search(data) is not None
    check_noqa = (has_noqa and any(rule.code == UnusedNoqa.code for rule in rules)
                  and _NOQA_PC_BYTES.search(data) is not None)
    if not context.reports and not check_noqa:
        return FileResult(path, [], True, uses=uses, sizes=sizes, fields=fields, sinks_seen=seen)
    targets = [r.node for r in context.reports]
    for report in context.reports:
        if report.fix is not None:
            targets += [node for node, _ in report.fix.replacements]
            targets += [node for node, _, _ in report.fix.insertions]
        if isinstance(report.message, SourcedMessage):
            targets += [ref.node for ref in report.message.sources if ref.node is not None]
    ranges = node_ranges(module, targets)
    text = data.decode(module.encoding, errors="replace")
    comments = suppression.noqa_comments(text) if has_noqa else []
    noqa = suppression.noqa_lines(text, comments)
    used: set[tuple[int, str]] = set()  # the (line, code) pairs a `# noqa` silenced (PC900 reports the others)
    # One finding per (code, line): reports of one code on one line (the parts of one f-string, one constant
    # read by two tools= slots) are merged, and the first one's position is kept; a data-flow finding names
    # the sources of all of them, and its fix covers the edits of all of them (promptcache.lint.fixes).
    kept: dict[tuple[str, int], tuple[Report, tuple, list[SourceRef]]] = {}
    fixes: dict[tuple[str, int], list[Fix | None]] = {}
    severities: dict[tuple[str, int], Severity] = {}
    depends: dict[tuple[str, int], set[str] | None] = {}  # None: a merged report stands on its own
    weights: dict[tuple[str, int], Weight | None] = {}  # None: a merged report without one
    requires: dict[tuple[str, int], set | None] = {}  # any one met keeps it; None: a report that stands on its own
    for report in context.reports:
        r = ranges.get(report.node)
        if r is None:
            continue
        code = report.rule.code
        if skip is not False and code in skip:
            continue
        if suppression.is_suppressed(code, r[0], noqa):
            used.add((r[0], code))
            continue
        sources = report.message.sources if isinstance(report.message, SourcedMessage) else ()
        key = (code, r[0])
        fixes.setdefault(key, []).append(resolve(report.fix, ranges))
        _add_condition(depends, key, report.symbols)
        weights[key] = report.weight if weights.get(key, report.weight) == report.weight else None
        _add_condition(requires, key, (report.requires,) if report.requires is not None else None)
        severity = report.severity or report.rule.severity
        if key in kept:
            merged = kept[key][2]
            merged += [ref for ref in sources if ref not in merged]
            if severity.rank > severities[key].rank:  # merged reports: the most severe of them, in its words, at its
                severities[key] = severity  # column (a clock beside a user id in one schema changes it on every call)
                kept[key] = (report, r, merged)
        else:
            kept[key] = (report, r, list(sources))
            severities[key] = severity
    findings = []
    for (code, line), (report, r, sources) in kept.items():
        message = _message(report.message, sources, code, line, ranges, noqa, used)
        if message is None:
            continue
        rule = report.rule
        findings.append(
            Finding(
                code=code,
                name=rule.name,
                severity=severities[(code, line)],
                path=path,
                line=line,
                column=r[1] + 1,
                end_line=r[2],
                end_column=r[3] + 1,
                message=message,
                fix=merge(fixes[(code, line)]),
                source_lines=tuple(sorted({ranges[ref.node][0] for ref in sources if ref.node in ranges} - {line})),
            )
        )
    if check_noqa and (skip is False or UnusedNoqa.code not in skip):
        enabled = {rule.code for rule in rules} - (skip if skip is not False else set())  # a file-level noqa judges those
        stale = unused(comments, used, enabled, registered(), path, [line.rstrip("\r\n") for line in source_lines(text)])
        findings += [f for f in stale if not suppression.is_suppressed(f.code, f.line, noqa)]
    kept_depends = {(f.code, f.line): tuple(sorted(d)) for f in findings if (d := depends.get((f.code, f.line)))}
    kept_weights = {(f.code, f.line): w for f in findings if (w := weights.get((f.code, f.line)))}
    kept_requires = {(f.code, f.line): tuple(sorted(r)) for f in findings if (r := requires.get((f.code, f.line)))}
    return FileResult(path, sorted(findings, key=lambda f: f.sort_key), True, kept_depends, uses, kept_weights, sizes,
                      kept_requires, fields, seen)


def _sinks_seen(context: FileContext) -> dict[str, tuple[str, ...]]:
    """What this module shows of each ``extra-sinks`` entry (:attr:`FileResult.sinks_seen`; every call asked):
    ``named``, and ``unread:LINE`` / ``unresolved:LINE`` with the line of the first such call."""
    if not context.config.extra_sinks:
        return {}
    finder = context.flow.sinks
    finder.all()
    firsts = [*finder.unread.values(), *finder.unresolved.values()]  # an entry may have both (review helper-98)
    lines = {id(call): r[0] for call, r in node_ranges(context.module, firsts).items()} if firsts else {}
    out = {}
    for entry in sorted(finder.matched | finder.unresolved.keys()):
        facts = ["named"] if entry in finder.matched else []
        facts += [f"{fact}:{lines.get(id(calls[entry]), 0)}" for fact, calls in
                  (("unread", finder.unread), ("unresolved", finder.unresolved)) if entry in calls]
        out[entry] = tuple(facts)
    return out


def _imports_code(index) -> bool:
    """True when the module imports anything that is not an LLM SDK (a prompt module may be among it)."""
    return any(not is_llm_module(m) for m in index.imports)


def _message(message: str | SourcedMessage, sources: list[SourceRef], code: str, line: int, ranges, noqa, used) -> str | None:
    """The text of a report's message: a :class:`SourcedMessage` names ``sources`` (with their lines),
    leaving out those silenced by a ``# noqa: <code>`` on their own line (recorded in ``used``); None when
    that is all of them."""
    if not isinstance(message, SourcedMessage):
        return message
    lines = [ranges[ref.node][0] if ref.node in ranges else None for ref in sources]
    named = []
    for ref, at in zip(sources, lines):
        if suppression.is_suppressed_explicitly(code, at, noqa):
            used.add((at, code))
        else:
            named.append((ref, at))
    if sources and not named:
        return None
    return message.render(named, line)

