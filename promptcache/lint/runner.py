"""A whole lint run: discover, pre-filter, parse and lint in a process pool, merge, sort.

:func:`lint_paths` is the library entry point behind ``promptcache lint``.
Files that pass the pre-filter are linted in worker processes (``jobs``,
default: the CPU count) when there are enough of them to pay for the pool;
findings are sorted by (path, line, column, code) so every output is
deterministic whatever the scheduling.
"""

from __future__ import annotations

import gc
import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from promptcache.lint import prefilter
from promptcache.lint.config import LintConfig
from promptcache.lint.cross_module import Settlement
from promptcache.lint.discovery import discover, display_path, named_file
from promptcache.lint.errors import unparsable
from promptcache.lint.filelint import FileResult, lint_bytes
from promptcache.lint.finding import Finding, Severity
from promptcache.lint.fixer import applicable, fix_bytes
from promptcache.lint.prompt_uses import UNSEEN
from promptcache.lint.registry import discover as discover_rules
from promptcache.lint.result_cache import ResultCache, digest, entry_key
from promptcache.lint.rule import LintRule

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
_POOL_MIN_FILES = 16


@dataclass
class LintResult:
    """The outcome of one run.

    ``files``: files checked, ``parsed + skipped + unreadable``;
    ``parsed``: files handed to the parser (those that failed to parse are
    PC901 findings); ``skipped``: files the pre-filter left out;
    ``unreadable``: paths that could not be read at all (a dangling or looping
    link, a FIFO, a missing path, a read error: PC901 findings); ``lines``:
    lines in all files read; ``seconds``: wall time; ``rules``: the selected
    rule classes (sorted by code); ``cached``: parsed files whose findings came
    from the result cache (not parsed again; ``cached_paths`` names them); ``fixes``: the files a fix mode
    changed; ``fixable`` / ``unsafe_fixable``: findings left that ``--fix`` /
    only ``--unsafe-fixes`` would fix; ``tests``: test files left out (not
    among ``files``; ``include-tests`` lints them); ``unmatched_sinks``: the ``extra-sinks`` entries that
    named no call in a run over folders only (a run over named files sees too little to say); ``unread_sinks`` /
    ``unresolved_sinks``: those whose calls it cannot read, or whose objects' class it cannot see, in any run, each
    with the ``path:line`` of the first such call (:func:`_sink_gaps`).
    """

    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    parsed: int = 0
    skipped: int = 0
    unreadable: int = 0
    lines: int = 0
    seconds: float = 0.0
    rules: list[type[LintRule]] = field(default_factory=list)
    parsed_paths: list[str] = field(default_factory=list)
    cached_paths: list[str] = field(default_factory=list)
    fixes: list[FileFix] = field(default_factory=list)
    fixable: int = 0
    unsafe_fixable: int = 0
    tests: int = 0
    unmatched_sinks: list[str] = field(default_factory=list)
    unread_sinks: dict[str, str] = field(default_factory=dict)  # entry -> "path:line" of its first such call
    unresolved_sinks: dict[str, str] = field(default_factory=dict)

    @property
    def cached(self) -> int:
        return len(self.cached_paths)

    def count_fixable(self) -> None:
        """Set ``fixable`` / ``unsafe_fixable`` from ``findings`` (again after they are filtered)."""
        self.fixable = sum(1 for f in self.findings if applicable(f, False))
        self.unsafe_fixable = sum(1 for f in self.findings if applicable(f, True)) - self.fixable

    @property
    def fixed(self) -> int:
        """How many findings the run fixed."""
        return sum(sum(f.fixed.values()) for f in self.fixes)

    @property
    def errors(self) -> int:
        """How many PC901 (unreadable / unparsable file) findings there are."""
        return sum(1 for f in self.findings if f.code == "PC901")

    def exit_code(self, fail_on: Severity = Severity.WARNING, exit_zero: bool = False) -> int:
        """0 clean (or only findings below ``fail_on``), 1 findings at or above it, 2 a file could not be linted.
        ``exit_zero`` turns 1 into 0, not 2: a mistyped path or a file that cannot be parsed still fails CI."""
        if self.errors:
            return EXIT_ERROR
        if exit_zero:
            return EXIT_CLEAN
        if any(f.severity.rank >= fail_on.rank for f in self.findings):
            return EXIT_FINDINGS
        return EXIT_CLEAN


@dataclass(frozen=True)
class FixMode:
    """Apply fixes: ``unsafe`` ones too (``--unsafe-fixes``); ``write`` the files (``--fix``) or not (``--diff``)."""

    unsafe: bool = False
    write: bool = True


@dataclass
class FileFix:
    """One file a fix mode changed: its path, its bytes before and after, and the fixes applied per code."""

    path: Path
    display: str
    before: bytes
    after: bytes
    fixed: dict[str, int]


# -- worker side -------------------------------------------------------------
_worker_rules: list[type[LintRule]] = []
_worker_config: LintConfig | None = None


def _init_worker(codes: list[str], config: LintConfig) -> None:
    global _worker_rules, _worker_config
    rules = discover_rules()
    _worker_rules = [rules[c] for c in codes]
    _worker_config = config
    gc.freeze()  # what the worker inherited (modules, rules) lives as long as it does: keep it out of collections


def _lint_task(task: tuple[bytes, str, bool]) -> FileResult:
    data, display, prompt_module = task
    return lint_bytes(data, display, _worker_rules, _worker_config, prompt_module)


# -- main side ---------------------------------------------------------------
def select_rules(config: LintConfig) -> list[type[LintRule]]:
    """The rule classes enabled by ``config`` (raises ConfigError for unknown codes).

    Rules marked ``always_selected`` (PC901) are enabled whatever ``select``
    says, unless ``ignore`` names them.
    """
    rules = discover_rules()
    config.validate_codes(rules)
    chosen = config.selected(rules, always=[c for c, r in rules.items() if r.always_selected])
    return [rules[c] for c in sorted(chosen)]


def lint_paths(
    paths: list[Path],
    config: LintConfig,
    *,
    prefilter_files: bool = True,
    jobs: int | None = None,
    fix: FixMode | None = None,
    cache: ResultCache | None = None,
    stdin: bytes | None = None,
    force_exclude: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> LintResult:
    """Lint every Python file under ``paths`` with the rules ``config`` selects.

    ``prefilter_files=False`` parses every file (``--no-prefilter``).
    ``jobs`` is the number of worker processes (1: in this process). ``fix``
    applies fixes (:class:`FixMode`); ``cache`` reads and stores findings per
    file content; ``stdin`` is the source of the one path in ``paths``
    (``--stdin-filename``: the file need not exist); ``force_exclude`` applies
    the exclusions to files named in ``paths`` too; ``progress`` is called with
    ``(files linted, files to lint)`` as files are done (cached ones count at once). Raises
    :class:`~promptcache.lint.config.ConfigError` for unknown rule codes.
    """
    started = time.perf_counter()
    rules = select_rules(config)
    visitors = [r for r in rules if r.code != "PC901"]
    report_errors = len(visitors) < len(rules)
    if stdin is not None:
        found = named_file(Path(os.path.abspath(paths[0])), config, force_exclude)
    else:
        found = discover(paths, config, force_exclude=force_exclude)
    result = LintResult(rules=rules, tests=found.tests)
    findings: list[Finding] = list(found.problems)
    scans: dict[Path, prefilter.Scan] = {}
    contents: dict[Path, bytes] = {}
    displays: dict[Path, str] = {}
    digests: dict[Path, str] = {}
    unreadable = {f.path for f in found.problems}
    for path, display in found.files:
        try:
            data = stdin if stdin is not None else path.read_bytes()
        except OSError as exc:
            findings.append(unparsable(display, f"cannot be read ({exc.strerror}); fix its permissions or exclude it"))
            unreadable.add(display)
            continue
        contents[path] = data
        displays[path] = display
        if cache is not None:
            digests[path] = digest(data)
            scans[path] = cache.scan(digests[path], data, config.extra_sink_names)
        else:
            scans[path] = prefilter.scan(data, config.extra_sink_names)
        result.lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    result.unreadable = len(unreadable)
    result.files = len(contents) + result.unreadable
    modules = prefilter.prompt_modules(scans)
    importers_of = _named_modules_importers(found.named, scans, contents, modules, config)
    tasks, paths_of = [], []
    for path, data in contents.items():
        if prefilter_files and not (scans[path].passes or path in modules):
            result.skipped += 1
            continue
        tasks.append((data, displays[path], path in modules))
        paths_of.append(path)
    result.parsed_paths = [t[1] for t in tasks]
    result.parsed = len(tasks)
    file_results = _run_cached(tasks, [digests.get(p, "") for p in paths_of], visitors, config, jobs, cache, result,
                               progress or _no_progress)
    # A prompt module's findings stand or fall with what its importers do with the prompt: those in this run,
    # and for a prompt module named on its own those of its package outside the run (linted for their uses only).
    # Only the importers of named modules with findings that hang on a definition are linted (the cost).
    results_of = dict(zip(paths_of, file_results))
    if stdin is None and all(path.is_dir() for path in paths):
        result.unmatched_sinks = _unmatched_sinks(config.extra_sink_names, file_results, [contents[p] for p in paths_of])
    result.unread_sinks, result.unresolved_sinks = _sink_gaps(config.extra_sink_names, file_results)
    # an entry whose method is only called on objects of a class not shown: that warning says why it matched nothing
    result.unmatched_sinks = [e for e in result.unmatched_sinks if e not in result.unresolved_sinks]
    importers = {p: s for named, found_importers in importers_of.items()
                 if named in results_of and results_of[named].depends for p, s in found_importers.items()}
    outside, outside_results = _lint_importers(importers, visitors, config, jobs, cache)
    settlement = Settlement(paths_of + outside, file_results + outside_results, {**importers, **scans})
    for path, (data, display, module), file_result in zip(paths_of, tasks, file_results):
        file_result = settlement.settle(path, file_result)
        if fix is not None and any(applicable(f, fix.unsafe) for f in file_result.findings):
            fixed = fix_bytes(data, display, visitors, config, module, unsafe=fix.unsafe, first=file_result,
                              settle=lambda r, path=path: settlement.settle(path, r))
            if fixed.changed:
                result.fixes.append(FileFix(path, display, data, fixed.data, dict(fixed.fixed)))
                if fix.write and stdin is None:  # --stdin-filename: the fixed source goes to stdout only
                    path.write_bytes(fixed.data)
                file_result = fixed.remaining
        findings += file_result.findings
    if not report_errors:
        findings = [f for f in findings if f.code != "PC901"]
    result.findings = sorted(_apply_per_file_ignores(findings, config), key=lambda f: f.sort_key)
    result.count_fixable()
    result.seconds = time.perf_counter() - started
    return result


def _unmatched_sinks(entries: tuple[str, ...], results: list[FileResult], sources: list[bytes]) -> list[str]:
    """The ``extra-sinks`` entries no linted file calls. A file that was not analysed (a file-level
    ``# promptcache: noqa``, a syntax error) counts as calling each entry whose last name it shows called."""
    named = {entry for r in results for entry, facts in r.sinks_seen.items() if "named" in facts}
    unseen = [data for r, data in zip(results, sources) if r.uses is UNSEEN]
    return [entry for entry in entries if entry not in named and not any(
        re.search(rb"\b" + re.escape(entry.rsplit(".", 1)[-1].encode()) + rb"\s*\(", data) for data in unseen)]


def _sink_gaps(entries: tuple[str, ...], results: list[FileResult]) -> tuple[dict[str, str], dict[str, str]]:
    """``(unread, unresolved)``: the ``extra-sinks`` entries with a call that passes none of the request options it
    can read (a wrapper with its own parameter names, named without a table), and the method entries whose method
    is called on objects whose class the calling module does not show (a factory of another module); each with the
    ``path:line`` of its first such call, in the order of the files."""
    gaps: tuple[dict[str, str], dict[str, str]] = ({}, {})
    for r in results:
        for entry, facts in r.sinks_seen.items():
            for fact in facts:
                kind, _, line = fact.partition(":")
                if kind in ("unread", "unresolved"):
                    gaps[kind == "unresolved"].setdefault(entry, f"{r.path}:{line}")
    return tuple({e: gap[e] for e in entries if e in gap} for gap in gaps)  # type: ignore[return-value]


def _named_modules_importers(named, scans, contents, modules: set[Path],
                             config: LintConfig) -> dict[Path, dict[Path, prefilter.Scan]]:
    """The LLM files outside the run that import each prompt module named on the command line
    (``{named file: {importer: scan}}``).

    Only files named themselves (pre-commit, changed-files CI, ``--stdin-filename``) that define a prompt- or
    tool-named name are looked up (:func:`~promptcache.lint.prefilter.llm_importers`: their package and import
    root, bytes only); each one found makes the file a prompt module (added to ``modules``), whether or not it
    passes the pre-filter on its own, as in a run over its folder.
    """
    importers: dict[Path, dict[Path, prefilter.Scan]] = {}
    seen: dict[Path, prefilter.Scan] = {}
    for path in sorted(named):
        if path not in scans:
            continue
        if not prefilter.may_hold_prompts(contents[path], config.prompt_name_regex):
            continue
        found = prefilter.llm_importers(path, scans[path], config, known={**seen, **scans})
        if found:
            modules.add(path)
        importers[path] = {p: s for p, s in found.items() if p not in contents}
        seen.update(importers[path])
    return importers


def _lint_importers(importers: dict[Path, prefilter.Scan], rules, config, jobs, cache: ResultCache | None):
    """``(paths, results)`` of the importers outside the run, linted (through ``cache``) for their ``uses``
    only: not counted in the run's summary, their findings never reported."""
    paths, tasks, digests, unread = [], [], [], []
    for path in sorted(importers):
        try:
            data = path.read_bytes()
        except OSError:  # gone since it was scanned: its uses are not known, so what it imports stands
            unread.append(path)
            continue
        paths.append(path)
        tasks.append((data, display_path(path), False))
        digests.append(digest(data) if cache is not None else "")
    results = _run_cached(tasks, digests, rules, config, jobs, cache, LintResult(), _no_progress) if tasks else []
    return paths + unread, results + [FileResult(display_path(p), uses=UNSEEN) for p in unread]


def _no_progress(done: int, total: int) -> None:
    return None


def _run_cached(tasks, digests, rules, config, jobs, cache: ResultCache | None, result: LintResult,
                progress: Callable[[int, int], None]) -> list[FileResult]:
    """Each task's result, from ``cache`` where it has the file's content, else linted (and stored)."""
    if cache is None:
        return _run(tasks, rules, config, jobs, progress)
    keys = [entry_key(d, module) for d, (_, _, module) in zip(digests, tasks)]
    out: list[FileResult | None] = [cache.get(key, display) for key, (_, display, _) in zip(keys, tasks)]
    missing = [i for i, r in enumerate(out) if r is None]
    result.cached_paths = [display for r, (_, display, _) in zip(out, tasks) if r is not None]

    def counted(done: int, total: int) -> None:
        progress(result.cached + done, len(tasks))
    for i, linted in zip(missing, _run([tasks[i] for i in missing], rules, config, jobs, counted)):
        out[i] = linted
        cache.put(keys[i], linted)
    cache.save()
    return out


def _run(tasks, rules, config, jobs, progress: Callable[[int, int], None]) -> list[FileResult]:
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    progress(0, len(tasks))
    out: list[FileResult] = []
    if jobs <= 1 or len(tasks) < _POOL_MIN_FILES:
        for data, display, pm in tasks:
            out.append(lint_bytes(data, display, rules, config, pm))
            progress(len(out), len(tasks))
        return out
    # Largest files first, a few at a time: a file's cost grows with its size (pydantic-ai's 1 MB test file
    # costs as much as fifty average ones), and a big file handed out last would leave the other workers idle.
    # The results go back to the tasks' order.
    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i][0]))
    chunk = max(1, len(tasks) // (jobs * 32))
    results: list[FileResult] = [None] * len(tasks)  # type: ignore[list-item] - every slot is filled below
    with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=([r.code for r in rules], config)) as pool:
        for done, (i, linted) in enumerate(zip(order, pool.map(_lint_task, [tasks[i] for i in order], chunksize=chunk)), 1):
            results[i] = linted
            progress(done, len(tasks))
    return results


def _apply_per_file_ignores(findings: list[Finding], config: LintConfig) -> list[Finding]:
    if not config.per_file_ignores:
        return findings
    specs = [(pathspec.GitIgnoreSpec.from_lines([glob]), codes) for glob, codes in config.per_file_ignores]
    kept = []
    for finding in findings:
        path = Path(finding.path)
        absolute = path if path.is_absolute() else Path.cwd() / path
        try:
            rel = absolute.relative_to(config.root).as_posix()
        except ValueError:
            rel = finding.path
        ignored = any(
            spec.match_file(rel) and any(c == "ALL" or finding.code.startswith(c) for c in codes) for spec, codes in specs
        )
        if not ignored:
            kept.append(finding)
    return kept
