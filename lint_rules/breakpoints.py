"""PC6xx: Anthropic cache breakpoints that cache nothing, too much, or the wrong thing.

Anthropic writes a cache entry only at a block carrying ``cache_control``
(or at the last block, with a top-level ``cache_control=``: automatic
caching), at most 4 per request, and only when the prefix up to it reaches
the model's minimum cacheable length (provider-cache-rules.md,
"Anthropic"). The minimums come from the providers data
(:func:`promptcache.providers.model_profile`), per model; the blocks of a
request from :mod:`promptcache.lint.markers`.
"""

from __future__ import annotations

import functools
import warnings

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint import markers as M
from promptcache.lint.finding import Severity
from promptcache.lint.rule import Invalid, LintRule
from promptcache.lint.walk import descendants
from promptcache.providers import UnknownModelWarning, known_models, model_profile

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_MARK = "'cache_control': {'type': 'ephemeral'}"
_APIS = ("anthropic", "litellm")



@functools.lru_cache(maxsize=None)
def _smallest_minimum() -> int:
    """The smallest minimum cacheable length of any Anthropic model in the providers data (tokens)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownModelWarning)
        return min(model_profile("anthropic", m).min_cacheable_tokens for m in known_models("anthropic"))


def _extreme_models() -> tuple[str, str, int]:
    """The Claude models with the smallest and the largest minimum, and the smallest (for the cases below, so they
    follow the providers data)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownModelWarning)
        mins = {m: model_profile("anthropic", m).min_cacheable_tokens for m in known_models("anthropic")}
    small, big = min(mins, key=mins.__getitem__), max(mins, key=mins.__getitem__)
    return small, big, mins[small]


_SMALL, _BIG, _SMALL_MIN = _extreme_models()
_LONG = "X" * (M.CHARS_PER_TOKEN * _SMALL_MIN + 400)  # just above the smallest minimum, far below the largest


def minimum(flow, sink) -> tuple[int, str]:
    """``(tokens, where from)``: the minimum cacheable length of the call's literal ``model=`` from the providers
    data, or, when the model is not a literal Claude id, the smallest minimum of any Claude model."""
    model = sink.kw("model")
    if isinstance(model, cst.SimpleString):
        name = model.value.strip("'\"")
        if "claude" in name.lower():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnknownModelWarning)
                return model_profile("anthropic", name).min_cacheable_tokens, name
    return _smallest_minimum(), "the smallest of any Claude model"


def _anthropic(sink) -> bool:
    if sink.api == "anthropic":
        return True
    model = sink.kw("model")
    return sink.api == "litellm" and isinstance(model, cst.SimpleString) and "claude" in model.value.lower()


def _per_request(flow, block: M.Block, params_only: bool = False) -> bool:
    """True when ``block`` differs between requests: a volatile or identity value (unless ``params_only``), or
    a parameter of the function holding it that its calls do not bind to one fixed value (PC102's judgement,
    :meth:`promptcache.lint.call_sites.CallSites.fixed_everywhere`)."""
    if block.node is None:
        return False
    holder = flow.holder_of(block.scope)
    for s in flow.taint.of(block.node, block.scope):
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
    """

    code = "PC601"
    name = "breakpoint-on-volatile-block"
    severity = Severity.WARNING
    message = ("the first cache_control marker of this request is on per-request content and nothing marks the "
               "stable prefix before it: each request writes an entry no later request reads; put the marker on "
               "the last stable block (the end of the system prompt or tools)")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        if not flow.is_llm_file:
            return
        for sink in flow.sinks.all():
            if not _anthropic(sink):
                continue
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
        # Incremental caching of a conversation: the newest turn is marked and read back next turn.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(history, q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS,\n        messages=[*history, {{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n",
        # Automatic caching.
        _CLAUDE + "DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS, cache_control={'type': 'ephemeral'},\n        messages=[{'role': 'user', 'content': q}])\n",
        # Issue 11 review: a document (or manual) marked once and questioned several times; the question follows it.
        _CLAUDE + f"def ask_about(document, question):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system='You answer questions about the document.',\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': document, {_MARK}}}, {{'type': 'text', 'text': question}}]}}])\n",
        _CLAUDE + f"def ask_about(manual_text, question):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': 'You answer questions about the manual.'}}, {{'type': 'text', 'text': manual_text, {_MARK}}}],\n        messages=[{{'role': 'user', 'content': question}}])\n",
        # The stable prefix is marked first; the marker on the question is only a second write.
        _CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=[{{'type': 'text', 'text': DOCS, {_MARK}}}],\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"DOCS = 'Reference.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=DOCS,\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_MARK}}}]}}])\n", line=6),
        Invalid(_CLAUDE + f"from .docs import REFERENCE\ndef ask(q):\n    blocks = [{{'type': 'text', 'text': f'Question: {{q}}', {_MARK}}}]\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=[{{'type': 'text', 'text': REFERENCE}}],\n        messages=[{{'role': 'user', 'content': blocks}}])\n", line=5),
        Invalid(_CLAUDE + f"import time\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system='You answer.',\n        messages=[{{'role': 'user', 'content': [{{'type': 'text', 'text': f'at {{time.time()}}', {_MARK}}}, {{'type': 'text', 'text': q}}]}}])\n", line=6),
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
    ``[*h]``): the dicts are shared, so the marker stays in the history and
    each turn adds one more.

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
    """

    code = "PC602"
    name = "too-many-breakpoints"
    severity = Severity.ERROR
    message = "{what}: Anthropic allows at most 4 cache breakpoints per request and answers more with HTTP 400; {fix}"

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        if not flow.is_llm_file:
            return
        anthropic = False
        for sink in flow.sinks.all():
            if not _anthropic(sink):
                continue
            anthropic = True
            fixed, unbounded, _ = M.count(flow, sink)
            if unbounded:
                what = (f"a cache_control marker is added for every element of a list in a loop"
                        f"{f', beside {fixed} other marker' + ('s' if fixed != 1 else '') if fixed else ''}")
                self.report(sink.call, self.message.format(what=what, fix="mark only the last one or two messages"))
            elif fixed > 4:
                self.report(sink.call, self.message.format(what=f"{fixed} cache_control markers in one request",
                                                           fix="keep at most 4 (the last block of tools, system, and the history)"))
        if not anthropic and not flow.index.imports_llm:
            return
        for stmt, written, kept in M.leaked_markers(flow):
            what = (f"cache_control is set on a message of `{kept}`" if written == kept else
                    f"cache_control is set on a message of `{written}`, a shallow copy of `{kept}` (the dicts are shared)")
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
    ]
    INVALID = [
        Invalid(_CLAUDE + f"def ask(history):\n    msgs = []\n    for m in history:\n        msgs.append({{'role': m['role'], 'content': [{{'type': 'text', 'text': m['content'], {_MARK}}}]}})\n    return client.messages.create(model='m', max_tokens=9, messages=msgs)\n", line=7),
        Invalid(_CLAUDE + "class Chat:\n    def ask(self):\n        msgs = list(self.history)\n        msgs[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n        return client.messages.create(model='m', max_tokens=9, messages=msgs)\n", line=6),
        Invalid(_CLAUDE + "".join(f"P{i} = 'p{i}'\n" for i in range(5)) + "def ask(q):\n    return client.messages.create(model='m', max_tokens=9, messages=[{'role': 'user', 'content': q}],\n        system=[" + ", ".join(f"{{'type': 'text', 'text': P{i}, {_MARK}}}" for i in range(5)) + "])\n", line=9),
        Invalid(_CLAUDE + "def turn(history, q):\n    history.append({'role': 'user', 'content': [{'type': 'text', 'text': q}]})\n    history[-1]['content'][-1]['cache_control'] = {'type': 'ephemeral'}\n    return client.messages.create(model='m', max_tokens=9, messages=history)\n", line=5),
    ]


def _mentions_cache_control(module: cst.Module) -> bool:
    for n in descendants(module, (cst.SimpleString, cst.Arg, cst.Name)):
        if isinstance(n, cst.SimpleString) and M.KEY in n.value:
            return True
        if isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value == M.KEY:
            return True
        if isinstance(n, cst.Name) and "cache_control" in n.value.lower():
            return True
    return False


class LargePrefixUncached(LintRule):
    """
    ## What it does
    Finds an Anthropic request, inside a function (so it is sent again and
    again), with no ``cache_control`` anywhere (no marker, no top-level
    automatic caching, and none in the module) whose literal tools + system
    text alone reaches the model's minimum cacheable length. "Large" is
    that minimum, read per model from the providers data
    (``promptcache/data/providers.toml`` through
    ``promptcache.providers.model_profile``) for a literal ``model=``, else
    the smallest minimum of any Claude model, with text measured at about 4
    characters a token.

    ## Why is this bad?
    Anthropic caches only at breakpoints. Without one, a prefix that never
    changes is billed at the full input price on every request, where a
    cache read costs a tenth of it.

    ## Example
    ```python
    client.messages.create(model="claude-sonnet-4-5", system=CLAIMS_POLICY, messages=[...])
    ```

    ## Use instead
    ```python
    client.messages.create(model="claude-sonnet-4-5",
        system=[{"type": "text", "text": CLAIMS_POLICY, "cache_control": {"type": "ephemeral"}}],
        messages=[...])
    ```
    or turn on automatic caching with ``cache_control={"type": "ephemeral"}``.

    ## When it does not fire
    Text the code does not show (a file read at start-up, a template), which
    cannot be measured; a module that mentions ``cache_control`` anywhere
    (a helper may add the markers); ``**kwargs`` or ``extra_body`` on the
    call; a call at module level (a script that runs once).
    """

    code = "PC603"
    name = "large-prefix-uncached"
    severity = Severity.INFO
    message = ("about {tokens:,} tokens of static tools + system text are sent with no cache_control: above the "
               "{minimum:,}-token minimum ({model}), this prefix could be read from cache at a tenth of the price; "
               "mark its last block with cache_control")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        if not flow.is_llm_file:
            return
        sinks = [s for s in flow.sinks.all() if _anthropic(s) and flow.holder_of(s.scope) is not None]
        if not sinks or _mentions_cache_control(flow.module):
            return
        for sink in sinks:
            fixed, unbounded, lay = M.count(flow, sink)
            if fixed or unbounded or lay.opaque:
                continue
            chars = sum(len(b.text) for b in lay.blocks if b.part in ("tools", "system") and b.text is not None)
            tokens = chars // M.CHARS_PER_TOKEN
            least, model = minimum(flow, sink)
            if tokens >= least:
                self.report(sink.call, self.message.format(tokens=tokens, minimum=least, model=model))

    VALID = [
        _CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9,\n        system=[{{'type': 'text', 'text': POLICY, {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        # Automatic caching.
        _CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9, system=POLICY,\n        cache_control={{'type': 'ephemeral'}}, messages=[{{'role': 'user', 'content': q}}])\n",
        # Below the minimum of the Claude model with the largest one.
        _CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    return client.messages.create(model='{_BIG}', max_tokens=9, system=POLICY, messages=[{{'role': 'user', 'content': q}}])\n",
        # Read from a file: not measured.
        _CLAUDE + "POLICY = open('policy.md').read()\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, system=POLICY, messages=[{'role': 'user', 'content': q}])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9, system=POLICY, messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q, model):\n    return client.messages.create(model=model, max_tokens=9, system=[{{'type': 'text', 'text': POLICY}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"A = '{_LONG[:len(_LONG) // 2]}'\nB = '{_LONG[len(_LONG) // 2:]}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9, system=[{{'type': 'text', 'text': A}}, {{'type': 'text', 'text': B}}], messages=[{{'role': 'user', 'content': q}}])\n", line=6),
    ]


class BreakpointBelowMinimum(LintRule):
    """
    ## What it does
    Finds an Anthropic request whose last ``cache_control`` marker closes a
    prefix that is far below the model's minimum cacheable length: less than
    half of it, with every block up to the marker written as literal text in
    the call itself, measured at about 4 characters a token. The minimum is
    read per model from the providers data (``promptcache/data/providers.toml``
    through ``promptcache.providers.model_profile``) for a literal
    ``model=``, else the smallest minimum of any Claude model.

    ## Why is this bad?
    Below the minimum Anthropic caches nothing and returns no error:
    ``cache_creation_input_tokens`` stays 0 and the marker does nothing.

    ## Example
    ```python
    client.messages.create(model="claude-sonnet-4-5",
        system=[{"type": "text", "text": "You are a helpful assistant.", "cache_control": {"type": "ephemeral"}}],
        messages=[...])
    ```

    ## Use instead
    Put the marker after enough stable content (tools, long instructions,
    documents), or drop it: a prefix this short costs little uncached.

    ## When it does not fire
    Any block up to the marker whose text the call does not spell out (a
    name, a file, a template, a spliced history, tools from elsewhere): the
    linter cannot measure all that such a prefix holds at run time, so it
    does not judge it (precision first); a prefix at least half the
    minimum (the estimate is rough); automatic caching.
    """

    code = "PC604"
    name = "breakpoint-below-minimum"
    severity = Severity.WARNING
    message = ("the prefix up to this cache_control marker is about {tokens:,} tokens, far below the {minimum:,}-token "
               "minimum ({model}): Anthropic caches nothing below it and returns no error; mark a later block or "
               "drop the marker")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        if not flow.is_llm_file:
            return
        for sink in flow.sinks.all():
            if not _anthropic(sink):
                continue
            fixed, unbounded, lay = M.count(flow, sink)
            marked = lay.marked
            if lay.top_level or lay.opaque or unbounded or not marked or fixed != len(marked):
                continue
            last = marked[-1]
            upto = lay.blocks[: lay.blocks.index(last) + 1]
            if any(b.text is None or not b.inline for b in upto):
                continue
            tokens = sum(len(b.text) for b in upto) // M.CHARS_PER_TOKEN
            least, model = minimum(flow, sink)
            if tokens * 2 < least:
                self.report(last.node, self.message.format(tokens=tokens, minimum=least, model=model))

    VALID = [
        # The text is a constant: not measured.
        _CLAUDE + f"PROMPT = 'You help.'\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': PROMPT, {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        _CLAUDE + f"def ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9,\n        system=[{{'type': 'text', 'text': '{_LONG}', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        # Tools from elsewhere come first: their size is not known.
        _CLAUDE + f"from .tools import TOOLS\ndef ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9, tools=TOOLS,\n        system=[{{'type': 'text', 'text': 'You help.', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"def ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': 'You are a helpful assistant.', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"def ask(q, model):\n    return client.messages.create(model=model, max_tokens=9,\n        system=[{{'type': 'text', 'text': 'Answer in French.', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"def ask(q):\n    return client.messages.create(model='{_BIG}', max_tokens=9,\n        system=[{{'type': 'text', 'text': '{_LONG}', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
    ]
