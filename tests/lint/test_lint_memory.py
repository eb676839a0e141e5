"""Linting a file leaves no reference cycles: its tree is freed by reference counting as soon as the file is done.

A cycle anywhere in the per-file state (scope <-> binding, the data-flow analysis <-> its parts) keeps the
whole libcst tree alive until the cyclic collector walks it, again and again (about 2 s of CPU on
pydantic-ai's 555 parsed files). ``FileContext.release`` breaks them; this checks it on every case file.
"""

from __future__ import annotations

import gc

import libcst as cst

from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import lint_bytes
from promptcache.lint.runner import select_rules


def _cyclic_garbage_after_lint(data: bytes, path: str, config: LintConfig) -> list[str]:
    """The type names of the tree nodes and engine objects that only the cyclic collector could free."""
    rules = [r for r in select_rules(config) if r.code != "PC901"]
    gc.collect()
    gc.disable()
    try:
        result = lint_bytes(data, path, rules, config)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = sorted({
            type(o).__name__ for o in gc.garbage
            if isinstance(o, cst.CSTNode) or type(o).__module__.startswith(("promptcache", "lint_rules"))
        })
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert result.parsed
    return left


def test_linting_a_case_file_leaves_no_cyclic_garbage(case_file):
    config = LintConfig(root=case_file.parent)
    assert _cyclic_garbage_after_lint(case_file.read_bytes(), str(case_file), config) == []


def test_a_file_with_classes_methods_and_findings_leaves_no_cyclic_garbage(tmp_path):
    source = (
        "import anthropic\nfrom datetime import datetime\n\n"
        "class Bot:\n"
        "    def __init__(self):\n        self.client = anthropic.Anthropic()\n        self.history = []\n\n"
        "    def ask(self, q):\n"
        "        self.history.append({'role': 'user', 'content': q})\n"
        "        return self.client.messages.create(model='m', system=f'Now: {datetime.now()}', messages=self.history)\n"
    )
    config = LintConfig(root=tmp_path)
    assert _cyclic_garbage_after_lint(source.encode(), "bot.py", config) == []
