"""PC303, PC304: prompt content in an order the program does not fix: a shuffle, or JSON dumped without sorted keys.

JSON key order is content, and a shuffled list of examples is new bytes on every call; either gives the same
logical prompt different bytes in different processes or calls. The order of tool lists (PC301, PC302, PC305)
is in :mod:`lint_rules.ordering`.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.finding import Applicability, Severity
from promptcache.lint.rule import FlowRule, Invalid, NodeFix

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


class ShuffledPrefix(FlowRule):
    """
    ## What it does
    Finds ``random.shuffle``, ``random.sample``, ``random.choices`` or a
    permutation applied to tools or to few-shot examples that go into the
    prefix: the system prompt, or any message before the new one
    (``messages=[*shots, *history, new_message]``).

    ## Why is this bad?
    Shuffling to fight position bias makes the prefix different on almost
    every request, so the tools block (rendered first) or the examples in the
    system prompt are never read from cache.

    ## Example
    ```python
    tools = list(SEARCH_TOOLS)
    random.shuffle(tools)
    ```

    ## Use instead
    Keep one fixed order; if position bias matters, describe the tools so
    the model picks on content, or rotate the order per deployment, not per
    request.

    ## When it does not fire
    Randomness used for retries or sampling outside the prompt; text drawn
    with ``random.choices`` or ``random.choice`` into the system prompt (new
    content, not a new order: PC101 reports it; few-shot messages or tools
    drawn with ``random.choices`` are reported here); a generator
    seeded with a constant (``random.Random(1234).sample(...)``), which gives
    the same order in every process; a shuffle sorted afterwards. The
    unseeded module functions (``random.sample``) are reported wherever they
    run, at import too: each process start draws a new order.
    """

    code = "PC303"
    name = "shuffled-prefix"
    severity = Severity.ERROR
    message = (
        "{detail} reorders {slot} content: the prefix differs on nearly every request, so it is never read "
        "from cache; keep one fixed order"
    )

    def issue_message(self, issue) -> str:
        """A draw (``random.choices``) picks new items rather than reordering given ones: said so."""
        message = super().issue_message(issue)
        return message.replace(" reorders ", " draws ", 1) if issue.detail.startswith("random.choices") else message

    def findings(self, flow) -> list:
        """A shuffle on a value in the system prompt (unless it is also volatile: PC101), in ``tools=`` or in
        a message before the last; reported where each shuffle happens."""
        if not flow.has(S.SHUFFLED) or (flow.area == "system" and self.owned_by(flow, (S.VOLATILE, "PC101"))):
            return []
        return [self.issue(flow, node=s.origin or flow.node, detail=s.detail) for s in flow.of(S.SHUFFLED)]

    VALID = [
        _OPENAI + "import random\nfrom .t import TOOLS\ndef run(q):\n    return client.chat.completions.create(model='m', messages=[], tools=TOOLS, temperature=random.random())\n",
        _OPENAI + "import random\nfrom .t import TOOLS\ndef run(q):\n    tools = list(TOOLS)\n    random.shuffle(tools)\n    return client.chat.completions.create(model='m', messages=[], tools=sorted(tools, key=lambda t: t['name']))\n",
        _CLAUDE + "import random, time\ndef run(q):\n    time.sleep(random.uniform(0, 1))\n    return client.messages.create(model='m', system='Help.', messages=[])\n",
        # Shuffled options in the new user message: after the cached prefix.
        _CLAUDE + "import random\ndef quiz(history, q, options):\n    random.shuffle(options)\n    return client.messages.create(model='m', messages=[*history, {'role': 'user', 'content': f'{q} Options: {options}'}])\n",
        # A seeded generator gives the same sample in every process.
        _CLAUDE + "import random\nrng = random.Random(1234)\nEXAMPLES = ['a', 'b', 'c']\ndef run(q):\n    shots = rng.sample(EXAMPLES, 2)\n    return client.messages.create(model='m', system='Examples:\\n' + '\\n'.join(shots), messages=[])\n",
    ]
    INVALID = [
        # Few-shot messages drawn with random.choices ahead of the history (review of stop 30).
        Invalid(_CLAUDE + "import random\nEXAMPLES = [{'role': 'user', 'content': 'a'}, {'role': 'assistant', 'content': 'b'}]\ndef run(history, q):\n    shots = random.choices(EXAMPLES, k=2)\n    return client.messages.create(model='m', max_tokens=9, system='Help.', messages=[*shots, *history, q])\n", line=6),
        Invalid(_OPENAI + "import random\nfrom .t import TOOLS\ndef run(q):\n    tools = list(TOOLS)\n    random.shuffle(tools)\n    return client.chat.completions.create(model='m', messages=[], tools=tools)\n", line=7),
        Invalid(_CLAUDE + "import random\nEXAMPLES = ['a', 'b', 'c']\ndef run(q):\n    shots = random.sample(EXAMPLES, 2)\n    return client.messages.create(model='m', system='Examples:\\n' + '\\n'.join(shots), messages=[])\n", line=6),
        Invalid(_CLAUDE + "import random\nfrom .t import TOOLS\ndef run(q):\n    return client.messages.create(model='m', tools=random.sample(TOOLS, len(TOOLS)), messages=[])\n", line=6),
        # One element picked by a loop over a sample (`first = t; break`) or returned from a loop over a shuffled
        # list: an element read in its loop carries no order, but one that leaves the loop was picked by it.
        Invalid(_CLAUDE + "import random\ndef run(q, examples):\n    picked = random.sample(examples, 3)\n    first = None\n    for t in picked:\n        first = t\n        break\n    return client.messages.create(model='m', max_tokens=9, system=f'Example: {first}', messages=q)\n", line=5),
        Invalid(_CLAUDE + "import random\ndef pick(examples):\n    random.shuffle(examples)\n    for ex in examples:\n        return ex\ndef run(q, examples):\n    return client.messages.create(model='m', max_tokens=9, system=f'Example: {pick(examples)}', messages=q)\n", line=5),
        # the first sampled element that passes a test that is not a key match is still a pick by the sample's order
        Invalid(_CLAUDE + "import random\ndef run(q, examples):\n    first = None\n    for t in random.sample(examples, 3):\n        if t:\n            first = t\n            break\n    return client.messages.create(model='m', max_tokens=9, system=f'Example: {first}', messages=q)\n", line=6),
        # Sampled few-shot messages ahead of the history are part of the cached prefix.
        Invalid(_CLAUDE + "import random\nSHOTS = [{'role': 'user', 'content': '2+2'}, {'role': 'assistant', 'content': '4'}]\ndef run(history, q):\n    shots = random.sample(SHOTS, 2)\n    return client.messages.create(model='m', messages=[*shots, *history, {'role': 'user', 'content': q}])\n", line=6),
    ]


class UnsortedJsonInPrompt(FlowRule):
    """
    ## What it does
    Finds ``json.dumps`` of a mapping built at run time (a comprehension,
    ``dict(...)``, a dict filled in code) without ``sort_keys=True``, whose
    output reaches the system prompt or a tool schema.

    ## Why is this bad?
    JSON key order is content. A mapping built from database rows or an API
    response follows the order the rows arrive in, so the same data can give
    different prompt bytes, and a different prefix, from one call to the next.

    ## Example
    ```python
    system=f"Glossary:\\n{json.dumps(glossary, indent=2)}"
    ```

    ## Use instead
    ```python
    system=f"Glossary:\\n{json.dumps(glossary, indent=2, sort_keys=True)}"
    ```

    ## Fix safety
    The fix adds ``sort_keys=True``. It is unsafe: the prompt bytes change once,
    so the first request after deploying it writes a new cache entry.

    ## When it does not fire
    ``sort_keys=True`` is passed; the dict is a literal made only of literals
    (its key order is the source order); a comprehension re-keys another
    mapping the caller passed in, in that mapping's order (``{k: f(v) for k, v
    in props.items()}``), or iterates in sorted order; the JSON goes to the
    user message.
    """

    code = "PC304"
    name = "unsorted-json-in-prompt"
    severity = Severity.WARNING
    fixable = "unsafe"
    message = (
        "json.dumps() of a mapping built at run time reaches {slot} without sort_keys=True: key order follows "
        "the data source, so identical data can give different prompt bytes; pass sort_keys=True"
    )

    def findings(self, flow) -> list:
        """An unsorted ``json.dumps`` on a value in the system prompt (unless PC101 or PC303 reports it) or in
        a tool (unless PC104 does); reported at the ``json.dumps`` call."""
        if not flow.has(S.UNSORTED_JSON):
            return []
        if flow.area == "system" and self.owned_by(flow, (S.VOLATILE, "PC101"), (S.SHUFFLED, "PC303")):
            return []
        if flow.area in ("tools", "tool_content") and self.owned_by(flow, (S.VOLATILE, "PC104"), (S.IDENTITY, "PC104")):
            return []
        if flow.area not in ("system", "tools", "tool_content"):
            return []
        return [self.issue(flow, node=s.origin or flow.node, detail=s.detail) for s in flow.of(S.UNSORTED_JSON)]

    def issue_fix(self, issue) -> NodeFix:
        call = issue.node
        sort_keys = cst.Arg(keyword=cst.Name("sort_keys"), value=cst.Name("True"), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
        args = [*call.args[:-1], call.args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), sort_keys] if call.args else [sort_keys]
        return NodeFix("Add sort_keys=True", Applicability.UNSAFE, ((call, self.flow.code(call.with_changes(args=args))),))

    def issues(self) -> list:
        return [issue for issue in super().issues() if isinstance(issue.node, cst.Call)]

    VALID = [
        # Issue 11 (OpenHands): a list extended in code has no keys to order.
        _CLAUDE + "import json\ndef run(threads, q):\n    files = []\n    for t in threads:\n        files.extend(t.files)\n    return client.messages.create(model='m', system=f'Files: {json.dumps(files, indent=4)}', messages=[q])\n",
        # Issue 11 (pydantic-ai): a generated schema copied and given keys written in the source keeps one order.
        _CLAUDE + "import json\ndef run(object_def, q):\n    schema = object_def.json_schema.copy()\n    schema['title'] = object_def.name\n    return client.messages.create(model='m', system=f'Reply as {json.dumps(schema)}', messages=[q])\n",
        _CLAUDE + "import json\ndef run(rows):\n    table = {k: v for k, v in rows}\n    return client.messages.create(model='m', system=json.dumps(table, sort_keys=True), messages=[])\n",
        _CLAUDE + "import json\nSCHEMA = json.dumps({'a': 'string', 'b': 'int'}, indent=2)\ndef run(q):\n    return client.messages.create(model='m', system='Reply as ' + SCHEMA, messages=[])\n",
        _CLAUDE + "import json\ndef run(rows):\n    table = {k: v for k, v in rows}\n    return client.messages.create(model='m', system='Help.', messages=[{'role': 'user', 'content': json.dumps(table)}])\n",
        # ... and one built in sorted order.
        _CLAUDE + "import json\ndef run(m, q):\n    view = {k: v for k, v in sorted(m.items())}\n    return client.messages.create(model='m', system='Data: ' + json.dumps(view), messages=[{'role': 'user', 'content': q}])\n",
        # Issue 11 (bilingual_book_maker, blind set 26): an example re-keyed from a schema's properties, in their order.
        _CLAUDE + "import json\ndef describe(schema):\n    props = schema.get('properties') or {}\n    example = {name: spec.get('type') for name, spec in list(props.items())[:2]}\n    return 'Shaped like: ' + json.dumps(example)\ndef run(schema):\n    return client.messages.create(model='m', system=describe(schema), messages=[])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "import json\ndef run(rows):\n    table = {k: v for k, v in rows}\n    return client.messages.create(model='m', system=f'Glossary: {json.dumps(table)}', messages=[])\n", line=6),
        # ... or one built here from a set in any other way (second review).
        Invalid(_CLAUDE + "import json\ndef run(words):\n    counts = dict.fromkeys(set(words), 0)\n    example = {k: v for k, v in counts.items()}\n    return client.messages.create(model='m', system=json.dumps(example), messages=[])\n", line=7),
        # ... but re-keying a mapping built from a set keeps the set's order.
        Invalid(_CLAUDE + "import json\ndef run(words):\n    counts = {w: 0 for w in set(words)}\n    example = {k: v for k, v in counts.items()}\n    return client.messages.create(model='m', system=json.dumps(example), messages=[])\n", line=7),
        Invalid(_OPENAI + "import json\nfrom .crm import fields\nTYPES = {f['name']: f['type'] for f in fields()}\nTOOL = {'type': 'function', 'function': {'name': 'u', 'description': 'Types: ' + json.dumps(TYPES)}}\ndef run(q):\n    return client.chat.completions.create(model='m', messages=[], tools=[TOOL])\n", line=6),
        Invalid(_CLAUDE + "import json\ndef run(rows):\n    data = {}\n    for r in rows:\n        data[r.key] = r.value\n    return client.messages.create(model='m', system=json.dumps(data), messages=[])\n", line=8),
    ]


__all__ = ["ShuffledPrefix", "UnsortedJsonInPrompt"]
