"""The standard library has no LLM code: any finding there is a false positive.

The full run with the pre-filter is here (about two seconds: no stdlib file
passes the pre-filter). The ``--no-prefilter`` run over all ~1,800 files
parses everything and takes minutes on two cores, so it lives in
``bench/lint_speed.py --no-prefilter``; here it runs on a sample of packages
plus the Python 2 test data, which must give PC901 and nothing else.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

from promptcache.lint.config import LintConfig
from promptcache.lint.runner import lint_paths

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def test_stdlib_with_prefilter_has_no_findings():
    result = lint_paths([STDLIB], LintConfig(root=STDLIB, include_tests=True), jobs=2)
    assert result.files > 1500 and result.tests == 0
    assert result.findings == []
    assert result.parsed + result.skipped == result.files
    default = lint_paths([STDLIB], LintConfig(root=STDLIB), jobs=2)
    # `test/` (CPython's test package), `tests/` folders of idlelib, ctypes, ..., and test_*.py files
    assert default.findings == [] and default.tests > 900
    assert default.files + default.tests == result.files


def test_stdlib_sample_without_prefilter_has_only_pc901_on_python2_data():
    sample = [STDLIB / "json", STDLIB / "email", STDLIB / "asyncio", STDLIB / "lib2to3" / "tests" / "data"]
    result = lint_paths(sample, LintConfig(root=STDLIB), jobs=2, prefilter_files=False)
    assert result.parsed == result.files > 80
    assert {f.code for f in result.findings} == {"PC901"}
    assert {Path(f.path).parent.name for f in result.findings} <= {"data", "fixers", "myfixes"}
