"""Benchmark ``promptcache lint`` on the running interpreter's standard library.

Lints the stdlib folder (``sysconfig.get_paths()["stdlib"]``; ``site-packages``
is excluded by the default ``exclude``) with 1 and 2 worker processes and
prints a JSON object, then a table: files, lines, parsed files, findings,
seconds and files per second.

The standard library has no LLM code, so every finding there is a false
positive: the script exits 1 if there is any (PC901 excepted with
``--no-prefilter``, where Python 2 test data cannot parse, nor two valid
Python 3 files that libcst 1.9 cannot parse; the PC901 files are listed,
with the reason, after the table).

Usage::

    python bench/lint_speed.py                    # pre-filter on (the default run), goal < 10 s on 2 cores
    python bench/lint_speed.py --no-prefilter     # parse every file (minutes)
    python bench/lint_speed.py --path some/tree --jobs 1 2
    python bench/lint_speed.py --path some/tree --twice   # cold, then warm over the result cache
    python bench/lint_speed.py --path some/tree --include-tests   # test code too (left out by default)

``--twice`` runs each job count twice over one fresh result cache
(``.promptcache_cache`` in a temporary folder): the cold run parses, the warm
one reads every parsed file's findings from the cache. It prints both times,
the speed-up, and whether the findings are identical (exit 1 when not).
Findings only fail the run for the standard library (the default path).
Without ``--twice`` no result cache is read or written: every run is cold,
as ``promptcache lint --no-cache``.

``seconds`` is wall time; ``cpu_s`` is the CPU time of this process and its
worker processes (user + system), which other jobs on a shared machine
disturb much less than the wall time: compare two versions by both.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import sysconfig
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from promptcache.lint.config import LintConfig
from promptcache.lint.result_cache import ResultCache, settings_key
from promptcache.lint.runner import lint_paths, select_rules

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def run(path: Path, jobs: int, prefilter: bool, cache_dir: Path | None = None, label: str = "",
        include_tests: bool = False) -> dict:
    """One timed lint run; returns the measured numbers (seconds are wall time)."""
    config = LintConfig(root=path, respect_gitignore=True, include_tests=include_tests)
    cache = ResultCache(cache_dir, settings_key(config, select_rules(config))) if cache_dir is not None else None
    before = os.times()
    result = lint_paths([path], config, prefilter_files=prefilter, jobs=jobs, cache=cache)
    after = os.times()  # the pool's workers have exited: their CPU time is in children_*
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("user", "system", "children_user", "children_system"))
    other = [f for f in result.findings if f.code != "PC901"]
    return {
        "run": label,
        "jobs": jobs,
        "prefilter": prefilter,
        "files": result.files,
        "lines": result.lines,
        "parsed": result.parsed,
        "from_cache": result.cached,
        "skipped": result.skipped,
        "tests_left_out": result.tests,
        "findings": len(other),
        "unparsable": result.errors,
        "unparsable_files": [f"{f.path}:{f.line}: {f.message}" for f in result.findings if f.code == "PC901"],
        "seconds": round(result.seconds, 3),
        "cpu_s": round(cpu, 2),
        "files_per_s": round(result.files / result.seconds, 1) if result.seconds else None,
        "_findings": [f.to_json() for f in result.findings],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", type=Path, default=STDLIB)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-prefilter", action="store_true")
    parser.add_argument("--twice", action="store_true", help="cold then warm, over one fresh result cache")
    parser.add_argument("--include-tests", action="store_true", help="lint test code too (left out by default)")
    args = parser.parse_args(argv)
    prefilter, tests = not args.no_prefilter, args.include_tests
    rows, identical = [], True
    for jobs in args.jobs:
        if args.twice:
            with tempfile.TemporaryDirectory() as folder:
                cold = run(args.path, jobs, prefilter, Path(folder), "cold", tests)
                warm = run(args.path, jobs, prefilter, Path(folder), "warm", tests)
            warm["speedup"] = round(cold["seconds"] / warm["seconds"], 1) if warm["seconds"] else None
            warm["identical"] = warm["_findings"] == cold["_findings"]
            identical &= warm["identical"]
            rows += [cold, warm]
        else:
            rows.append(run(args.path, jobs, prefilter, include_tests=tests))
    for r in rows:
        del r["_findings"]
    print(json.dumps({"path": str(args.path), "runs": rows}, indent=2))
    left_out = "tests included" if tests else f"{rows[0]['tests_left_out'] if rows else 0} test files left out"
    print(f"{args.path} (pre-filter {'off' if args.no_prefilter else 'on'}; {left_out})")
    table = Table(box=None, pad_edge=False, padding=(0, 1), header_style="bold")
    for column in ("run", "jobs", "files", "lines", "parsed", "cached", "found", "PC901", "s", "cpu s", "files/s"):
        table.add_column(column, justify="left" if column == "run" else "right", no_wrap=True)
    for r in rows:
        table.add_row(r["run"] or "-", str(r["jobs"]), str(r["files"]), str(r["lines"]),
                      str(r["parsed"]), str(r["from_cache"]), str(r["findings"]), str(r["unparsable"]),
                      f"{r['seconds']:.2f}", f"{r['cpu_s']:.2f}", str(r["files_per_s"]))
    Console(width=80, highlight=False).print(table)
    for r in rows:
        if r["run"] == "warm":
            print(f"warm run ({r['jobs']} job{'s' if r['jobs'] > 1 else ''}): {r['speedup']}x faster, findings {'identical' if r['identical'] else 'DIFFERENT'}")
    unparsable = sorted({entry for r in rows for entry in r["unparsable_files"]})
    if unparsable:
        print(f"\nPC901 (not linted) in {len(unparsable)} files:")
        for entry in unparsable:
            print(f"  {entry}")
    if not identical:
        return 1
    return 1 if args.path == STDLIB and any(r["findings"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
