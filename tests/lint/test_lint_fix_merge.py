"""Merging the fixes of the reports that one finding covers (reports of one code on one line).

Applying a finding's fix is meant to make the finding go away, so the merged
fix has every report's edits, each once, in source order; when two edits
overlap, or one report has no edit, it has no edit at all and says why.
"""

from __future__ import annotations

import libcst as cst
import pytest

from promptcache.lint.finding import Applicability, Edit, Fix
from promptcache.lint.fixes import merge, resolve
from promptcache.lint.positions import node_ranges
from promptcache.lint.rule import NodeFix
from promptcache.lint.walk import descendants

A = Edit(3, 5, 3, 12, "sorted(ENABLED)")
B = Edit(4, 5, 4, 12, "sorted(ENABLED)")
UNSAFE, SAFE = Applicability.UNSAFE, Applicability.SAFE


def test_merge_unites_edits_once_each_in_source_order():
    merged = merge([Fix("Wrap it", UNSAFE, (B,)), Fix("Wrap it", UNSAFE, (A, B))])
    assert merged == Fix("Wrap it", UNSAFE, (A, B))


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(Edit(3, 10, 3, 20, "x"), id="overlapping"),
        pytest.param(Edit(3, 1, 3, 30, "sorted(f(ENABLED))"), id="enclosing"),
        pytest.param(Edit(3, 5, 3, 12, "sorted(ENABLED, key=str)"), id="same-range-other-text"),
    ],
)
def test_merge_offers_no_edit_when_edits_overlap(second):
    merged = merge([Fix("Wrap one", SAFE, (A,)), Fix("Wrap two", UNSAFE, (second,))])
    assert merged.edits == ()
    assert merged.applicability is UNSAFE
    assert merged.description.startswith("Wrap one; Wrap two; no edit is offered: the edits at ")
    assert "overlap, so they cannot both be applied" in merged.description


def test_merge_offers_no_edit_when_a_part_cannot_be_fixed():
    described = Fix("Sort the tools by name (not known here)", UNSAFE)
    merged = merge([Fix("Wrap it", UNSAFE, (A,)), described])
    assert merged == Fix(
        "Sort the tools by name (not known here); no edit is offered: fixing only the other places this finding "
        "covers would leave the order unfixed",
        UNSAFE,
    )
    assert merge([Fix("Wrap it", UNSAFE, (A,)), None]).edits == ()
    assert merge([None, None]) is None


def test_resolve_positions_the_replacements_and_never_drops_one():
    module = cst.parse_module("tools = [SPECS[n] for n in ENABLED]\n")
    (enabled,) = [n for n in descendants(module, cst.Name) if n.value == "ENABLED"]
    ranges = node_ranges(module, [enabled])
    fix = NodeFix("Wrap `ENABLED` in sorted(...)", UNSAFE, ((enabled, "sorted(ENABLED)"),))
    assert resolve(fix, ranges) == Fix("Wrap `ENABLED` in sorted(...)", UNSAFE, (Edit(1, 28, 1, 35, "sorted(ENABLED)"),))
    unplaced = NodeFix("Wrap both", UNSAFE, ((enabled, "sorted(ENABLED)"), (cst.Name("OTHER"), "sorted(OTHER)")))
    assert resolve(unplaced, ranges) == Fix("Wrap both; no edit is offered: the code to change could not be located", UNSAFE)
    assert resolve(None, ranges) is None
