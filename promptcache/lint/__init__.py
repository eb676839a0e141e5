"""``promptcache lint``: a libcst-based static analyser for code that breaks LLM prompt caching.

Library entry points (the CLI is a thin layer over them)::

    from promptcache.lint import LintConfig, lint_paths, load_config

    result = lint_paths([Path("src")], load_config(start=Path("src")))
    for finding in result.findings:
        print(finding.path, finding.line, finding.code, finding.message)
    exit_code = result.exit_code(fail_on=Severity.WARNING)

Rules live in the ``lint_rules`` package and register themselves
(:mod:`promptcache.lint.registry`); the data-flow helpers they share are in
:mod:`promptcache.lint.dataflow`.
"""

from __future__ import annotations

from promptcache.lint.config import ConfigError, LintConfig, load_config
from promptcache.lint.finding import Finding, Fix, Severity
from promptcache.lint.rule import Invalid, LintRule, Valid
from promptcache.lint.runner import LintResult, lint_paths

__all__ = [
    "ConfigError",
    "Finding",
    "Fix",
    "Invalid",
    "LintConfig",
    "LintResult",
    "LintRule",
    "Severity",
    "Valid",
    "lint_paths",
    "load_config",
]
