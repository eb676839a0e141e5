"""Prompt text: the literals, assemblies and file reads that build a prefix slot.

A **prompt literal** is a string literal that reaches a prefix slot, or the
value of a prompt-named constant (lint-rules.md); user-message text is not.
:class:`PromptText` walks backwards from every slot of
:class:`~promptcache.lint.dataflow.FlowAnalysis` through names, ``self``
attributes, module-local function returns, ``+``, ``%``, f-strings,
``.format``, ``join``, the text transforms ``textwrap.dedent`` /
``inspect.cleandoc`` and promptcache's own normalisation (the arguments of
``PromptBuilder().system/tools/document/example`` and of
``promptcache.prompt.normalize.*``: dedent, trailing whitespace, CRLF, NFC, BOM and
zero-width characters), ``.strip()`` (its end is then not the end of the
prompt) and ``.replace("\\r\\n", "\\n")`` (then *normalised*), and records:

- every prompt literal, with the transforms each path applies to it (the
  rules judge the text as sent, :meth:`LiteralUse.as_sent`) and whether every
  path puts its end at the very end of the assembled prompt;
- every assembly (``a + "\\n" + b``, ``f"{a}\\n\\n{b}"``, ``"\\n".join(parts)``)
  with its parts and separators (PC403);
- every ``open(...)`` / ``.read_bytes().decode()`` read of prompt text (PC404);
- per slot, the strip variants reaching it (PC405).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.expressions import last_name
from promptcache.lint.literals import decode_text, pieces, string_value
from promptcache.lint.slots import builder_method

if TYPE_CHECKING:  # pragma: no cover
    from promptcache.lint.dataflow import FlowAnalysis
    from promptcache.lint.index import Scope

_CONVERSATION = re.compile(r"(?i)(^|_)(messages|msgs|history|turns|conversation|dialog(ue)?)$")
_DEDENT = {"textwrap.dedent": "dedent", "inspect.cleandoc": "cleandoc", "inspect.getdoc": "cleandoc"}
# promptcache's own normalisation (promptcache/prompt/normalize.py): dedent, trailing whitespace, CRLF, NFC, BOM
# and zero-width characters. PromptBuilder layers and promptcache.prompt.normalize.* apply it to their text.
_SDK_NORMALISERS = frozenset({"promptcache.normalize_text", "promptcache.prompt.normalize.normalize_text",
                              "promptcache.prompt.normalize.join_sections",
                              "promptcache.normalize.normalize_text", "promptcache.normalize.join_sections"})
_VALUE_BINDINGS = ("assign", "walrus", "with", "aug", "mutate")


@dataclass
class LiteralUse:
    """A prompt literal and how it reaches its slots.

    ``chains`` holds, for each path, the text transforms applied to the
    literal on the way, outermost first (``"dedent"`` for ``textwrap.dedent``,
    ``"cleandoc"`` for ``inspect.cleandoc``, ``"sdk"`` for promptcache's own
    normalisation: :class:`~promptcache.PromptBuilder` layers and
    ``promptcache.prompt.normalize``). ``at_end`` is True when every path puts the
    literal's end at the very end of the assembled prompt.
    """

    node: cst.BaseExpression
    chains: set[tuple[str, ...]]
    at_end: bool

    @property
    def dedented(self) -> bool:
        """Some path removes the source indentation (dedent, cleandoc or the SDK)."""
        return any(chain for chain in self.chains)

    def as_sent(self, value: str) -> list[str]:
        """``value`` (the literal's text) as each path sends it, transforms applied innermost first."""
        return [apply_transforms(value, chain) for chain in sorted(self.chains)]


@dataclass(frozen=True)
class Variant:
    """One way a slot's value is produced: ``status`` raw / stripped / newline, over ``base`` source text."""

    status: str
    base: str
    site: cst.CSTNode


class PromptText:
    """Prompt-text answers for one module."""

    def __init__(self, flow: FlowAnalysis):
        self.flow = flow
        self.index = flow.index

    def _roots(self):
        for slot in self.flow.system_slots + self.flow.tool_slots:
            if slot.requires is not None:
                continue  # a value filled into another module's template, maybe not into its system part
            sdk = slot.sanitiser == "sdk"
            yield slot.expr, slot.scope, (("sdk",) if sdk else (), True, sdk)
        for sink in self.flow.sinks.all():
            fmt = sink.kw("response_format")
            if fmt is not None:
                yield fmt, sink.scope, ((), True, False)

    @cached_property
    def _walk(self):
        literals: dict[cst.CSTNode, LiteralUse] = {}
        assemblies: dict[cst.CSTNode, Scope] = {}
        reads: dict[cst.CSTNode, bool] = {}
        seen: set[tuple[int, int, tuple]] = set()
        stack = list(self._roots())
        while stack:
            e, scope, ctx = stack.pop()
            key = (id(e), id(scope), ctx)
            if e is None or key in seen:
                continue
            seen.add(key)
            chain, at_end, normalised = ctx
            inner = (chain, False, normalised)  # a part of a larger text: its end is not the prompt's end
            push = stack.append
            if isinstance(e, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                use = literals.get(e)
                if use is None:
                    literals[e] = LiteralUse(e, {chain}, at_end)
                else:
                    use.chains.add(chain)
                    use.at_end &= at_end
                if isinstance(e, cst.FormattedString):
                    assemblies[e] = scope
                for piece in pieces(e):
                    if isinstance(piece.node, cst.FormattedString):
                        for part in piece.node.parts:
                            if isinstance(part, cst.FormattedStringExpression):
                                push((part.expression, scope, inner))
            elif isinstance(e, cst.Name):
                for b in self.index.lookup(e.value, scope)[1]:
                    if b.kind in _VALUE_BINDINGS:
                        push((b.value, b.scope, ctx))
            elif isinstance(e, cst.Attribute):
                if isinstance(e.value, cst.Name) and (cls := self.index.class_of_receiver(e.value, scope)) is not None:
                    for b in cls.attrs.get(e.attr.value, ()):
                        if b.kind in _VALUE_BINDINGS:
                            push((b.value, b.scope, ctx))
            elif isinstance(e, cst.Call):
                self._call(e, scope, ctx, push, assemblies, reads)
            elif isinstance(e, cst.BinaryOperation):
                if isinstance(e.operator, cst.Add):
                    if not isinstance(self.flow.facts.parent.get(e), cst.BinaryOperation):
                        assemblies[e] = scope
                    push((e.left, scope, inner))
                    push((e.right, scope, ctx))
                elif isinstance(e.operator, cst.Modulo):
                    push((e.left, scope, ctx))
                    push((e.right, scope, inner))
            elif isinstance(e, cst.IfExp):
                push((e.body, scope, ctx))
                push((e.orelse, scope, ctx))
            elif isinstance(e, cst.BooleanOperation):
                push((e.left, scope, ctx))
                push((e.right, scope, ctx))
            elif isinstance(e, (cst.List, cst.Tuple)):
                for el in e.elements:
                    push((el.value, scope, inner))
            elif isinstance(e, cst.Dict):
                for el in e.elements:
                    push((el.value, scope, ctx))
            elif isinstance(e, cst.Subscript):
                push((e.value, scope, inner))
            elif isinstance(e, cst.Await):
                push((e.expression, scope, ctx))
        return literals, assemblies, reads

    def _call(self, e: cst.Call, scope: Scope, ctx, push, assemblies, reads) -> None:
        chain, at_end, normalised = ctx
        inner = (chain, False, normalised)
        func = e.func
        qualified = self.index.qualified(func, scope)
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        args = [a.value for a in e.args]
        if qualified in _DEDENT and args:
            push((args[0], scope, (chain + (_DEDENT[qualified],), at_end, normalised)))
        elif (qualified in _SDK_NORMALISERS or builder_method(self.flow, e, scope) is not None) and args:
            for arg in args:
                push((arg, scope, (chain + ("sdk",), at_end, True)))
        elif qualified in S.FILE_OPENS:
            reads[e] = reads.get(e, True) and normalised
        elif qualified == "str" and args:
            push((args[0], scope, ctx))
        elif method in ("strip", "rstrip"):
            push((func.value, scope, inner))
        elif method == "lstrip":
            push((func.value, scope, ctx))
        elif method == "replace" and args and "\r" in (string_value(args[0]) or ""):
            push((func.value, scope, (chain, at_end, True)))
        elif method == "splitlines":
            push((func.value, scope, (chain, at_end, True)))
        elif method in ("format", "format_map"):
            push((func.value, scope, ctx))
            for arg in args:
                push((arg, scope, inner))
        elif method == "join" and args:
            assemblies[e] = scope
            push((func.value, scope, inner))
            push((args[0], scope, inner))
        elif method == "decode" and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Attribute) and func.value.func.attr.value in ("read_bytes", "read"):
            reads[e] = reads.get(e, True) and normalised
        elif method in ("read", "readlines", "getvalue") and isinstance(func.value, (cst.Name, cst.Attribute)):
            push((func.value, scope, ctx))
        else:
            callee = self.index.function_named(func, scope)
            if callee is not None:
                for ret in callee.returns:
                    push((ret, callee, ctx))

    # -- answers ---------------------------------------------------------------
    @property
    def literals(self) -> list[LiteralUse]:
        """Every prompt literal, in source order."""
        order = self.flow.facts.order
        return sorted(self._walk[0].values(), key=lambda u: order.get(u.node, 0))

    @property
    def reads(self) -> list[tuple[cst.Call, bool]]:
        """``(call, normalised)`` for every ``open()`` / ``.decode()`` that reads prompt text."""
        return list(self._walk[2].items())

    @cached_property
    def assemblies(self) -> list[tuple[cst.CSTNode, tuple, tuple[str, ...]]]:
        """``(node, parts, separators)`` for every prompt assembled from named parts and whitespace."""
        out = []
        order = self.flow.facts.order
        for node, scope in sorted(self._walk[1].items(), key=lambda kv: order.get(kv[0], 0)):
            signature = self._signature(node, scope)
            if signature is not None:
                out.append((node, *signature))
        return out

    def _part_key(self, expr: cst.BaseExpression, scope: Scope):
        if isinstance(expr, cst.Name) and any(b.kind == "for" and self._conversation(b.value, b.scope)
                                              for b in self.index.lookup(expr.value, scope)[1]):
            return None  # `for role, message in self.messages: ret += role + "\n" + message`: a chat template
            # renders each message (FastChat's separator styles, one per model), no instructions put together
        ref = self.flow.turns.ref_of(expr, scope)
        if ref is not None:
            return ref
        return self.index.qualified(expr, scope)

    def _conversation(self, iterable: cst.CSTNode | None, scope: Scope) -> bool:
        """``iterable`` (of a ``for``) is the conversation: a history the module sends, or a name for one."""
        while isinstance(iterable, cst.Call) and last_name(iterable.func) in ("enumerate", "reversed", "list"):
            iterable = iterable.args[0].value if iterable.args else None
        if not isinstance(iterable, (cst.Name, cst.Attribute)):
            return False
        return self.flow.turns.ref_of(iterable, scope) in self.flow.turns.history_refs or bool(_CONVERSATION.search(last_name(iterable)))

    def _signature(self, node: cst.CSTNode, scope: Scope):
        tokens: list[tuple[str, object]] = []
        if isinstance(node, cst.Call):
            sep = string_value(node.func.value)
            joined = node.args[0].value
            if sep is None or sep.strip():
                return None
            if isinstance(joined, (cst.List, cst.Tuple)):
                # "\n".join([PERSONA, RULES]) is PERSONA + "\n" + RULES: comparable with the other shapes
                keys = [self._part_key(el.value, scope) if isinstance(el, cst.Element) else None for el in joined.elements]
                if len(keys) < 2 or None in keys:
                    return None
                return tuple(keys), (sep,) * (len(keys) - 1)
            key = self._part_key(joined, scope)
            if key is None:
                return None
            return (("join", key),), (sep,)
        if isinstance(node, cst.BinaryOperation):
            operands = _flatten_add(node)
        else:
            operands = list(node.parts)
        for operand in operands:
            if isinstance(operand, cst.FormattedStringText):
                tokens.append(("lit", decode_text(operand, node)))
            elif isinstance(operand, cst.FormattedStringExpression):
                key = self._part_key(operand.expression, scope)
                if key is None or operand.format_spec or operand.conversion:
                    return None
                tokens.append(("part", key))
            elif (value := string_value(operand)) is not None:
                tokens.append(("lit", value))
            else:
                key = self._part_key(operand, scope)
                if key is None:
                    return None
                tokens.append(("part", key))
        parts = tuple(v for k, v in tokens if k == "part")
        if len(parts) < 2 or any(k == "lit" and str(v).strip() for k, v in tokens):
            return None
        seps: list[str] = []
        current: str | None = None
        for kind, value in tokens:
            if kind == "part":
                if current is not None:
                    seps.append(current)
                current = ""
            elif current is not None:
                current += value
        return parts, tuple(seps)

    def variants(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> list[Variant]:
        """The strip variants of a slot value, through names, local function returns and conditionals."""
        if depth > 6:
            return []
        if isinstance(expr, cst.Name):
            bindings = [b for b in self.index.lookup(expr.value, scope)[1] if b.kind in ("assign", "walrus")]
            if bindings:
                return [v for b in bindings for v in self.variants(b.value, b.scope, depth + 1)]
        if isinstance(expr, cst.IfExp):
            return self.variants(expr.body, scope, depth + 1) + self.variants(expr.orelse, scope, depth + 1)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("strip", "rstrip"):
                return [Variant("stripped", self._canonical(func.value, scope), expr)]
            callee = self.index.function_named(func, scope)
            if callee is not None and callee.returns:
                return [v for r in callee.returns for v in self.variants(r, callee, depth + 1)]
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            tail = string_value(expr.right)
            if tail is not None and tail.endswith("\n") and not tail.strip():
                return [Variant("newline", self._canonical(expr.left, scope), expr)]
        return [Variant("raw", self.flow.code(expr), expr)]

    def _canonical(self, expr: cst.BaseExpression, scope: Scope) -> str:
        """Source text of what ``expr`` denotes, through names bound exactly once."""
        for _ in range(6):
            if not isinstance(expr, cst.Name):
                break
            bindings = self.index.lookup(expr.value, scope)[1]
            if len(bindings) != 1 or bindings[0].kind != "assign":
                break
            expr, scope = bindings[0].value, bindings[0].scope
        return self.flow.code(expr)


def _flatten_add(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add) and not node.lpar:
        return _flatten_add(node.left) + _flatten_add(node.right)
    return [node]


def apply_transforms(value: str, chain: tuple[str, ...]) -> str:
    """Apply a path's transforms (outermost first in ``chain``) to a literal's text, innermost first."""
    for name in reversed(chain):
        if name == "dedent":
            value = textwrap.dedent(value)
        elif name == "cleandoc":
            value = inspect.cleandoc(value)
        elif name == "sdk":
            from promptcache.prompt.normalize import normalize_text  # the SDK's own rules; loaded only when used

            value = normalize_text(value)
    return value
