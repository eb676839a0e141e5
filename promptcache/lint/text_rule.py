"""The base of the PC4xx rules: run a check on every prompt literal of an LLM file, and build their fixes."""

from __future__ import annotations

import libcst as cst

from promptcache.lint import literals as L
from promptcache.lint import text_fixes as T
from promptcache.lint.finding import Applicability
from promptcache.lint.rule import LintRule, NodeFix

_NO_EDIT = " (no edit is offered: {why})"


def dedented_in_source(piece: L.Piece) -> bool:
    """PC401 fixes ``piece`` in its source, not by wrapping it: an f-string with replacement fields."""
    return isinstance(piece.node, cst.FormattedString) and any(
        isinstance(p, cst.FormattedStringExpression) for p in piece.node.parts)


class TextRule(LintRule):
    """Shared driver: :meth:`check` runs once per file that uses an LLM SDK, after the walk."""

    def leave_Module(self, node: cst.Module) -> None:
        if self.flow.is_llm_file:
            self.check()

    def check(self) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def literal_fix(self, node: cst.CSTNode, transform, description: str, last: bool = False) -> NodeFix:
        """An unsafe fix that rewrites the literal ``node`` with ``transform`` (:mod:`promptcache.lint.text_fixes`),
        or only describes it when the literal cannot be rewritten safely or the rewrite changes nothing."""
        new = T.rewrite(node, transform, last)
        if new is None or new == self.flow.code(node):
            why = "this literal cannot be rewritten safely" if new is None else "the text to change is an escape sequence"
            return NodeFix(description + _NO_EDIT.format(why=why), Applicability.UNSAFE)
        return NodeFix(description, Applicability.UNSAFE, ((node, new),))

    def dedent_fix(self, piece: L.Piece, indent: int) -> NodeFix:
        """PC401's fix: an f-string with replacement fields loses ``indent`` typed spaces per continuation line
        (``textwrap.dedent`` of the formatted text would depend on the values, which may hold lines of their own);
        any other literal is wrapped in ``textwrap.dedent`` / ``inspect.cleandoc``, the import added once."""
        if dedented_in_source(piece):
            return self.literal_fix(piece.node, T.strip_indent(indent), f"Remove the {indent} spaces of source indentation")
        call = T.dedent_call(piece)
        module_name = call.split(".")[0]
        description = f"Wrap the prompt in {call}()"
        if isinstance(self.flow.facts.parent.get(piece.node), cst.ConcatenatedString):
            return NodeFix(description + _NO_EDIT.format(why="it is one piece of an implicit concatenation"), Applicability.UNSAFE)
        insertion = T.import_insertion(self.flow.module, module_name)
        return NodeFix(description + (f" and import {module_name}" if insertion else ""), Applicability.UNSAFE,
                       ((piece.node, f"{call}({self.flow.code(piece.node)})"),), (insertion,) if insertion else ())

    def block_indent(self, node: cst.CSTNode) -> int:
        """Indentation, in characters, of the block holding ``node``."""
        width = 0
        for anc in self.flow.facts.ancestors(node):
            if isinstance(anc, cst.IndentedBlock):
                width += len(anc.indent if anc.indent is not None else self.flow.module.default_indent)
        return width


__all__ = ["TextRule", "dedented_in_source"]
