"""Output formats of ``promptcache lint``: concise, full, json, sarif, github.

Each format is one module with ``render(result, out)``. Lines and columns are
1-based everywhere. ``concise`` and ``full`` end with the summary line;
machine formats (json, sarif, github) keep stdout parseable, and the CLI
prints the summary to stderr for them.
"""

from __future__ import annotations

import importlib
from typing import TextIO

from promptcache.lint.reporters.summary import summary
from promptcache.lint.runner import LintResult

FORMATS = ("concise", "full", "json", "sarif", "github")
MACHINE_FORMATS = frozenset({"json", "sarif", "github"})
__all__ = ["FORMATS", "MACHINE_FORMATS", "render", "summary"]
_MODULES = {"concise": "concise", "full": "full", "json": "json_format", "sarif": "sarif", "github": "github"}


def render(result: LintResult, fmt: str, out: TextIO, *, color: bool = False) -> None:
    """Write ``result`` to ``out`` in format ``fmt`` (one of :data:`FORMATS`); raises ValueError otherwise."""
    if fmt not in _MODULES:
        raise ValueError(f"unknown output format {fmt!r}: use one of {', '.join(FORMATS)}")
    module = importlib.import_module(f"{__name__}.{_MODULES[fmt]}")
    if fmt == "full":
        module.render(result, out, color=color)
    else:
        module.render(result, out)
