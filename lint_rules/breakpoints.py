"""PC601, PC602: Anthropic cache breakpoints on the wrong block, or too many of them.

Anthropic writes a cache entry only at a block carrying ``cache_control``
(or at the last block, with a top-level ``cache_control=``: automatic
caching), at most 4 per request (provider-cache-rules.md, "Anthropic"). The
blocks of a request come from :mod:`promptcache.lint.markers`; the sizes
(PC603, PC604) are in :mod:`lint_rules.breakpoint_sizes`.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint import markers as M
from promptcache.lint.finding import Severity
from promptcache.lint.rule import Invalid, LintRule

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_MARK = "'cache_control': {'type': 'ephemeral'}"



def _per_request(flow, block: M.Block, params_only: bool = False) -> bool:
    """True when ``block`` differs between requests: a volatile or identity value (unless ``params_only``), or
    a parameter of the function holding it that its calls do not bind to one fixed value (PC102's judgement,
    :meth:`promptcache.lint.call_sites.CallSites.fixed_everywhere`)."""
    if block.node is None:
        return False
    holder = flow.holder_of(block.scope)
    for s in flow.taint.of(block.node, block.scope):
        if s.kind == S.VOLATILE and s.import_time:
            continue  # read once, when the module is imported: the block is fixed per process (PC101 says so)
        if s.kind in (S.VOLATILE, S.IDENTITY) and not params_only:
            return True
        if s.kind == S.PARAM and holder is not None and s.func_id == id(holder) and not flow.call_sites.fixed_everywhere(holder, s.index):
            return True
    return False


def _document(flow, blocks: list, first: M.Block) -> bool:
    """True when the marked ``first`` block is a parameter only (no clock, no identity) and a later block
    carries another per-request parameter (the question): a document or manual marked once and questioned
    several times, Anthropic's document-caching pattern; its entry is read by the next question about it."""
    i = blocks.index(first)
    later = [b for b in blocks[i + 1:] if not b.marked]
    if not later or _per_request(flow, first) != _per_request(flow, first, params_only=True):
        return False
    mine = {(s.func_id, s.index) for s in flow.taint.of(first.node, first.scope) if s.kind == S.PARAM}
    for b in later:
        if b.node is None or not _per_request(flow, b, params_only=True):
            continue
        theirs = {(s.func_id, s.index) for s in flow.taint.of(b.node, b.scope) if s.kind == S.PARAM}
        if theirs - mine:
            return True
    return False


class BreakpointOnVolatileBlock(LintRule):
    """
    ## What it does
    Finds an Anthropic request whose first (or only) ``cache_control``
    marker sits on per-request content (a parameter of the function holding
    the call, such as the user's question, or a volatile value) while a
    stable prefix (tools, system, earlier literal messages) comes before it
    with no marker of its own, in a request whose messages the code writes
    out (no spliced history).

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

    ## Why is this bad?
    Anthropic writes cache entries only at breakpoints. A marker on the
    question writes an entry for tools + system + that question, which no
    later request (with another question) can read; the stable part before
    it is never written on its own, so every request pays the cache-write
    premium (1.25x) and reads nothing.

    ## Example
    ```python
    system=[{"type": "text", "text": DOCS_PROMPT}, {"type": "text", "text": API_REFERENCE}],
    messages=[{"role": "user", "content": [{"type": "text", "text": question, "cache_control": {"type": "ephemeral"}}]}],
    ```

    ## Use instead
    ```python
    system=[{"type": "text", "text": DOCS_PROMPT},
            {"type": "text", "text": API_REFERENCE, "cache_control": {"type": "ephemeral"}}],
    messages=[{"role": "user", "content": question}],
    ```

    ## When it does not fire
    A marker on a document or manual passed in, with the question in a later
    unmarked block (``[{document, cache_control}, {question}]``: Anthropic's
    document-caching pattern, each further question about the same document
    reads the entry); a parameter every call binds to one fixed value (as
    for PC102); a marker on the last stable block; a marker on the newest message of a
    conversation that is sent again next turn (``[*history, new]``, or a
    history list: the next request reads it back, Anthropic's incremental
    caching); automatic caching (top-level ``cache_control=``); a first
    marker on stable content (a later marker on the question is then only a
    wasted write, not this rule).
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``,
    its tools / system / messages set differently on different paths).
    """

    code = "PC601"
    name = "breakpoint-on-volatile-block"
    severity = Severity.WARNING
    message = ("the first cache_control marker of this request is on per-request content and nothing marks the "
               "stable prefix before it: each request writes an entry no later request reads; put the marker on "
               "the last stable block (the end of the system prompt or tools)")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        for sink in M.anthropic_requests(flow):
            lay = M.layout(flow, sink)
            marked = lay.marked
            if lay.top_level or lay.opaque or not marked:
                continue
            first = marked[0]
            i = lay.blocks.index(first)
            before = lay.blocks[:i]
            if any(b.part == "messages" and b.node is None for b in before):
                continue
            if not before or not _per_request(flow, first) or _document(flow, lay.blocks, first):
                continue
            if all(b.node is not None and _per_request(flow, b) for b in before):
                continue
            self.report(first.node, self.message)

    VALID = [
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': DOCS, {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        # a clock read when the module is imported is fixed per process: the marked block is read back by every
        # later request of the process (PC101 reports the clock; newcomer, stop 31)
        _CLAUDE + f"import datetime\nTOOLS = [{{'name': 'refund', 'input_schema': {{'type': 'object'}}}}]\nSYSTEM = f'Be brief. Started {{datetime.datetime.now()}}.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, tools=TOOLS,\n        system=[{{'type': 'text', 'text': SYSTEM, {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        # Incremental caching of a conversation: the newest turn is marked and read back next turn.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(history, q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS,\n        messages=[*history, {{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n",
        # Automatic caching.
        _CLAUDE + "DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS, cache_control={'type': 'ephemeral'},\n        messages=[{'role': 'user', 'content': q}])\n",
        # Issue 11 review: a document (or manual) marked once and questioned several times; the question follows it.
        _CLAUDE + f"def ask_about(document, question):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system='You answer questions about the document.',\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': document, {_MARK}}}, {{'type': 'text', 'text': question}}]}}])\n",
        _CLAUDE + f"def ask_about(manual_text, question):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': 'You answer questions about the manual.'}}, {{'type': 'text', 'text': manual_text, {_MARK}}}],\n        messages=[{{'role': 'user', 'content': question}}])\n",
        # The stable prefix is marked first; the marker on the question is only a second write.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=[{{'type': 'text', 'text': DOCS, {_MARK}}}],\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n",
        # The request built as a dict literal, the marker on the end of the system prompt.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    params = {{'model': 'claude-sonnet-4-5', 'max_tokens': 1024, 'system': [{{'type': 'text', 'text': DOCS, {_MARK}}}],\n              'messages': [{{'role': 'user', 'content': q}}]}}\n    return client.messages.create(**params)\n",
        # Options from the caller merged into the dict may carry tools, system or markers: not judged.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(q, overrides):\n    request = {{'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'system': DOCS}}\n    request['messages'] = [{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}]\n    request.update(overrides)\n    return client.messages.create(**request)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS,\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n", line=6),
        Invalid(_CLAUDE + f"from .docs import REFERENCE\ndef ask(q):\n    blocks = [{{'type': 'text', 'text': f'Question: {{q}}', {_MARK}}}]\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=[{{'type': 'text', 'text': REFERENCE}}],\n        messages=[{{'role': 'user', 'content': blocks}}])\n", line=5),
        Invalid(_CLAUDE + f"import time\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system='You answer.',\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': f'at {{time.time()}}', {_MARK}}}, {{'type': 'text', 'text': q}}]}}])\n", line=6),
        # The request dict completed by .update(messages=...): the marker on the question.
        Invalid(_CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    request = {{'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'system': DOCS}}\n    request.update(messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n    return client.messages.create(**request)\n", line=6),
        # An item assignment puts the marked question into the dict.
        Invalid(_CLAUDE + f"from .docs import REFERENCE\ndef ask(q):\n    params = dict(model='claude-sonnet-4-5', max_tokens=9, system=[{{'type': 'text', 'text': REFERENCE}}])\n    params['messages'] = [{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}]\n    return client.messages.create(**params)\n", line=6),
    ]


class TooManyBreakpoints(LintRule):
    """
    ## What it does
    Finds an Anthropic request with more than 4 ``cache_control`` markers:
    counted in the ``tools`` / ``system`` / ``messages`` the call sends
    (and names bound to them), plus a top-level ``cache_control=``, where a
    marker made in a loop over the history counts once per message (without
    bound). Also finds a marker set on a message dict that belongs to a kept
    history (``self.messages``, a parameter the function appends to), directly
    or through a shallow copy (``list(h)``, ``h.copy()``, ``h[:]``,
    ``[*h]``) or messages rebuilt around the stored content lists
    (``[{"role": m["role"], "content": m["content"]} for m in h]``): the
    dicts are shared, so the marker stays in the history and each turn adds
    one more.

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict. A block written with the SDK's
    ``TypedDict`` (``TextBlockParam(type="text", text=t, cache_control=...)``)
    counts as the dict literal it builds.

    ## Why is this bad?
    Anthropic allows at most 4 breakpoints per request and answers more with
    an HTTP 400: the request fails once the history is long enough, or after
    the fourth turn for a leaked marker.

    ## Example
    ```python
    messages = list(self.history)                    # a shallow copy: the dicts are shared
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    ```

    ## Use instead
    ```python
    messages = copy.deepcopy(self.history)
    messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    ```
    and mark only the last one or two messages of the history, not every one.

    ## When it does not fire
    Markers under a condition (``if i >= len(history) - 2``); loops of a
    fixed length (``for m in history[-2:]``); a module that removes markers
    again (``.pop("cache_control")``, ``del block["cache_control"]``) or
    deep-copies; a copy that gets a new message appended (the marker then
    goes on the new dict).
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``,
    its tools / system / messages set differently on different paths).
    """

    code = "PC602"
    name = "too-many-breakpoints"
    severity = Severity.ERROR
    message = "{what}: Anthropic allows at most 4 cache breakpoints per request and answers more with HTTP 400; {fix}"

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        if not flow.is_llm_file:
            return
        requests = M.anthropic_requests(flow)
        for sink in requests:
            fixed, unbounded, _ = M.count(flow, sink)
            if unbounded:
                what = (f"a cache_control marker is added for every element of a list in a loop"
                        f"{f', beside {fixed} other marker' + ('s' if fixed != 1 else '') if fixed else ''}")
                self.report(sink.call, self.message.format(what=what, fix="mark only the last one or two messages"))
            elif fixed > 4:
                self.report(sink.call, self.message.format(what=f"{fixed} cache_control markers in one request",
                                                           fix="keep at most 4 (the last block of tools, system, and the history)"))
        if not requests and not flow.index.imports_llm:
            return
        for stmt, written, kept, shared in M.leaked_markers(flow):
            what = (f"cache_control is set on a message of `{kept}`" if written == kept else
                    f"cache_control is set on a message of `{written}`, a shallow copy of `{kept}` ({shared})")
            self.report(stmt, self.message.format(
                what=what + ", so the marker stays in the stored history and every turn adds one",
                fix="copy.deepcopy the history before marking it, or remove old markers"))

    VALID = [
        _CLAUDE + f"def ask(history):\n    msgs = [dict(m) for m in history]\n    return client.messages.create(model='m', max_tokens=9,\n        system=[{{'type': 'text', 'text': 'A', {_MARK}}}], messages=[*msgs[:-1], {{'role': 'user', 'content': [{{'type': 'text', 'text': 'q', {_MARK}}}]}}])\n",
        # A loop of fixed length: the last two messages.
        _CLAUDE + f"def ask(history):\n    msgs = []\n    for m in history[-2:]:\n        msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n    return client.messages.create(model='m', max_tokens=9, messages=msgs)\n",
        # Deep copy before marking.
        _CLAUDE + "import copy\nclass Chat:\n    def ask(self):\n        msgs = copy.deepcopy(self.history)\n        msgs[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n        return client.messages.create(model='m', max_tokens=9, messages=msgs)\n",
        # A marker under a condition in the loop.
        _CLAUDE + f"def ask(history):\n    msgs = []\n    for i, m in enumerate(history):\n        if i == len(history) - 1:\n            msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n        else:\n            msgs.append(m)\n    return client.messages.create(model='m', max_tokens=9, messages=msgs)\n",
        # Issue 11 review: messages rebuilt with copies of their content blocks; the marker goes on a copy.
        _CLAUDE + "class Chat:\n    def __init__(self):\n        self.history = []\n    def ask(self, q):\n        self.history.append({'role': 'user', 'content': [{'type': 'text', 'text': q}]})\n        msgs = [{'role': m['role'], 'content': [dict(b) for b in m['content']]} for m in self.history]\n        msgs[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n        r = client.messages.create(model='m', max_tokens=9, messages=msgs)\n        self.history.append({'role': 'assistant', 'content': r.content})\n        return r\n",
        # A request dict with markers on the system prompt and on the last two messages only.
        _CLAUDE + f"def ask(history):\n    msgs = []\n    for m in history[-2:]:\n        msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n    params = dict(model='m', max_tokens=9, system=[{{'type': 'text', 'text': 'A', {_MARK}}}], messages=[*history[:-2], *msgs])\n    return client.messages.create(**params)\n",
        # The messages come from a helper of another module: their markers are not counted.
        _CLAUDE + f"from .history import marked\ndef ask(history):\n    params = {{'model': 'm', 'max_tokens': 9, 'system': [{{'type': 'text', 'text': 'A', {_MARK}}}]}}\n    params['messages'] = marked(history)\n    return client.messages.create(**params)\n",
        # Issue 11: four markers set with the SDK's TypedDict (`cache_control=` keyword).
        _CLAUDE + "from anthropic.types import TextBlockParam\nC = {'type': 'ephemeral'}\ndef ask(history):\n    return client.messages.create(model='m', max_tokens=512, system=[TextBlockParam(type='text', text='a', cache_control=C), TextBlockParam(type='text', text='b', cache_control=C), TextBlockParam(type='text', text='c', cache_control=C), TextBlockParam(type='text', text='d', cache_control=C)], messages=history)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"def ask(history):\n    msgs = []\n    for m in history:\n        msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n    return client.messages.create(model='m', max_tokens=9, messages=msgs)\n", line=7),
        Invalid(_CLAUDE + "class Chat:\n    def ask(self):\n        msgs = list(self.history)\n        msgs[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n        return client.messages.create(model='m', max_tokens=9, messages=msgs)\n", line=6),
        Invalid(_CLAUDE + "".join(f"P{i} = 'p{i}'\n" for i in range(5)) + "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, messages=[{'role': 'user', 'content': q}],\n        system=[" + ", ".join(f"{{'type': 'text', 'text': P{i}, {_MARK}}}" for i in range(5)) + "])\n", line=9),
        Invalid(_CLAUDE + "def turn(history, q):\n    history.append({'role': 'user', 'content': [{'type': 'text', 'text': q}]})\n    history[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n", line=5),
        # Issue 11 review (snips3/w_mark_last_copy.py): new message dicts around the stored content lists.
        Invalid(_CLAUDE + "class Chat:\n    def __init__(self):\n        self.history = []\n    def ask(self, q):\n        self.history.append({'role': 'user', 'content': [{'type': 'text', 'text': q}]})\n        msgs = [{'role': m['role'], 'content': m['content']} for m in self.history]\n        msgs[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n        r = client.messages.create(model='m', max_tokens=9, messages=msgs)\n        self.history.append({'role': 'assistant', 'content': r.content})\n        return r\n", line=9),
        # A marker per history message, the request sent as **params.
        Invalid(_CLAUDE + f"def ask(history):\n    msgs = []\n    for m in history:\n        msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n    params = {{'model': 'm', 'max_tokens': 9, 'messages': msgs}}\n    return client.messages.create(**params)\n", line=8),
        # Issue 11: markers set with the SDK's TypedDicts: five blocks, and one per history message.
        Invalid(_CLAUDE + "from anthropic.types import TextBlockParam\nC = {'type': 'ephemeral'}\ndef ask(history):\n    return client.messages.create(model='m', max_tokens=512, system=[TextBlockParam(type='text', text='a', cache_control=C), TextBlockParam(type='text', text='b', cache_control=C), TextBlockParam(type='text', text='c', cache_control=C), TextBlockParam(type='text', text='d', cache_control=C), TextBlockParam(type='text', text='e', cache_control=C)], messages=history)\n", line=6),
        Invalid(_CLAUDE + "from anthropic.types import TextBlockParam, UserMessageParam\ndef ask(history):\n    msgs = [UserMessageParam(role=m['role'], content=[TextBlockParam(type='text', text=m['content'], cache_control={'type': 'ephemeral'})]) for m in history]\n    return client.messages.create(model='m', max_tokens=9, messages=msgs)\n", line=6),
    ]
