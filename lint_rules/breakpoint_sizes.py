"""PC603, PC604: Anthropic requests whose cache breakpoints are missing or below the minimum cacheable length.

Anthropic caches a prefix only when it reaches the model's minimum cacheable length (provider-cache-rules.md,
"Anthropic"); the minimums come from the providers data (:func:`promptcache.providers.model_profile`), per
model. Where the markers sit (PC601, PC602) is in :mod:`lint_rules.breakpoints`.
"""

from __future__ import annotations

import warnings

import libcst as cst

from promptcache.lint import markers as M
from promptcache.lint.finding import Severity
from promptcache.lint.rule import Invalid, LintRule
from promptcache.lint.one_shot import smallest_minimum
from promptcache.lint.walk import descendants
from promptcache.providers import UnknownModelWarning, known_models, model_profile

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_MARK = "'cache_control': {'type': 'ephemeral'}"



def _smallest_minimum() -> int:
    """The smallest minimum cacheable length of any Anthropic model in the providers data (tokens)."""
    return smallest_minimum(("anthropic",))


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
    v = sink.value("model")
    model = v.expr if v is not None else None
    if isinstance(model, cst.SimpleString):
        name = model.value.strip("'\"")
        if "claude" in name.lower():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnknownModelWarning)
                return model_profile("anthropic", name).min_cacheable_tokens, name
    return _smallest_minimum(), "the smallest of any Claude model"


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

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

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
    (a helper may add the markers); ``extra_body`` on the call; a call at
    module level (a script that runs once).
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``,
    its tools / system / messages set differently on different paths).
    """

    code = "PC603"
    name = "large-prefix-uncached"
    severity = Severity.INFO
    message = ("about {tokens:,} tokens of static tools + system text are sent with no cache_control: above the "
               "{minimum:,}-token minimum ({model}), this prefix could be read from cache at a tenth of the price; "
               "mark its last block with cache_control")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        sinks = [s for s in M.anthropic_requests(flow) if flow.holder_of(s.scope) is not None]
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
        # The request dict goes through a function of another module (it may add the markers): not judged.
        _CLAUDE + f"from .caching import prepare\nPOLICY = '{_LONG}'\ndef ask(q):\n    params = {{'model': '{_SMALL}', 'max_tokens': 9, 'system': POLICY, 'messages': [{{'role': 'user', 'content': q}}]}}\n    prepare(params)\n    return client.messages.create(**params)\n",
        # The system prompt is set on some paths only, to one of two texts: not judged.
        _CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q, short):\n    params = {{'model': '{_SMALL}', 'max_tokens': 9, 'system': POLICY, 'messages': [{{'role': 'user', 'content': q}}]}}\n    if short:\n        params['system'] = 'Be brief.'\n    return client.messages.create(**params)\n",
        # Issue 11: the system block marked through the SDK's TypedDict.
        _CLAUDE + f"from anthropic.types.beta import BetaTextBlockParam\nPOLICY = '{_LONG}'\ndef ask(q):\n    return client.beta.messages.create(model='{_SMALL}', max_tokens=9, system=[BetaTextBlockParam(type='text', text=POLICY, cache_control={{'type': 'ephemeral'}})], messages=[{{'role': 'user', 'content': q}}])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9, system=POLICY, messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q, model):\n    return client.messages.create(model=model, max_tokens=9, system=[{{'type': 'text', 'text': POLICY}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"A = '{_LONG[:len(_LONG) // 2]}'\nB = '{_LONG[len(_LONG) // 2:]}'\ndef ask(q):\n    return client.messages.create(model='{_SMALL}', max_tokens=9, system=[{{'type': 'text', 'text': A}}, {{'type': 'text', 'text': B}}], messages=[{{'role': 'user', 'content': q}}])\n", line=6),
        # The request built as a dict literal and sent as **params.
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    params = {{'model': '{_SMALL}', 'max_tokens': 9, 'system': POLICY, 'messages': [{{'role': 'user', 'content': q}}]}}\n    return client.messages.create(**params)\n", line=6),
        # dict(...) completed by .update() and an item assignment.
        Invalid(_CLAUDE + f"POLICY = '{_LONG}'\ndef ask(q):\n    kwargs = dict(model='{_SMALL}', max_tokens=9)\n    kwargs.update(system=[{{'type': 'text', 'text': POLICY}}])\n    kwargs['messages'] = [{{'role': 'user', 'content': q}}]\n    return client.messages.create(**kwargs)\n", line=8),
        # Issue 11: the system block written with the SDK's TypedDict, unmarked.
        Invalid(_CLAUDE + f"from anthropic.types.beta import BetaTextBlockParam\nPOLICY = '{_LONG}'\ndef ask(q):\n    return client.beta.messages.create(model='{_SMALL}', max_tokens=9, system=[BetaTextBlockParam(type='text', text=POLICY)], messages=[{{'role': 'user', 'content': q}}])\n", line=6),
    ]


class BreakpointBelowMinimum(LintRule):
    """
    ## What it does
    Finds an Anthropic request whose last ``cache_control`` marker closes a
    prefix that is far below the model's minimum cacheable length: less than
    half of it, with every block up to the marker written as literal text in
    the call itself (or in the request dict), measured at about 4 characters
    a token. The minimum is
    read per model from the providers data (``promptcache/data/providers.toml``
    through ``promptcache.providers.model_profile``) for a literal
    ``model=``, else the smallest minimum of any Claude model.

    The request may also be built as a dict and sent as ``**params``: a dict
    literal, ``dict(...)``, ``params["x"] = ...``, ``params.update(...)``, or a
    same-module function that returns the dict.

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
    Any block up to the marker whose text the request does not spell out (a
    name, a file, a template, a spliced history, tools from elsewhere): the
    linter cannot measure all that such a prefix holds at run time, so it
    does not judge it (precision first); a prefix at least half the
    minimum (the estimate is rough); automatic caching.
    A request dict the code does not fully show (passed to a function of
    another module before the call, merged with the caller's ``**kwargs``,
    its tools / system / messages set differently on different paths).
    """

    code = "PC604"
    name = "breakpoint-below-minimum"
    severity = Severity.WARNING
    message = ("the prefix up to this cache_control marker is about {tokens:,} tokens, far below the {minimum:,}-token "
               "minimum ({model}): Anthropic caches nothing below it and returns no error; mark a later block or "
               "drop the marker")

    def leave_Module(self, node: cst.Module) -> None:
        flow = self.flow
        for sink in M.anthropic_requests(flow):
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
        # A helper returns the request dict; the system text is its parameter (not measured).
        _CLAUDE + f"from .prompts import SYSTEM\nclass Bot:\n    def _params(self, q, system):\n        return {{'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'system': [{{'type': 'text', 'text': system, {_MARK}}}], 'messages': [{{'role': 'user', 'content': q}}]}}\n    def ask(self, q):\n        return client.messages.create(**self._params(q, SYSTEM))\n",
        # Tools added to the request dict on some calls come first: their size is not known.
        _CLAUDE + f"def ask(q, tools=None):\n    params = {{'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'system': [{{'type': 'text', 'text': 'You help.', {_MARK}}}], 'messages': [{{'role': 'user', 'content': q}}]}}\n    if tools:\n        params['tools'] = tools\n    return client.messages.create(**params)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"def ask(q):\n    return client.messages.create(model='claude-sonnet-4-5', max_tokens=9,\n        system=[{{'type': 'text', 'text': 'You are a helpful assistant.', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"def ask(q, model):\n    return client.messages.create(model=model, max_tokens=9,\n        system=[{{'type': 'text', 'text': 'Answer in French.', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        Invalid(_CLAUDE + f"def ask(q):\n    return client.messages.create(model='{_BIG}', max_tokens=9,\n        system=[{{'type': 'text', 'text': '{_LONG}', {_MARK}}}], messages=[{{'role': 'user', 'content': q}}])\n", line=5),
        # A same-module helper returns the request dict.
        Invalid(_CLAUDE + f"class Bot:\n    def _params(self, q):\n        return {{'model': 'claude-sonnet-4-5', 'max_tokens': 9,\n                'system': [{{'type': 'text', 'text': 'You are a helpful assistant.', {_MARK}}}],\n                'messages': [{{'role': 'user', 'content': q}}]}}\n    def ask(self, q):\n        return client.messages.create(**self._params(q))\n", line=6),
        # A request dict literal in the function.
        Invalid(_CLAUDE + f"def ask(q):\n    params = {{'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'messages': [{{'role': 'user', 'content': q}}]}}\n    params['system'] = [{{'type': 'text', 'text': 'Answer in French.', {_MARK}}}]\n    return client.messages.create(**params)\n", line=5),
    ]
