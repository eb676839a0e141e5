"""The targeted position pass gives the same ranges as libcst's PositionProvider for reported node kinds."""

from __future__ import annotations

import inspect

import libcst as cst
import pytest

from promptcache.lint import dataflow, runner
from promptcache.lint.positions import node_ranges
from promptcache.lint.walk import iter_children

KINDS = (
    cst.Call,
    cst.Name,
    cst.Attribute,
    cst.Subscript,
    cst.SimpleString,
    cst.FormattedString,
    cst.ConcatenatedString,
    cst.Dict,
    cst.List,
    cst.BinaryOperation,
    cst.Assign,
    cst.AugAssign,
    cst.Del,
)


def _nodes(module):
    stack = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, KINDS):
            yield node
        stack.extend(iter_children(node))


@pytest.mark.parametrize("source_module", [dataflow, runner])
def test_targeted_ranges_match_position_provider(source_module):
    module = cst.parse_module(inspect.getsource(source_module))
    nodes = list(_nodes(module))
    ours = node_ranges(module, nodes)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(cst.metadata.PositionProvider)
    assert len(nodes) > 300
    for node in nodes:
        r = theirs[node]
        assert ours[node] == (r.start.line, r.start.column, r.end.line, r.end.column), module.code_for_node(node)[:60]


def test_corpus_positions(case_file):
    module = cst.parse_module(case_file.read_bytes())
    nodes = list(_nodes(module))
    ours = node_ranges(module, nodes)
    theirs = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(cst.metadata.PositionProvider)
    assert all(ours[n] == (theirs[n].start.line, theirs[n].start.column, theirs[n].end.line, theirs[n].end.column) for n in nodes)
