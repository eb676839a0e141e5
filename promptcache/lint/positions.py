"""Line and column ranges for the few nodes a file reports.

libcst's ``PositionProvider`` records a range for every node of the module,
which costs about five times a plain code generation. A finding needs the
range of a handful of nodes, so this module runs one code generation that
tracks the cursor cheaply and records ranges only for the requested nodes.
The ranges follow ``PositionProvider``'s syntactic rules for expressions and
simple statements (start at the first token, end after the last one); for
compound statements the header's start is used.

Only files with findings pay for it, once, and only up to the last of the
requested nodes: the code generation stops as soon as every one has its range.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import libcst as cst

try:  # the hook libcst's own PositionProvider uses
    from libcst._nodes.internal import CodegenState as _CodegenState
except ImportError:  # pragma: no cover - libcst moved its internals
    _CodegenState = None

_NULL = nullcontext()

_LINE = re.compile(r".*?(?:\r\n|\r|\n)|.+$", re.DOTALL)

# (start_line, start_col0, end_line, end_col0): lines 1-based, columns 0-based.
Range = tuple[int, int, int, int]


class _AllFound(Exception):
    """Raised inside the code generation once every requested node has its range (nothing after it matters)."""


if _CodegenState is not None:

    @dataclass
    class _TargetedPositions(_CodegenState):
        targets: frozenset = frozenset()
        found: dict = field(default_factory=dict)
        line: int = 1
        column: int = 0
        stack: list = field(default_factory=list)
        done: set = field(default_factory=set)  # targets whose whole code has been generated

        def add_indent_tokens(self) -> None:
            for token in self.indent_tokens:
                self.add_token(token)

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            newlines = value.count("\n")
            if newlines == 0:
                self.column += len(value)
            else:
                self.line += newlines
                self.column = len(value) - value.rfind("\n") - 1

        def before_codegen(self, node: cst.CSTNode) -> None:
            if node in self.targets:
                self.stack.append((self.line, self.column))

        def after_codegen(self, node: cst.CSTNode) -> None:
            if node in self.targets:
                line, column = self.stack.pop()
                self.found.setdefault(node, (line, column, self.line, self.column))
                # A node's range is final once its own code is generated (the syntactic range, recorded
                # inside it, wins over this one): stop when that holds for every target.
                self.done.add(node)
                if len(self.done) == len(self.targets):
                    raise _AllFound

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            if node in self.targets:
                return self._record(node)
            return _NULL

        @contextmanager
        def _record(self, node: cst.CSTNode):
            start = (self.line, self.column)
            yield
            self.found[node] = (start[0], start[1], self.line, self.column)


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` with their ends, split where Python's tokenizer splits them (``\\r\\n``, ``\\r``,
    ``\\n``; ``str.splitlines`` also splits at form feeds and other separators, which would shift line numbers)."""
    return [m.group() for m in _LINE.finditer(text) if m.group()]


def node_ranges(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, Range]:
    """Return ``{node: (start_line, start_col0, end_line, end_col0)}`` for ``nodes``.

    Lines are 1-based, columns 0-based (add 1 for output). Nodes that are not
    part of ``module`` are absent from the result.
    """
    targets = frozenset(nodes)
    if not targets:
        return {}
    if _CodegenState is None:  # pragma: no cover - fallback on a future libcst
        wrapper = cst.MetadataWrapper(module, unsafe_skip_copy=True)
        ranges = wrapper.resolve(cst.metadata.PositionProvider)
        return {
            n: (r.start.line, r.start.column, r.end.line, r.end.column)
            for n, r in ranges.items()
            if n in targets
        }
    state = _TargetedPositions(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        targets=targets,
    )
    try:
        module._codegen(state)
    except _AllFound:
        pass
    return state.found
