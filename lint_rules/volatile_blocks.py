"""PC103-PC105: volatile or per-user values in the other cached places: an Anthropic message block at or before
the last cache breakpoint, a tool definition, and ``prompt_cache_key=``.

The system prompt's rules (PC101, PC102) are in :mod:`lint_rules.volatile`; the facts come from
:class:`promptcache.lint.dataflow.FlowAnalysis`.
"""

from __future__ import annotations

import dataclasses

from promptcache.lint import sources as S
from promptcache.lint.finding import Severity
from promptcache.lint.rule import FlowRule, Invalid

_CLAUDE = 'import anthropic\nclient = anthropic.Anthropic()\n'
_OPENAI = 'from openai import OpenAI\nclient = OpenAI()\n'
_CC = '"cache_control": {"type": "ephemeral"}'


class VolatileBeforeCacheBreakpoint(FlowRule):
    """
    ## What it does
    In an Anthropic request with ``cache_control`` markers, finds a volatile or
    identity value in a message block at or before the last breakpoint (the
    cache order is tools, then system, then messages).

    ## Why is this bad?
    Anthropic caches the prefix up to each ``cache_control`` block. If an
    account number or a timestamp sits before the block that carries the
    marker, that cached prefix only ever matches for the same value: the large
    cached document behind it is written again for every account.

    ## Example
    ```python
    content=[
        {"type": "text", "text": f"Account {account.account_id}"},
        {"type": "text", "text": CONTRACT, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": question},
    ]
    ```

    ## Use instead
    ```python
    content=[
        {"type": "text", "text": CONTRACT, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": f"Account {account.account_id}\\n\\n{question}"},
    ]
    ```

    ## When it does not fire
    The request has no ``cache_control``; the value comes after the last
    marker; the value is in the system prompt or tools (PC101, PC102 and PC104
    report those).
    """

    code = "PC103"
    name = "volatile-before-cache-breakpoint"
    severity = Severity.ERROR
    message = (
        "{sources} {be} in a block at or before the last cache_control breakpoint: Anthropic caches the prefix "
        "up to each breakpoint, so it only hits for the same {value}; move the {value} after the last breakpoint"
    )

    one_per_node = True
    innermost_only = False

    def flows(self) -> list:
        return self.flow.breakpoint_flows

    def findings(self, flow) -> list:
        detail = (flow.of(S.VOLATILE) or flow.of(S.IDENTITY))[0].detail
        return [self.issue(flow, detail=detail, sources=flow.of(S.VOLATILE, S.IDENTITY))]

    VALID = [
        _CLAUDE + f"DOC = open('d.md').read()\ndef ask(acct, q):\n    return client.messages.create(model='m', messages=[{{'role': 'user', 'content': [\n        {{'type': 'text', 'text': DOC, {_CC}}},\n        {{'type': 'text', 'text': f'{{acct.account_id}} {{q}}'}}]}}])\n",
        _CLAUDE + "from datetime import date\ndef ask(acct, q):\n    return client.messages.create(model='m', messages=[{'role': 'user', 'content': f'{date.today()} {q}'}])\n",
        _CLAUDE + f"def ask(q):\n    return client.messages.create(model='m', system=[{{'type': 'text', 'text': 'Rules', {_CC}}}], messages=[{{'role': 'user', 'content': q}}])\n",
        # Issue 11: the date after the last breakpoint, in a `**params` dict and in SDK TypedDict blocks.
        _CLAUDE + "from datetime import datetime\nDOC = 'x'\ndef ask(q):\n    params = {'model': 'm', 'max_tokens': 512, 'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': DOC, 'cache_control': {'type': 'ephemeral'}}, {'type': 'text', 'text': f'Now: {datetime.now()} {q}'}]}]}\n    return client.messages.create(**params)\n",
        _CLAUDE + "from datetime import datetime\nfrom anthropic.types import TextBlockParam\nDOC = 'x'\ndef ask(q):\n    return client.messages.create(model='m', max_tokens=512, messages=[{'role': 'user', 'content': [TextBlockParam(type='text', text=DOC, cache_control={'type': 'ephemeral'}), TextBlockParam(type='text', text=f'Now: {datetime.now()} {q}')]}])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + f"DOC = open('d.md').read()\ndef ask(acct, q):\n    return client.messages.create(model='m', messages=[{{'role': 'user', 'content': [\n        {{'type': 'text', 'text': f'Account {{acct.account_id}}'}},\n        {{'type': 'text', 'text': DOC, {_CC}}}]}}])\n", line=6),
        Invalid(_CLAUDE + f"import time\ndef ask(q):\n    return client.messages.create(model='m', messages=[\n        {{'role': 'user', 'content': f'Asked at {{time.time()}}'}},\n        {{'role': 'assistant', 'content': 'ok'}},\n        {{'role': 'user', 'content': [{{'type': 'text', 'text': q, {_CC}}}]}}])\n", line=6),
        Invalid(_CLAUDE + f"def ask(user, q):\n    blocks = [{{'type': 'text', 'text': user.email}}, {{'type': 'text', 'text': 'Policy', {_CC}}}]\n    return client.messages.create(model='m', messages=[{{'role': 'user', 'content': blocks}}])\n", line=4),
        # Issue 11: the marked block in a `**params` request dict, and marked through the SDK's TypedDict.
        Invalid(_CLAUDE + "from datetime import datetime\ndef ask(q):\n    params = {'model': 'm', 'max_tokens': 512, 'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': f'Now: {datetime.now()}', 'cache_control': {'type': 'ephemeral'}}, {'type': 'text', 'text': q}]}]}\n    return client.messages.create(**params)\n", line=5),
        Invalid(_CLAUDE + "from datetime import datetime\nfrom anthropic.types import TextBlockParam\ndef ask(q):\n    return client.messages.create(model='m', max_tokens=512, messages=[{'role': 'user', 'content': [TextBlockParam(type='text', text=f'Now: {datetime.now()}', cache_control={'type': 'ephemeral'}), TextBlockParam(type='text', text=q)]}])\n", line=6),
    ]


def _per_user(issue) -> bool:
    """Every source of ``issue`` is an identity (the user, their plan or projects): fixed for one user."""
    return bool(issue.sources) and all(s.kind == S.IDENTITY for s in issue.sources)


class VolatileInToolDefinition(FlowRule):
    """
    ## What it does
    Finds a volatile, per-user or per-deployment (environment variable) value
    inside an element of ``tools=``: a description, an ``enum`` of the user's
    projects, a default built from the clock.

    ## Why is this bad?
    Tools are rendered first, before the system prompt and the messages. A
    tool schema that differs between calls changes the very start of the
    prefix, so the whole request is a cache miss, system prompt included.

    ## Example
    ```python
    {"name": "create_issue", "parameters": {"properties": {
        "project": {"type": "string", "enum": user.project_keys}}}}
    ```

    ## Use instead
    ```python
    {"name": "create_issue", "parameters": {"properties": {
        "project": {"type": "string", "description": "A project key from the user message."}}}}
    ```
    and list the user's projects in the final user message (validate them in
    the tool handler).

    A clock or an id made per request changes the tools on every call (an
    error); a value of the user's (``user.project_keys``, a user id) changes
    them between users, and one user's requests still share their prefix: that
    finding says "each user gets tools of their own" and is a **warning**.

    ## When it does not fire
    Tool definitions made of literals and module constants; values used only
    when the tool runs; environment variables and other per-process values
    (one deployment sends the same tools on every request, and each process
    warms its own cache once); functions and classes given as tools, whatever
    their name (``tools=[lookup_account]`` is code, not an account); the
    callable of a tool object given its schema
    (``FunctionTool(func=session.search, openai_tool_schema=schema)`` sends
    ``schema``: a session id bound into the callable is never sent); a user
    given as is to a function whose body is not seen and that returns tools by
    its name (``construct_tools(user=user)``, a client set up with the user's
    token listing them with ``get_tools()``: it picks or authorises the tools,
    it is not known to be in their schemas; not when the call is written into
    a schema field or text); a tool object any such function makes from a
    user's data (``build_skill_setup(user_skills).describe_tool``, deer-flow:
    the data may stay in a closure; written into a schema literal, as in
    ``{"description": describe(user)}``, it is reported); a builder
    called with ``None`` for the parameter whose fields fill the schema
    (``build(SCHEMA, info=None)``: the ``if info:`` substitution never runs);
    a clock given to a tool object's record-time keyword (``Tool(name=...,
    creation_utc=datetime.now(UTC))``, parlant): when the tool was made, not
    its schema; a tool-named function annotated to return a list of tuples
    with a float (``def query_tools(...) -> List[Tuple[dict, float, dict]]``,
    letta): ranked search results with their scores, not the definitions a
    request sends.
    """

    code = "PC104"
    name = "volatile-in-tool-definition"
    severity = Severity.ERROR
    message = (
        "{sources} {be} inside a tool definition: tools render first, so a tool schema that differs between "
        "calls invalidates the whole cached prefix; keep tools static and pass the {value} in the user message"
    )

    per_user_message = (
        "{sources} {be} inside a tool definition: each user gets tools of their own, and tools render first, so "
        "requests of different users share no cached prefix (one user's requests still share theirs); keep one "
        "tool set for every user and pass the {value} in the user message"
    )

    def issue_message(self, issue):
        """Per-user values only (no clock, no id made per request): the tools differ between users, not between
        one user's calls (issue 11, deer-flow: messages that overstate)."""
        message = super().issue_message(issue)
        if _per_user(issue) and hasattr(message, "template"):
            return dataclasses.replace(message, template=self.per_user_message)
        return message

    def issue_severity(self, issue):
        """Per-user tools cost the sharing between users, not every request: a warning, as PC102 is."""
        return Severity.WARNING if _per_user(issue) else None

    def findings(self, flow) -> list:
        """A volatile or identity source on a value inside ``tools=`` (an environment value is per process)."""
        if flow.area not in ("tools", "tool_content"):
            return []
        # an identity given to a call whose body is not seen (`construct_tools(user=user)`) picks or authorises the
        # tools; it is not known to be in their schemas (onyx, open_deep_research; Source.through_call)
        found = [s for s in flow.of(S.VOLATILE, S.IDENTITY) if not s.through_call]
        if not found:
            return []
        return [self.issue(flow, detail=found[0].detail, sources=tuple(found))]

    VALID = [
        _OPENAI + "TOOLS = [{'type': 'function', 'function': {'name': 'f', 'parameters': {}}}]\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=TOOLS)\n",
        _OPENAI + "def ask(user, q):\n    tool = {'type': 'function', 'function': {'name': 'f', 'description': 'Search.'}}\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': f'{user.email} {q}'}], tools=[tool])\n",
        _CLAUDE + "TOOLS = [{'name': 'now', 'description': 'Current time.', 'input_schema': {'type': 'object'}}]\ndef ask(q):\n    return client.messages.create(model='m', tools=TOOLS, messages=[{'role': 'user', 'content': q}])\n",
        # Issue 11 (letta's tpuf_client.query_tools): a tool search annotated to return (tool, score, metadata)
        # tuples gives ranked results, not the tool definitions of a request.
        _OPENAI + "from typing import List, Tuple\nasync def query_tools(organization_id: str, query: str) -> List[Tuple[dict, float, dict]]:\n    namespace = f'tools_{organization_id}'\n    results = await search(namespace, query)\n    return [(r, 1.0, {'namespace': namespace}) for r in results]\n",
        # Issue 11, from real code: per-process values and code are not per-request data.
        _CLAUDE + "import os\nTOOLS = [{'name': 'deploy', 'description': 'Deploy to ' + os.environ['REGION']}]\ndef ask(q):\n    return client.messages.create(model='m', tools=TOOLS, messages=[])\n",
        "import os\nfrom agents import Agent, HostedMCPTool\nAUTH = os.environ['CALENDAR_TOKEN']\nagent = Agent(name='a', instructions='Help.', tools=[HostedMCPTool(tool_config={'type': 'mcp', 'authorization': AUTH})])\n",
        "from agents import Agent, Runner, function_tool\nasync def run(question):\n    @function_tool\n    def lookup_account(account_id: str) -> str:\n        return account_id\n    agent = Agent(name='s', instructions='Help.', tools=[lookup_account])\n    return await Runner.run(agent, question)\n",
        # Issue 11, camel's ChatAgent._clone_tools: the clone's toolkit has a new session id, but each tool keeps
        # the original's schema; the id is in the callable, which runs the tool and is never sent.
        _OPENAI + "import uuid\nfrom camel.agents import ChatAgent\nfrom camel.toolkits import FunctionTool\ndef clone(agent):\n    tools = []\n    for tool in agent.tools:\n        toolkit = tool.func.__self__.clone_for_new_session(str(uuid.uuid4())[:8])\n        method = getattr(toolkit, tool.func.__name__)\n        tools.append(FunctionTool(func=method, openai_tool_schema=tool.get_openai_tool_schema()))\n    return ChatAgent(system_message='Help.', tools=tools)\n",
        "import uuid\nfrom agents import Agent, FunctionTool\nSCHEMA = {'type': 'object', 'properties': {'q': {'type': 'string'}}}\ndef build(session):\n    handler = session.clone(str(uuid.uuid4()))\n    tool = FunctionTool(name='search', description='Search.', params_json_schema=SCHEMA, on_invoke_tool=handler.run)\n    return Agent(name='a', instructions='Help.', tools=[tool])\n",
        # Issue 11, onyx and open_deep_research: an identity given as is to a function that returns tools picks or
        # authorises them (`construct_tools(user=user)`, an MCP client set up with the user's token)...
        _OPENAI + "from app.tools import construct_tools\ndef ask(persona, user, q):\n    tools = construct_tools(persona=persona, user=user)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=tools)\n",
        "from openai import OpenAI\nfrom langchain_mcp_adapters.client import MultiServerMCPClient\nclient = OpenAI()\nasync def ask(store, config, q):\n    user_id = config['metadata']['owner']\n    tokens = await store.aget((user_id, 'tokens'), 'data')\n    mcp = MultiServerMCPClient({'server': {'url': 'https://mcp.example/mcp', 'headers': {'Authorization': tokens['access_token']}}})\n    tools = await mcp.get_tools()\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=tools)\n",
        # ...and a tool object an unseen factory makes from the user's data, which it keeps in a closure (deer-flow's
        # `build_skill_search_setup(skills).describe_skill_tool`); written into a schema literal it is INVALID below.
        _OPENAI + "from app.skills import build_skill_search_setup, load_skills\nBASE_TOOLS = [{'type': 'function', 'function': {'name': 'ls', 'parameters': {}}}]\ndef ask(user, q):\n    setup = build_skill_search_setup(load_skills(user_id=user.user_id), enabled=True)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[*BASE_TOOLS, setup.describe_skill_tool])\n",
        # ...and a call passing None for the parameter whose fields fill the schema (onyx's `__main__` demo).
        "import json\nfrom openai import OpenAI\nclient = OpenAI()\nSCHEMA = {'name': 'get_item', 'parameters': {'type': 'object'}}\nclass Tool:\n    def __init__(self, schema):\n        self.schema = schema\n    def definition(self):\n        return {'type': 'function', 'function': self.schema}\ndef build(schema, info=None):\n    if info:\n        schema = json.loads(json.dumps(schema).replace('USER_ID', str(info.user_id)))\n    return [Tool(schema)]\ndef ask(q):\n    tools = build(SCHEMA, info=None)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[t.definition() for t in tools])\ndef ask_again(q):\n    tools = build(SCHEMA)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[t.definition() for t in tools])\n",
        # ... also when the tools it returns are iterated or extended (second review).
        'from openai import OpenAI\nfrom app.tools import construct_tools\n\nclient = OpenAI()\n\n\ndef ask(persona, user, q):\n    return client.chat.completions.create(\n        model="m",\n        messages=[{"role": "user", "content": q}],\n        tools=[t.definition() for t in construct_tools(persona=persona, user=user)],\n    )\n',
        'from openai import OpenAI\nfrom app.tools import construct_tools, SEARCH_TOOL\n\nclient = OpenAI()\n\n\ndef ask(persona, user, q):\n    tools = construct_tools(persona=persona, user=user) + [SEARCH_TOOL]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n',
        # Issue 11 (parlant, blind set 8): a tool object's record time is not its schema.
        _OPENAI + "from datetime import datetime, timezone\ndef to_tool(t):\n    return Tool(name=t.name, creation_utc=datetime.now(timezone.utc), description=t.description or '')\ndef ask(q, mcp_tools):\n    tools = [to_tool(t) for t in mcp_tools]\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[render(t) for t in tools])\n",
        # Issue 11 (blind set 8, PraisonAI and langroid): a tool's trust level kept beside it in a registry, and the
        # API organisation of the deployment's client: no user's data (a bare `level` / `org` names no user).
        _OPENAI + "class Registry:\n    def __init__(self):\n        self._tools = {}\n    def register(self, tool, trust_level=None):\n        self._tools[tool['function']['name']] = {'tool': tool, 'trust_level': trust_level}\n    def list_tools(self):\n        return [e['tool'] for e in self._tools.values()]\nREGISTRY = Registry()\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=REGISTRY.list_tools())\n",
        _OPENAI + "def update_tools(assistant_id, specs):\n    org = client.organization\n    tools = [{'type': 'function', 'function': s, 'metadata': {'org': org}} for s in specs]\n    return client.chat.completions.create(model='m', messages=[], tools=tools)\n",
        # Issue 11 (skyvern, blind set 18): a deadline on the monotonic clock handed to a tool factory times the
        # tool's run; a timer reading is no text of its schema.
        _OPENAI + "import time\nfrom .loop import make_finish_tool\nFIXED = [{'type': 'function', 'function': {'name': 'click', 'parameters': {}}}]\ndef ask(q, seconds):\n    finish = make_finish_tool(deadline_at=time.monotonic() + seconds if seconds is not None else None)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=FIXED + [finish])\n",
    ]
    INVALID = [
        # ... nor a list of (name, schema) pairs with no score, turned into tools (review helper-93).
        Invalid(_CLAUDE + "import time\ndef build_tools(names) -> list[tuple[str, dict]]:\n    return [(n, {'type': 'object', 'description': f'as of {time.time()}'}) for n in sorted(names)]\ndef ask(q, names):\n    return client.messages.create(model='m', max_tokens=9, tools=[{'name': n, 'input_schema': s} for n, s in build_tools(names)], messages=[q])\n", line=5),
        # ... but a tools builder annotated to return the definitions themselves builds them per organisation.
        Invalid(_OPENAI + "from typing import List\ndef enabled_tools(organization_id: str) -> List[dict]:\n    return [{'type': 'function', 'function': {'name': 'search', 'description': f'Search the docs of {organization_id}.'}}]\n", line=5),
        # ... but a clock reading written into a description is text.
        Invalid(_OPENAI + "import time\ndef ask(q):\n    tool = {'type': 'function', 'function': {'name': 'wait', 'description': f'Started at {time.monotonic()}'}}\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[tool])\n", line=5),
        # Review of the deer-flow change: a description built here and handed to a tool factory by name is its text.
        Invalid("from openai import OpenAI\nclient = OpenAI()\nfrom langchain_core.tools import StructuredTool\nfrom langchain_core.utils.function_calling import convert_to_openai_tool\ndef ask(user, q, lookup):\n    desc = f'Look up the orders of {user.email}.'\n    tool = StructuredTool.from_function(func=lookup, name='lookup', description=desc)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[convert_to_openai_tool(tool)])\n", line=8),
        # ... a clock in a record-time keyword of an object rendered whole, or in its description.
        Invalid(_OPENAI + "from dataclasses import dataclass, asdict\nfrom datetime import datetime\n@dataclass\nclass Tool:\n    name: str\n    created_at: datetime\ndef ask(q):\n    tool = Tool(name='search', created_at=datetime.now())\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[{'type': 'function', 'function': asdict(tool)}])\n", line=11),
        Invalid(_OPENAI + "from datetime import datetime\ndef ask(q):\n    tool = Tool(name='search', created_at=1, description=f'Search. Now: {datetime.now()}')\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[tool.schema()])\n", line=6),
        # ... a user's plan is a user's data (`user_plan`, `account_level`).
        Invalid(_OPENAI + "def ask(q, user_plan):\n    tools = [{'type': 'function', 'function': {'name': 'upgrade', 'description': f'Upgrade from {user_plan}.'}}]\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=tools)\n", line=4),
        Invalid(_OPENAI + "def ask(user, q):\n    tool = {'type': 'function', 'function': {'name': 'f', 'parameters': {\n        'properties': {'p': {'enum': user.project_keys}}}}}\n    return client.chat.completions.create(model='m', messages=[], tools=[tool])\n", line=5),
        Invalid(_CLAUDE + "from datetime import date\ndef ask(q):\n    tools = [{'name': 'book', 'description': f'Book a room. Today is {date.today()}.'}]\n    return client.messages.create(model='m', tools=tools, messages=[])\n", line=5),
        Invalid("from promptcache import PromptBuilder\ndef base(user):\n    return PromptBuilder().tools([{'name': 'f', 'description': f'Files of {user.email}'}])\n", line=3),
        # The boundary of the camel case: the id in the schema, or in a description given beside it, is sent.
        Invalid(_OPENAI + "import uuid\nfrom camel.agents import ChatAgent\nfrom camel.toolkits import FunctionTool\ndef clone(search):\n    sid = str(uuid.uuid4())[:8]\n    schema = {'type': 'function', 'function': {'name': f'search_{sid}', 'parameters': {}}}\n    return ChatAgent(system_message='Help.', tools=[FunctionTool(func=search, openai_tool_schema=schema)])\n", line=9),
        Invalid("import uuid\nfrom agents import Agent, FunctionTool\nSCHEMA = {'type': 'object', 'properties': {'q': {'type': 'string'}}}\ndef build(run):\n    sid = str(uuid.uuid4())[:8]\n    tool = FunctionTool(name='search', description=f'Files of session {sid}.', params_json_schema=SCHEMA, on_invoke_tool=run)\n    return Agent(name='a', instructions='Help.', tools=[tool])\n", line=7),
        # The boundary of the onyx cases: a builder whose body is seen puts the identity in the schema, and the
        # same builder given a session object for the parameter.
        Invalid(_OPENAI + "def make_tools(user):\n    return [{'type': 'function', 'function': {'name': 'files', 'description': f'Files of {user.email}'}}]\ndef ask(user, q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=make_tools(user))\n", line=4),
        Invalid("import json\nfrom openai import OpenAI\nclient = OpenAI()\nSCHEMA = {'name': 'get_item', 'parameters': {'type': 'object'}}\nclass Tool:\n    def __init__(self, schema):\n        self.schema = schema\n    def definition(self):\n        return {'type': 'function', 'function': self.schema}\ndef build(schema, info=None):\n    if info:\n        schema = json.loads(json.dumps(schema).replace('USER_ID', str(info.user_id)))\n    return [Tool(schema)]\ndef ask(q, session):\n    tools = build(SCHEMA, info=session)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[t.definition() for t in tools])\ndef ask_again(q):\n    tools = build(SCHEMA)\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=[t.definition() for t in tools])\n", line=16),
        # Third review: a per-user lookup in an enum or a description is data, whatever the callee's name says.
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(db, user_id, q):\n    tools = [{"type": "function", "function": {"name": "open_project", "parameters": {"type": "object", "properties": {\n        "project": {"type": "string", "enum": [p.key for p in db.get_projects(user_id)]}}}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(store, user_id, q):\n    profile = store.get_profile(user_id)\n    tools = [{"type": "function", "function": {"name": "files", "description": profile, "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(user, q):\n    description = build_tool_description(user)\n    tools = [{"type": "function", "function": {"name": "files", "description": description, "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
        # ... and the boundaries of the unseen-call reading (issue 11 review): its result written into a schema
        # field or a name, or text built around the identity before the call.
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(user, q):\n    tools = [{"type": "function", "function": {"name": "files", "description": describe_account(user), "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=7),
        Invalid('from openai import OpenAI\nfrom app.text import slugify\n\nclient = OpenAI()\n\n\ndef ask(user_id, q):\n    tools = [{"type": "function", "function": {"name": slugify(user_id), "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(user, q):\n    tools = [{"type": "function", "function": {"name": f"search_{to_identifier(user.username)}", "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=7),
        Invalid("from openai import OpenAI\nclient = OpenAI()\ndef ask(user, q):\n    tools = make_tools(f'Search the files of {user.email}')\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': q}], tools=tools)\n", line=5),
        Invalid('from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef ask(user, q):\n    description = describe_account(user)\n    tools = [{"type": "function", "function": {"name": "files", "description": description, "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
        Invalid('from openai import OpenAI\nfrom app.text import slugify\n\nclient = OpenAI()\n\n\ndef ask(user_id, q):\n    tools = [{"type": "function", "function": {"name": str(slugify(user_id)), "parameters": {}}}]\n    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": q}], tools=tools)\n', line=8),
    ]


class VolatilePromptCacheKey(FlowRule):
    """
    ## What it does
    Finds an OpenAI ``prompt_cache_key=`` built from a volatile value: a uuid,
    a request id, a timestamp.

    ## Why is this bad?
    OpenAI routes requests with the same prompt prefix and the same
    ``prompt_cache_key`` to the same cache. A key that is new on every request
    scatters identical prefixes across machines that have never cached them,
    so the long shared instructions are never read from cache.

    ## Example
    ```python
    client.responses.create(model="gpt-4.1-mini", instructions=DOCS, input=q,
                            prompt_cache_key=f"cli-help-{request_id}")
    ```

    ## Use instead
    ```python
    client.responses.create(model="gpt-4.1-mini", instructions=DOCS, input=q,
                            prompt_cache_key="cli-help-v2")
    ```

    ## When it does not fire
    A fixed per-feature key, or a per-user key (a stable user id is a good
    routing key); the request id sent only in a header.
    """

    code = "PC105"
    name = "volatile-prompt-cache-key"
    severity = Severity.WARNING
    message = (
        "prompt_cache_key is built from {sources}: OpenAI routes cache lookups by this key, so a per-request key "
        "never meets a warm cache; use a stable per-feature or per-user key"
    )

    one_per_node = False
    innermost_only = False

    def flows(self) -> list:
        return self.flow.cache_key_flows

    def findings(self, flow) -> list:
        volatile = flow.of(S.VOLATILE)
        return [self.issue(flow, detail=volatile[0].detail, sources=volatile)]

    VALID = [
        _OPENAI + "def ask(q):\n    return client.responses.create(model='m', input=q, prompt_cache_key='docs-v2')\n",
        _OPENAI + "def ask(user_id, q):\n    return client.responses.create(model='m', input=q, prompt_cache_key=f'docs-{user_id}')\n",
        _OPENAI + "def ask(request_id, q):\n    return client.responses.create(model='m', input=q, extra_headers={'X-Request-Id': request_id})\n",
        # Issue 11: a fixed key in a `**params` request dict.
        _OPENAI + "def ask(q):\n    params = {'model': 'm', 'input': q, 'prompt_cache_key': 'support-bot-v2'}\n    return client.responses.create(**params)\n",
    ]
    INVALID = [
        Invalid(_OPENAI + "def ask(request_id, q):\n    return client.responses.create(model='m', input=q, prompt_cache_key=f'docs-{request_id}')\n", line=4),
        Invalid(_OPENAI + "import uuid\ndef ask(q):\n    return client.responses.create(model='m', input=q, prompt_cache_key=str(uuid.uuid4()))\n", line=5),
        Invalid(_OPENAI + "import time\ndef ask(q):\n    key = f'k{time.time_ns()}'\n    return client.chat.completions.create(model='m', messages=[], prompt_cache_key=key)\n", line=6),
        # Issue 11: the key as an entry of a `**params` request dict.
        Invalid(_OPENAI + "import time\ndef ask(q):\n    params = {'model': 'm', 'input': q, 'prompt_cache_key': f'req-{time.time()}'}\n    return client.responses.create(**params)\n", line=5),
    ]


__all__ = ["VolatileBeforeCacheBreakpoint", "VolatileInToolDefinition", "VolatilePromptCacheKey"]
