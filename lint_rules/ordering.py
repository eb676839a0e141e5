"""PC301, PC302: tool lists in an order the program does not fix (shuffles and JSON keys, PC303 and PC304, are
in :mod:`lint_rules.content_order`; MCP listings, PC305, in :mod:`lint_rules.mcp_listing`).

Tools render first in every provider's request, and JSON key order is content.
A set, a directory listing, a shuffle or an unsorted ``json.dumps`` can give
the same logical prompt different bytes in different processes or calls.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.elements import sort_fix
from promptcache.lint.finding import Applicability, Severity
from promptcache.lint.rule import FlowRule, Invalid, NodeFix
from promptcache.lint.flow_facts import tools_label

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_HASH_REASON = "set order varies between processes (hash randomisation)"
_COMPLETION_REASON = "completion order (which task finishes first) varies from call to call"


class ToolsFromUnorderedCollection(FlowRule):
    """
    ## What it does
    Finds ``tools=`` built from a set-family source (``set(...)``, a set
    literal or comprehension, ``frozenset``, ``|``/``&``/``-`` of sets,
    a parameter annotated ``set[...]``, ``asyncio.as_completed``) without
    ``sorted()``, whether a comprehension or a ``for`` loop appending to the
    list iterates it. A set that only filters (``x in ids``, SQLAlchemy
    ``Column.in_(ids)`` / ``not_in``, pandas ``isin``, ``issubset``) passes
    no order on: the rows come back in the query's order.

    ## Why is this bad?
    String hashing is randomised per process (``PYTHONHASHSEED``), so a set of
    tool names iterates in a different order in each worker; completion-order
    iterators (``asyncio.as_completed``) give a different order on every call. Tools render
    first, so two workers send different prefixes for the same request and
    never share a cache entry.

    ## Example
    ```python
    enabled = CORE_TOOLS | set(config["extra_tools"])
    tools = [TOOL_SPECS[name] for name in enabled]
    ```

    ## Use instead
    ```python
    enabled = sorted(CORE_TOOLS | set(config["extra_tools"]))
    tools = [TOOL_SPECS[name] for name in enabled]
    ```

    ## Fix safety
    The fix wraps the collection in ``sorted(...)`` with the key its elements
    need, judged from what the collection is built from and how it is used:
    no key for tool names (string literals, a constant bound to them, or
    names used as keys: ``SPECS[n]``, ``{"name": n}``), ``key=lambda t:
    t["name"]`` for tool definitions (``t["function"]["name"]`` in the OpenAI
    Chat shape), ``key=lambda t: t.name`` for objects.

    A collection defined elsewhere (``ENABLED = {"a", "b"}``) is one finding
    however many ``tools=`` read it, and the fix sorts it at every read
    (``sorted(ENABLED)`` in each call that builds tools from it), so applying
    the fix leaves no unsorted read. It is not sorted once where it is
    defined: that would turn the constant into a list and break its other
    uses (``ENABLED | extra``, ``ENABLED.add(name)``). So is a collection
    that two ``tools=`` get through one helper when the fix is the same for
    both (``self.usable`` iterated in ``_args()``, which a sync and an async
    method both send). When a set re-orders
    the elements on their way to ``tools=`` (a set comprehension
    ``{k.lower() for k in ENABLED}``, a set operation ``ENABLED | EXTRA``,
    ``{*ENABLED}``), sorting ``ENABLED`` would order nothing (and
    ``sorted(ENABLED) | EXTRA`` would raise), so the fix wraps that set
    instead: ``sorted(ENABLED | EXTRA)``.

    When what some read holds cannot be known (``[make_tool(n) for n in
    set(extra)]``, futures from ``asyncio.as_completed``, a set that would
    have to hold tool dicts) the fix only describes what to do, for every
    read: a wrong key would raise at run time, and sorting only the other
    reads would leave the order unfixed. The same holds when reports on one
    line, merged into one finding, have edits that overlap. It is unsafe: it changes the
    order of the tools, so the first request after deploying it writes a new
    cache entry.

    ## When it does not fire
    The set is passed through ``sorted()`` or the list is ``.sort()``-ed
    before it reaches ``tools=``; a set that only picks fields
    (``model_dump(exclude={"id"})``, ``include=``) or is tested for
    membership (``.in_(ids)``), or is a field of a tool object.
    """

    code = "PC301"
    name = "tools-from-unordered-collection"
    severity = Severity.ERROR
    fixable = "unsafe"
    message = (
        "{slot} comes from {detail} without sorted(): {reason}, "
        "and tools render first, so workers send different prefixes; sort the tools by name"
    )

    def findings(self, flow) -> list:
        """A set or completion-order source on ``tools=``, unless a shuffle, an MCP listing or a directory
        listing on the same value is reported instead (PC303, PC305, PC302)."""
        if flow.area != "tools" or not flow.has(S.UNORDERED) or self.owned_by(flow, (S.SHUFFLED, "PC303"), (S.MCP, "PC305"), (S.FS_ORDER, "PC302")):
            return []
        return [self.issue(flow, detail=flow.of(S.UNORDERED)[0].detail, sources=flow.of(S.UNORDERED))]

    def issues(self) -> list:
        """One report per collection and fix: two ``tools=`` fed by one set through one helper (langroid's sync and
        async ``llm_response_messages`` both send ``_function_args()``, blind set 15) are fixed by one edit in the
        helper, so they are one finding, at the first, covering both slots. Reads with edits of their own stay
        separate findings."""
        out: list = []
        kept: dict[tuple, object] = {}
        for issue in super().issues():
            origins = [s.origin for s in issue.sources]
            edits = self._edits(issue)
            key = (frozenset(map(id, origins)), edits)
            first = kept.get(key) if origins and None not in origins else None
            if first is not None:
                before = list(first.more_slots)
                first.more_slots += [slot for slot in (issue.slot, *issue.more_slots)
                                     if slot is not first.slot and slot not in first.more_slots]
                if self._edits(first) == edits:
                    continue  # the first one's fix, covering both slots, is the same edit
                first.more_slots = before
            kept.setdefault(key, issue)
            out.append(issue)
        return out

    def _edits(self, issue) -> frozenset:
        fix = self.issue_fix(issue)
        return frozenset((id(node), text) for node, text in fix.replacements) if fix is not None else frozenset()

    def issue_message(self, issue) -> str:
        reason = _COMPLETION_REASON if S.completion_order(issue.detail) else _HASH_REASON
        return self.message.format(detail=issue.detail, slot=tools_label(issue.slot), reason=reason)

    def issue_fix(self, issue) -> NodeFix:
        """``sorted(...)`` with the key the elements need (:mod:`promptcache.lint.elements`), at every read of
        the collection by every slot it reaches; a description without an edit when what some read holds is
        not known (wrapping only the others would leave the order unfixed)."""
        found = sort_fix(self.flow, issue.node, [issue.slot, *issue.more_slots])
        if found is None:
            return NodeFix(
                "Sort the tools by name before they reach tools= (what the collection holds is not known here, "
                "so no sorted() key can be chosen safely)",
                Applicability.UNSAFE,
            )
        # `tools or OMIT` sorts as `sorted(tools, ...) or OMIT`: the default after `or` need not be iterable.
        targets = [(f, _before_or(f.node)) for f in found]
        wrapped = [(f, node, self.flow.code(node), f", key={f.key}" if f.key else "") for f, node in targets]
        replacements = tuple((node, f"sorted({code}{extra})") for _, node, code, extra in wrapped)
        wraps = " and ".join(dict.fromkeys(f"`{code}` in sorted(...{extra})" for _, _, code, extra in wrapped))
        through = next((f for f in found if f.through_a_set), None)
        if through is not None:
            read = self.flow.code(through.read)
            where = (f" where the tools are built: a set re-orders the elements of `{read}` by hash on their way to "
                     f"tools=, so sorting `{read}` itself would not fix the order")
        elif any(f.node is not issue.node for f in found):
            where = " where the tools are built (the collection keeps its type)"
        else:
            where = ""
        return NodeFix(f"Wrap {wraps}{where}", Applicability.UNSAFE, replacements)

    VALID = [
        # Issue 11 (letta, blind set 28): a class that describes or stores an agent (an export file's schema) is
        # not an agent; nothing here sends its tools.
        _OPENAI + "from .schemas import AgentFileSchema\ndef export(agents):\n    tool_set = {t for a in agents for t in a.tools}\n    return AgentFileSchema(agents=agents, tools=list(tool_set))\n",
        # a mapping built from a set and read by key in the caller's order (review, stop 31)
        _CLAUDE + "def run(q, names, enabled: set[str]):\n    by_name = {n: {'name': n} for n in enabled}\n    return client.messages.create(model='m', max_tokens=9, tools=[by_name[n] for n in names], messages=q)\n",
        # a loop over a set that only filters a fixed list, or rebinds it sorted, passes no order on (review, stop 31)
        _CLAUDE + "ALL = [{'name': 'a'}, {'name': 'b'}]\ndef run(q, disabled: set[str]):\n    tools = list(ALL)\n    for n in disabled:\n        tools = [t for t in tools if t['name'] != n]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n",
        _CLAUDE + "def run(q, names: set[str]):\n    tools = []\n    for n in names:\n        tools = sorted(tools + [n])\n    return client.messages.create(model='m', max_tokens=9, tools=[{'name': t} for t in tools], messages=q)\n",
        # Issue 11: tools of a request dict sent as `**params`, from a sorted set; a client returned by a call.
        _CLAUDE + "TOOLS = {'search': {'name': 'search'}, 'fetch': {'name': 'fetch'}}\ndef ask(history, enabled):\n    params = {'model': 'm', 'max_tokens': 512, 'messages': history}\n    params['tools'] = [TOOLS[n] for n in sorted(set(enabled))]\n    return client.messages.create(**params)\n",
        _OPENAI + "TOOLS = {'search': {'type': 'function'}, 'fetch': {'type': 'function'}}\nclass Agent:\n    def _get_client(self):\n        return client\n    def step(self, messages, enabled):\n        return self._get_client().chat.completions.create(model='m', messages=messages, tools=[TOOLS[n] for n in sorted(enabled)])\n",
        # Issue 11 (pydantic-ai): a function named after the MCP call maps its result into message parts.
        # A tool-named function whose calls in the module put its result into message parts, not into tools=
        # (pydantic-ai maps an MCP list_tools *output item*; issue 11): a data-flow reason, not its name.
        _OPENAI + "from .parts import CallPart, ReturnPart\ndef _map_mcp_list_tools(item):\n    return (CallPart(name=item.server_label), ReturnPart(content={'tools': {t.name for t in item.tools}}))\ndef map_output(items):\n    parts = []\n    for item in items:\n        call_part, return_part = _map_mcp_list_tools(item)\n        parts += [call_part, return_part]\n    return parts\n",
        # Issue 11, from real code (pydantic-ai): one element of `return tools, betas` is a set, not the tools.
        _CLAUDE + "SEARCH = {'name': 'search'}\ndef prepare_tools():\n    betas = set()\n    tools = [SEARCH]\n    betas.add('files-api')\n    return tools, betas\ndef ask(messages):\n    tools, betas = prepare_tools()\n    return client.beta.messages.create(model='m', messages=messages, tools=tools, betas=sorted(betas))\n",
        _OPENAI + "from .specs import SPECS\nBASE = {'a', 'b'}\ndef run(q):\n    names = sorted(BASE | {'c'})\n    return client.chat.completions.create(model='m', messages=[], tools=[SPECS[n] for n in names])\n",
        _OPENAI + "from .specs import SPECS\ndef run(q):\n    tools = [SPECS[n] for n in {'a', 'b'}]\n    tools.sort(key=lambda t: t['name'])\n    return client.chat.completions.create(model='m', messages=[], tools=tools)\n",
        _CLAUDE + "TOOLS = [{'name': 'a'}, {'name': 'b'}]\ndef run(q):\n    return client.messages.create(model='m', tools=TOOLS, messages=[])\n",
        # PromptBuilder sorts tools by name (its default tool_order) and writes canonical JSON.
        "from promptcache import PromptBuilder\nfrom .specs import SPECS\ndef base(extra):\n    return PromptBuilder().tools([SPECS[n] for n in {'a', 'b'} | set(extra)])\n",
        # Issue 11 review: a loop over the sorted set fills the list in a fixed order.
        _OPENAI + "class Agent:\n    def __init__(self, tools):\n        self.tool_names = set(t['function']['name'] for t in tools)\n        self.by_name = {t['function']['name']: t for t in tools}\n    def step(self, messages):\n        tools = []\n        for name in sorted(self.tool_names):\n            tools.append(self.by_name[name])\n        return client.chat.completions.create(model='m', messages=messages, tools=tools)\n",
        _OPENAI + "def ask(messages, enabled: set[str], tool_specs: dict):\n    return client.chat.completions.create(model='m', messages=messages, tools=[tool_specs[n] for n in sorted(enabled)])\n",
        # onyx review #6: a set that only filters an SQL query (`Column.in_(ids)`) passes no order on; the rows
        # come back in the query's order.
        _OPENAI + "from sqlalchemy import select\nfrom .models import Server, Tool\ndef ask(db, q, user):\n    ids = {s.id for s in db.scalars(select(Server)) if s.owner == user}\n    rows = db.scalars(select(Tool).where(Tool.server_id.in_(ids)).order_by(Tool.id)).all()\n    return client.chat.completions.create(model='m', messages=[q], tools=[t.spec for t in rows])\n",
        # Issue 11 (gptme mcp_adapter.py): a tool object holding a set as a field (capability tags used to filter
        # tools) is not ordered by it; the list of tools keeps the order it was filled in.
        _OPENAI + "from .base import ToolSpec\ndef mcp_tools(servers):\n    specs = []\n    for server in servers:\n        for tool in server.tools:\n            hints: frozenset[str] = frozenset()\n            if tool.annotations:\n                hints = frozenset(tool.annotations.tags)\n            specs.append(ToolSpec(name=tool.name, description=tool.description, hints=hints))\n    return specs\ndef ask(q, servers):\n    return client.chat.completions.create(model='m', messages=[q], tools=[s.to_param() for s in mcp_tools(servers)])\n",
        # Issue 11 (paper-qa): pydantic's `model_dump(exclude={...})` picks fields; the dump keeps the model's order.
        'import litellm\nasync def parse(tool_call):\n    tool_spec = tool_call.model_dump(exclude={"id": True, "function": {"arguments"}})\n    return await litellm.acompletion(model=\'m\', messages=[{\'role\': \'user\', \'content\': \'x\'}], tools=[tool_spec], tool_choice=tool_spec)\n',
        # Issue 11 (letta agent.py): a set given beside a list in a fixed order (`terminal_tools=`) parameterises an
        # unseen call that returns that list's elements, in its order.
        _OPENAI + "from .schema import override_schema\ndef ask(agent, messages):\n    jsons = [t.json_schema for t in agent.tools]\n    terminal = {r.tool_name for r in agent.rules}\n    tools = override_schema(tool_list=jsons, terminal_tools=terminal)\n    return client.chat.completions.create(model='m', messages=messages, tools=tools)\n",
        # Issue 11 (letta agent.py): a set given to an unseen call orders what it returns, not a field of it (the
        # agent state a store call returns, whose `.tools` are sent).
        _OPENAI + "class Agent:\n    def __init__(self, state, manager):\n        self.state, self.manager = state, manager\n    def step(self, messages):\n        new = {m.id for m in messages}\n        self.state = self.manager.append_messages(new, agent_id=self.state.id)\n        tools = [t.json_schema for t in self.state.tools]\n        return client.chat.completions.create(model='m', messages=messages, tools=tools)\n",
    ]
    INVALID = [
        # ... but a list built from the set, first, is in its order.
        Invalid(_OPENAI + "from .schema import override_schema\ndef ask(agent, messages):\n    terminal = {r.tool_name for r in agent.rules}\n    jsons = [{'name': n} for n in terminal]\n    tools = override_schema(tool_list=jsons, terminal_tools=terminal)\n    return client.chat.completions.create(model='m', messages=messages, tools=tools)\n", line=8),
        # ... but a request body named as a schema, with a model and messages, is sent (review of blind set 28).
        Invalid(_OPENAI + "import httpx\nfrom .schemas import ChatCompletionRequestSchema\nTOOLS = {'search': {'name': 'search'}, 'fetch': {'name': 'fetch'}}\ndef ask(q, enabled: set[str]):\n    body = ChatCompletionRequestSchema(model='m', messages=[{'role': 'user', 'content': q}], tools=[TOOLS[n] for n in enabled])\n    return httpx.post('http://llm/v1/chat/completions', json=body.model_dump())\n", line=7),
        Invalid(_OPENAI + "import httpx\nfrom .schemas import ChatCompletionRequestSchema\nTOOLS = {'search': {'name': 'search'}, 'fetch': {'name': 'fetch'}}\ndef ask(q, enabled: set[str], params):\n    body = ChatCompletionRequestSchema(**params, tools=[TOOLS[n] for n in enabled])\n    return httpx.post('http://llm/v1/chat/completions', json=body.model_dump())\n", line=7),
        # ... the boundary: a set given to the call as its data (`names=ENABLED`) still orders what it returns.
        Invalid('import litellm\nENABLED = {"search", "fetch"}\nasync def parse(registry):\n    specs = registry.export(names=ENABLED, exclude={"id"})\n    return await litellm.acompletion(model=\'m\', messages=[{\'role\': \'user\', \'content\': \'x\'}], tools=specs)\n', line=5),
        # Issue 11: tools of a request dict sent as `**params`, from a set; a client returned by a call (OpenHands).
        Invalid(_CLAUDE + "TOOLS = {'search': {'name': 'search'}, 'fetch': {'name': 'fetch'}}\ndef ask(history, enabled):\n    params = {'model': 'm', 'max_tokens': 512, 'messages': history}\n    params['tools'] = [TOOLS[n] for n in set(enabled)]\n    return client.messages.create(**params)\n", line=6),
        Invalid(_OPENAI + "TOOLS = {'search': {'type': 'function'}, 'fetch': {'type': 'function'}}\nclass Agent:\n    def _get_client(self):\n        return client\n    def step(self, messages, enabled):\n        return self._get_client().chat.completions.create(model='m', messages=messages, tools=[TOOLS[n] for n in set(enabled)])\n", line=8),
        Invalid(_OPENAI + "from .specs import SPECS\ndef run(q, extra):\n    names = {'a', 'b'} | set(extra)\n    return client.chat.completions.create(model='m', messages=[], tools=[SPECS[n] for n in names])\n", line=6),
        Invalid(_CLAUDE + "from .skills import SKILLS\ndef run(active):\n    names = {t for s in active for t in SKILLS[s]}\n    return client.messages.create(model='m', messages=[], tools=[{'name': n} for n in names])\n", line=6),
        Invalid(_CLAUDE + "def run(specs):\n    tools = list(frozenset(specs))\n    return client.messages.create(model='m', messages=[], tools=tools)\n", line=5),
        # Set operators on dict views give sets.
        Invalid(_OPENAI + "REGISTRY = {'a': {'type': 'function'}, 'b': {'type': 'function'}}\ndef ask(q, allowed):\n    names = REGISTRY.keys() & allowed\n    return client.chat.completions.create(model='m', messages=[], tools=[REGISTRY[n] for n in names])\n", line=6),
        Invalid("from promptcache import PromptBuilder\nfrom .specs import SPECS\ndef base(extra):\n    return PromptBuilder(tool_order='registered').tools([SPECS[n] for n in set(extra)])\n", line=4),
        Invalid(_OPENAI + "REGISTRY = {'a': {'type': 'function'}, 'b': {'type': 'function'}}\ndef ask(q, disabled):\n    names = REGISTRY.keys() - disabled\n    return client.chat.completions.create(model='m', messages=[], tools=[REGISTRY[n] for n in names])\n", line=6),
        # ... but a sequence built from a set and held as a field is ordered by the set (the schema's `required`).
        Invalid(_OPENAI + "from .base import Tool\ndef ask(q, names, fields):\n    required = list(set(fields))\n    tools = [Tool(name=n, parameters={'type': 'object', 'required': required}) for n in names]\n    return client.chat.completions.create(model='m', messages=[q], tools=tools)\n", line=7),
        # Issue 11 review (snips/c2_tools_set_loop.py): a `for` loop over a set fills the tool list in hash order.
        Invalid(_OPENAI + "class Agent:\n    def __init__(self, tools):\n        self.tool_names = set(t['function']['name'] for t in tools)\n        self.by_name = {t['function']['name']: t for t in tools}\n    def step(self, messages):\n        tools = []\n        for name in self.tool_names:\n            tools.append(self.by_name[name])\n        return client.chat.completions.create(model='m', messages=messages, tools=tools)\n", line=11),
        # Issue 11: a tool-named builder whose result the module sends as tools= (through a name) is a tool builder,
        # whatever its name says (`list_tools`); reported once, where the set is, not again at tools=.
        Invalid(_OPENAI + "from .specs import SPECS\ndef list_tools(enabled):\n    return [SPECS[n] for n in {'search', 'fetch'} | set(enabled)]\ndef ask(messages, enabled):\n    tools = list_tools(enabled)\n    return client.chat.completions.create(model='m', messages=messages, tools=tools)\n", line=5),
        # ... but sent by its values, the mapping's key order is the tools' order
        Invalid(_CLAUDE + "def run(q, enabled: set[str]):\n    by_name = {n: {'name': n} for n in enabled}\n    return client.messages.create(model='m', max_tokens=9, tools=list(by_name.values()), messages=q)\n", line=5),
        # A set iterated by a `for` loop that appends a name bound in its body (`spec = ...`), not the loop variable.
        Invalid(_OPENAI + "def ask(messages, names: set[str]):\n    tools = []\n    for n in names:\n        spec = {'type': 'function', 'function': {'name': n}}\n        tools.append(spec)\n    return client.chat.completions.create(model='m', messages=messages, tools=tools)\n", line=8),
        # A parameter typed as a set, iterated into the tool list.
        Invalid(_OPENAI + "def ask(messages, enabled: set[str], tool_specs: dict):\n    return client.chat.completions.create(model='m', messages=messages, tools=[tool_specs[n] for n in enabled])\n", line=4),
        # ... but the same set iterated into the tools is (it is a membership argument only inside `.in_()`).
        Invalid(_OPENAI + "from sqlalchemy import select\nfrom .models import Server, Tool\ndef ask(db, q, user):\n    ids = {s.id for s in db.scalars(select(Server)) if s.owner == user}\n    specs = {t.server_id: t.spec for t in db.scalars(select(Tool).where(Tool.server_id.in_(ids)))}\n    return client.chat.completions.create(model='m', messages=[q], tools=[specs[i] for i in ids])\n", line=8),
    ]


def _before_or(node: cst.CSTNode) -> cst.CSTNode:
    """The operand to sort in ``node``: the left of an ``a or DEFAULT`` chain (``sorted(a) or DEFAULT`` keeps the
    default, which may not be iterable: the SDKs' ``NOT_GIVEN`` / ``OMIT``), else ``node`` itself."""
    while isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
        node = node.left
    return node


# Listing calls whose result sorted() can order, and the key it needs (items that do not compare get one).
_BY_NAME = ", key=lambda e: e.name"
_LISTING_KEYS = {"listdir": "", "glob": "", "iglob": "", "rglob": "", "iterdir": "", "scandir": _BY_NAME,
                 "entry_points": _BY_NAME, "iter_modules": _BY_NAME}


class ToolsFromFilesystemOrder(FlowRule):
    """
    ## What it does
    Finds tools discovered through ``os.listdir`` / ``os.scandir`` /
    ``os.walk``, ``glob``, ``Path.glob/rglob/iterdir``, entry points or
    ``pkgutil.iter_modules`` without ``sorted()``.

    ## Why is this bad?
    Directory order depends on the filesystem and on the order files were
    created; installed entry points depend on the install. Two hosts can send
    the same tools in different orders, and tools are the first bytes of the
    prefix.

    ## Example
    ```python
    tools = [json.loads(p.read_text()) for p in TOOL_DIR.glob("*.json")]
    ```

    ## Use instead
    ```python
    tools = [json.loads(p.read_text()) for p in sorted(TOOL_DIR.glob("*.json"))]
    ```

    ## Fix safety
    The fix wraps the listing call in ``sorted(...)``, with
    ``key=lambda e: e.name`` for ``os.scandir``, entry points and
    ``pkgutil.iter_modules`` (their items do not compare). It is unsafe: the
    tool order, and so the prompt bytes, change once. ``os.walk`` gets no edit
    (sort ``dirnames`` and ``filenames`` in the loop).

    ## When it does not fire
    The listing is sorted before the tools are built.

    The finding is reported at the listing call, where the fix goes (not where
    the tools are sent), once per listing.
    """

    code = "PC302"
    name = "tools-from-filesystem-order"
    severity = Severity.WARNING
    fixable = "unsafe"

    def issue_fix(self, issue) -> NodeFix:
        node = issue.origin if issue.origin is not None else issue.node
        name = node.func.attr.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else (
            node.func.value if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) else None)
        if name not in _LISTING_KEYS:
            return NodeFix("Sort the listing with sorted() before the tools are built", Applicability.UNSAFE)
        key = _LISTING_KEYS[name]
        return NodeFix(f"Wrap `{self.flow.code(node)}` in sorted(...{key})", Applicability.UNSAFE,
                       ((node, f"sorted({self.flow.code(node)}{key})"),))
    message = (
        "tools= is built from {detail} without sorted(): directory and entry-point order differs between hosts, "
        "and tools render first, so hosts send different prefixes; sort the listing"
    )

    def findings(self, flow) -> list:
        """A directory or entry-point listing on ``tools=``, unless a shuffle or an MCP listing on the same
        value is reported instead (PC303, PC305); reported where the listing starts when that is known."""
        if flow.area != "tools" or not flow.has(S.FS_ORDER) or self.owned_by(flow, (S.SHUFFLED, "PC303"), (S.MCP, "PC305")):
            return []
        listings = {id(s.origin): s for s in flow.of(S.FS_ORDER)}  # one per listing: each gets its own sorted()
        return [self.issue(flow, node=s.origin, detail=s.detail, origin=s.origin) for s in listings.values()]

    VALID = [
        _CLAUDE + "import json\nfrom pathlib import Path\nTOOLS = [json.loads(p.read_text()) for p in sorted(Path('t').glob('*.json'))]\ndef run(q):\n    return client.messages.create(model='m', tools=TOOLS, messages=[])\n",
        _CLAUDE + "import os\ndef run(q):\n    files = os.listdir('docs')\n    return client.messages.create(model='m', messages=[{'role': 'user', 'content': str(files)}])\n",
        _CLAUDE + "import os\ndef run(q):\n    names = sorted(os.listdir('tools'))\n    return client.messages.create(model='m', tools=[{'name': n} for n in names], messages=[])\n",
        # swarm (blind set 15): one agent per listed folder, each with the tools its own config names in order;
        # the listing orders the agents, not any agent's tools
        # ... nor picks the one agent a request is for by its name (swarm's get_assistant)
        _CLAUDE + "import os\nAGENTS = []\nfor d in os.listdir('agents'):\n    AGENTS.append({'name': d, 'tools': [{'name': 'search'}]})\ndef get(name):\n    for a in AGENTS:\n        if a['name'] == name:\n            return a\ndef run(q, name):\n    return client.messages.create(model='m', max_tokens=9, tools=get(name)['tools'], messages=q)\n",
        # ... nor found by a guard clause; nor a mapping built from a listing (a comprehension, dict(pairs),
        # .update() in a loop) and read by key; nor a file opened under one name in two loops in a row (review, stop 31)
        _CLAUDE + "import os\nAGENTS = []\nfor d in os.listdir('agents'):\n    AGENTS.append({'name': d, 'tools': [{'name': 'search'}]})\ndef get(name):\n    for a in AGENTS:\n        if a['name'] != name:\n            continue\n        return a\ndef run(q, name):\n    return client.messages.create(model='m', max_tokens=9, tools=get(name)['tools'], messages=q)\n",
        _CLAUDE + "import json, os\ndef run(q, names):\n    defs = {f: json.load(open(f)) for f in os.listdir('tools')}\n    return client.messages.create(model='m', max_tokens=9, tools=[defs[n] for n in names], messages=q)\n",
        _CLAUDE + "import json, os\ndef run(q, names):\n    defs = dict((f, json.load(open(f))) for f in os.listdir('tools'))\n    return client.messages.create(model='m', max_tokens=9, tools=[defs[n] for n in names], messages=q)\n",
        _CLAUDE + "import json, os\ndef run(q, names):\n    defs = {}\n    for f in os.listdir('tools'):\n        defs.update({f: json.load(open(f))})\n    return client.messages.create(model='m', max_tokens=9, tools=[defs[n] for n in names], messages=q)\n",
        _CLAUDE + "import json, os\ndef run(q):\n    defs = {}\n    for f in os.listdir('tools'):\n        with open(f) as file:\n            spec = json.load(file)\n            defs[spec['name']] = spec\n    for d in os.listdir('agents'):\n        with open(d) as file:\n            config = json.load(file)\n            client.messages.create(model='m', max_tokens=9, tools=[defs[n] for n in config['tools']], messages=q)\n",
        # ... and a dict filled from a listing, read by key in the order the config names the tools
        _CLAUDE + "import json, os\ndef run(q, names):\n    defs = {}\n    for f in os.listdir('tools'):\n        spec = json.load(open(f))\n        defs[spec['name']] = spec\n    return client.messages.create(model='m', max_tokens=9, tools=[defs[n] for n in names if n in defs], messages=q)\n",
        _CLAUDE + "import json, os\ndef run(q):\n    for d in os.listdir('agents'):\n        config = json.load(open(os.path.join('agents', d, 'a.json')))\n        tools = [{'name': n} for n in config['tools']]\n        client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "import json\nfrom pathlib import Path\ndef run(q):\n    return client.messages.create(model='m', messages=[],\n        tools=[json.loads(p.read_text()) for p in Path('t').glob('*.json')])\n", line=7),
        Invalid(_OPENAI + "import os\ndef run(q):\n    tools = []\n    for name in os.listdir('tools'):\n        tools.append({'type': 'function', 'function': {'name': name}})\n    return client.chat.completions.create(model='m', messages=[], tools=tools)\n", line=6),
        Invalid(_OPENAI + "from importlib.metadata import entry_points\nTOOLS = [ep.load() for ep in entry_points(group='tools')]\ndef run(q):\n    return client.chat.completions.create(model='m', messages=[], tools=TOOLS)\n", line=4),
        # filled through a name the body binds by an annotated assignment, by an inner loop, or into a list held in
        # a dict (read by key: the key order is not in it, the list's order is)
        Invalid(_CLAUDE + "import json, os\ndef run(q):\n    tools = []\n    for f in os.listdir('tools'):\n        spec: dict = json.load(open(f))\n        tools.append(spec)\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
        Invalid(_CLAUDE + "import json, os\ndef run(q):\n    tools = []\n    for d in os.listdir('plugins'):\n        for spec in json.load(open(d)):\n            tools.append(spec)\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
        Invalid(_CLAUDE + "import json, os\nfrom collections import defaultdict\ndef run(q):\n    groups = defaultdict(list)\n    for f in os.listdir('tools'):\n        spec = json.load(open(f))\n        groups[spec['kind']].append(spec)\n    return client.messages.create(model='m', max_tokens=9, tools=groups['search'], messages=q)\n", line=7),
        # ... or by `with open(...) as f` in the loop (newcomer, stop 31)
        Invalid(_CLAUDE + "import json, os\ndef run(q):\n    tools = []\n    for name in os.listdir('plugins'):\n        with open(name) as f:\n            tools.append(json.load(f))\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
        # two listings on two lines: one finding each, each with its sorted()
        Invalid(_CLAUDE + "import os\ndef run(q):\n    tools = [{'name': n} for n in os.listdir('a')]\n    tools += [{'name': n} for n in os.listdir('b')]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
        Invalid(_CLAUDE + "import os\ndef run(q):\n    tools = [{'name': n} for n in os.listdir('a')]\n    tools += [{'name': n} for n in os.listdir('b')]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=5),
        # filled once per listed file by `+=` or by rebinding the list from itself
        Invalid(_CLAUDE + "import os\ndef run(q):\n    tools = []\n    for n in os.listdir('t'):\n        tools += [{'name': n}]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
        Invalid(_CLAUDE + "import os\ndef run(q):\n    tools = []\n    for n in os.listdir('t'):\n        tools = [*tools, {'name': n}]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=q)\n", line=6),
    ]
