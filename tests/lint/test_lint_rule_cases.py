"""Every rule's in-class VALID / INVALID cases (the Fixit pattern), run through the real engine."""

from __future__ import annotations

import pytest
from lint_support import lint_text

from promptcache.lint.registry import discover
from promptcache.lint.rule import Invalid, LintRule, Valid

RULES = discover()


def _cases(kind: str):
    for code, rule in RULES.items():
        items = rule.VALID if kind == "valid" else rule.INVALID
        for i, case in enumerate(LintRule.cases(items, Valid if kind == "valid" else Invalid)):
            yield pytest.param(rule, case, id=f"{code}-{kind}-{i}")


def test_every_rule_has_three_cases_of_each_kind():
    for code, rule in RULES.items():
        assert len(rule.VALID) >= 3, f"{code} needs at least 3 VALID cases"
        assert len(rule.INVALID) >= 3, f"{code} needs at least 3 INVALID cases"


def _with(rule) -> list | None:
    """The rules a case runs with: PC900 judges the other rules' suppressions, so it runs with all of them."""
    return None if rule.code == "PC900" else [rule]


@pytest.mark.parametrize(("rule", "case"), list(_cases("valid")))
def test_valid_case_reports_nothing(rule, case):
    found = lint_text(case.code, _with(rule), path=case.path)
    findings = [f for f in found if f.code == rule.code]
    assert findings == [], f"{rule.code} fired on a VALID case:\n{case.code}"
    # the engine must analyse the case, not give up on it (a crash is a PC901 and reported nothing else)
    assert not [f.message for f in found if "could not analyse" in f.message]


@pytest.mark.parametrize(("rule", "case"), list(_cases("invalid")))
def test_invalid_case_reports(rule, case):
    if rule.code == "PC901":
        findings = lint_text(case.code, [], path=case.path)
        assert [f.code for f in findings] == ["PC901"]
        return
    findings = [f for f in lint_text(case.code, _with(rule), path=case.path) if f.code == rule.code]
    assert findings, f"{rule.code} did not fire on an INVALID case:\n{case.code}"
    if case.line is not None:
        assert case.line in [f.line for f in findings], f"{rule.code} fired on lines {[f.line for f in findings]}, expected {case.line}"
