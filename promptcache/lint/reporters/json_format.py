"""``--output-format json``: a JSON list of finding objects.

Each object has ``code``, ``name``, ``severity``, ``path``, ``line``,
``column``, ``end_line``, ``end_column`` (1-based, end exclusive),
``message`` and ``fix`` (null, or ``{"message", "applicability", "edits"}``).
"""

from __future__ import annotations

import json
from typing import TextIO

from promptcache.lint.runner import LintResult


def render(result: LintResult, out: TextIO) -> None:
    """Write the findings as a JSON list (one object per finding, in the sorted order), then a newline."""
    json.dump([f.to_json() for f in result.findings], out, indent=2, ensure_ascii=False)
    out.write("\n")
