"""The public case corpus (shared/cases/lint): expected codes, markers and clean files.

For every case file: the codes ``promptcache lint`` reports, restricted to the
rules this part implements, equal the file's ``# expect:`` set restricted the
same way; every ``# <- CODE`` marker of those codes is hit by a finding of that
code on a line inside the marker's logical line (found with ``tokenize``);
``clean_*.py`` files get no finding at all.
"""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

import pytest

from promptcache.lint.config import LintConfig
from promptcache.lint.runner import lint_paths

IMPLEMENTED = {f"PC{n}" for n in (*range(101, 106), *range(201, 205), *range(301, 307), *range(401, 407), *range(501, 504), *range(601, 605))}
_EXPECT = re.compile(r"^# expect: (clean|PC\d{3}(, PC\d{3})*)$")
_MARKER = re.compile(r"#\s*<-\s*(PC\d{3}(\s*,\s*PC\d{3})*)\s*$")


def expected_codes(path: Path) -> set[str]:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = _EXPECT.match(first)
    assert match, f"{path.name}: line 1 is not an expect line"
    return set() if match.group(1) == "clean" else set(match.group(1).split(", "))


def markers(path: Path) -> list[tuple[str, int, int]]:
    """``(code, first line, last line)`` of each marker's logical line."""
    out = []
    start = None
    with path.open(encoding="utf-8") as fh:
        for tok in tokenize.generate_tokens(fh.readline):
            if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT) and start is None:
                if tok.type == tokenize.COMMENT and (m := _MARKER.search(tok.string)):
                    raise AssertionError(f"{path.name}:{tok.start[0]}: marker outside a statement")
                continue
            if start is None:
                start = tok.start[0]
            if tok.type == tokenize.COMMENT and (m := _MARKER.search(tok.string)):
                for code in re.split(r"\s*,\s*", m.group(1)):
                    out.append((code, start, None))
            if tok.type == tokenize.NEWLINE:
                out = [(c, s, tok.start[0] if e is None else e) for c, s, e in out]
                start = None
    return out


@pytest.fixture(scope="module")
def corpus_findings(lint_cases_dir):
    result = lint_paths([lint_cases_dir], LintConfig(root=lint_cases_dir), jobs=2)
    by_file: dict[str, list] = {}
    for finding in result.findings:
        by_file.setdefault(Path(finding.path).name, []).append(finding)
    return result, by_file


def test_corpus_is_present_and_fully_parsed(lint_cases_dir, corpus_findings):
    result, _ = corpus_findings
    files = sorted(lint_cases_dir.glob("*.py"))
    assert len(files) >= 50
    assert result.files == len(files)
    assert result.errors == 0


def test_case(case_file: Path, corpus_findings):
    _, by_file = corpus_findings
    findings = by_file.get(case_file.name, [])
    expected = expected_codes(case_file)
    reported = {f.code for f in findings}
    if case_file.name.startswith("clean_"):
        assert findings == [], f"clean file got findings: {[(f.code, f.line) for f in findings]}"
        return
    assert reported & IMPLEMENTED == expected & IMPLEMENTED, (
        f"expected {sorted(expected & IMPLEMENTED)}, reported {sorted(reported & IMPLEMENTED)}: "
        f"{[(f.code, f.line) for f in findings]}"
    )
    for code, first, last in markers(case_file):
        if code not in IMPLEMENTED:
            continue
        lines = [f.line for f in findings if f.code == code]
        assert any(first <= line <= last for line in lines), (
            f"marker {code} on lines {first}-{last} not hit; {code} reported on lines {lines}"
        )
