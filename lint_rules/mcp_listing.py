"""PC305: tools taken from an MCP server's ``list_tools()`` unsorted, or listed again on every turn.

The server decides the order of its listing; tools render first in every provider's request, so another order
is another prefix. Kept apart from :mod:`lint_rules.ordering` (PC301, PC302) to keep each module short.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import sources as S
from promptcache.lint.finding import Severity
from promptcache.lint.rule import FlowRule, Invalid
from promptcache.lint.flow_facts import tools_label
from promptcache.lint.walk import descendants

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"


class McpToolsUnsorted(FlowRule):
    """
    ## What it does
    Finds tools taken from an MCP server's ``list_tools()`` without sorting
    them by name, or listed again on every turn.

    ## Why is this bad?
    The server decides the order of ``list_tools()``: a reconnect, a restart
    or a new server version can reorder it. Tools render first, so a reordered
    list is a new prefix. Re-listing per turn also picks up added or removed
    tools mid-conversation, invalidating the cached conversation.

    ## Example
    ```python
    tools=[to_tool(t) for t in (await session.list_tools()).tools]
    ```

    ## Use instead
    ```python
    listed = await session.list_tools()          # once, when connecting
    self.tools = [to_tool(t) for t in sorted(listed.tools, key=lambda t: t.name)]
    ```

    ## When it does not fire
    The tools are listed once (outside the request loop and the request
    handler) and sorted by name. In a function whose LLM calls all run inside
    a loop (a conversation or agent loop), only the loop body is the per-turn
    path: listing the tools before the loop is listing them once.
    """

    code = "PC305"
    name = "mcp-tools-unsorted"
    severity = Severity.WARNING
    message = (
        "{slot} comes from MCP list_tools() {detail}: the server decides the order and the set, and tools render "
        "first, so a reorder or change invalidates the whole prefix; list once and sort by name"
    )

    def findings(self, flow) -> list:
        """An unsorted MCP listing on ``tools=`` (unless shuffled: PC303), else a sorted listing that is
        made again on the per-turn path (unless a set or directory order on it is reported: PC301, PC302)."""
        if flow.area != "tools" or self.owned_by(flow, (S.SHUFFLED, "PC303")):
            return []
        if flow.has(S.MCP):
            return [self.issue(flow, detail="unsorted", sources=flow.of(S.MCP))]
        if self.owned_by(flow, (S.FS_ORDER, "PC302"), (S.UNORDERED, "PC301")):
            return []
        return [self.issue(flow, node=s.origin, detail="re-listed") for s in flow.of(S.MCP_CALL)
                if s.origin is not None and self.flow.turns.per_turn(s.origin)]

    def issues(self) -> list:
        """One report per listing: uses of the same unsorted ``list_tools()`` results (autogen's
        ``mcp_server_tools()`` returns them in three branches) are fixed by one ``sorted()`` where they are listed."""
        seen, out = set(), []
        for issue in super().issues():
            if issue.detail == "unsorted":
                origins = [s.origin for s in issue.sources if s.kind == S.MCP]
                listings = frozenset(map(id, origins)) if origins and None not in origins else None
                if listings is not None and listings in seen:
                    continue
                seen.add(listings)
            out.append(issue)
        return out

    def issue_message(self, issue) -> str:
        if issue.detail != "unsorted":
            return self.message.format(detail="again on every turn", slot=tools_label(issue.slot))
        origins = [s.origin for s in issue.sources if s.kind == S.MCP]
        where = {self._function_of(o) for o in origins if o is not None and not self.flow.turns.per_turn(o)
                 and self._stored(o)}
        if len(where) == 1 and len(origins) == 1 and None not in where:
            # camel's `connect()` lists once per connection and keeps the list: "list once" is done already
            return self.once_message.format(function=where.pop(), slot=tools_label(issue.slot))
        return self.message.format(detail="without sorting by name", slot=tools_label(issue.slot))

    once_message = (
        "{slot} comes from MCP list_tools() in {function}(), unsorted, in the order the server "
        "gives, which a reconnect or a new server version may change; tools render first, so that invalidates the "
        "whole prefix; sort by name where it is listed"
    )

    def _stored(self, node) -> bool:
        """The listing is kept on the object (``self._tools = (await s.list_tools()).tools``, or a name the
        method then stores there): positive evidence that it is made once, not on every request."""
        flow = self.flow
        for anc in flow.facts.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return False
            if isinstance(anc, (cst.Assign, cst.AnnAssign)):
                targets = [t.target for t in anc.targets] if isinstance(anc, cst.Assign) else [anc.target]
                if any(isinstance(t, (cst.Attribute, cst.Subscript)) and flow.code(t).startswith("self.") for t in targets):
                    return True
                names = {t.value for t in targets if isinstance(t, cst.Name)}
                func = next((a for a in flow.facts.ancestors(anc) if isinstance(a, cst.FunctionDef)), None)
                return func is not None and any(
                    any(flow.code(t.target).startswith("self.") for t in st.targets)
                    and any(n.value in names for n in descendants(st.value, cst.Name))
                    for st in descendants(func, cst.Assign))
        return False

    def _function_of(self, node) -> str | None:
        for anc in self.flow.facts.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return anc.name.value
        return None

    VALID = [
        # Issue 11 (Langchain-Chatchat, blind set 17): `list_tools()` of the app's own HTTP API client, typed as such,
        # is its tool registry, not an MCP listing.
        _OPENAI + "from .utils import ApiRequest\ndef list_tools(_api: ApiRequest):\n    return _api.list_tools() or {}\ndef chat(api: ApiRequest, q):\n    tools = list(list_tools(api).values())\n    return client.chat.completions.create(model='m', tools=tools, messages=[q])\n",
        _CLAUDE + "class A:\n    async def connect(self, s):\n        listed = await s.list_tools()\n        self.tools = [{'name': t.name} for t in sorted(listed.tools, key=lambda t: t.name)]\n    async def ask(self, m):\n        return client.messages.create(model='m', tools=self.tools, messages=m)\n",
        _CLAUDE + "async def names(s):\n    return [t.name for t in (await s.list_tools()).tools]\n",
        _CLAUDE + "TOOLS = [{'name': 'a'}]\nasync def ask(s, m):\n    await s.list_tools()\n    return client.messages.create(model='m', tools=TOOLS, messages=m)\n",
        # Listed once before the turn loop: only the loop body is the per-turn path.
        _CLAUDE + "async def agent(session, questions):\n    listed = await session.list_tools()\n    tools = sorted(({'name': t.name} for t in listed.tools), key=lambda t: t['name'])\n    history = []\n    for q in questions:\n        history.append({'role': 'user', 'content': q})\n        r = client.messages.create(model='m', tools=tools, messages=history)\n        history.append({'role': 'assistant', 'content': r.content})\n",
        # Issue 11 (agno's MCP test client): a tool-named method returning the tools' names, not definitions.
        _CLAUDE + "class Client:\n    async def list_tools(self):\n        result = await self.session.list_tools()\n        return [tool.name for tool in result.tools]\n",
        # Newcomer of stop 36: a client held in `self.conn`, set from a parameter typed with another module's class or
        # with this module's sorting wrapper, lists as that class does.
        _CLAUDE + "from .conn import Connection\nclass Agent:\n    def __init__(self, conn: Connection):\n        self.conn = conn\n    async def start(self):\n        self.tools = [{'name': t.name, 'input_schema': t.inputSchema} for t in await self.conn.list_tools()]\n    async def ask(self, history):\n        return client.messages.create(model='m', max_tokens=9, messages=history, tools=self.tools)\n",
        _CLAUDE + "from mcp import ClientSession\nclass SortingClient:\n    def __init__(self, session: ClientSession):\n        self.session = session\n    async def list_tools(self):\n        return sorted((await self.session.list_tools()).tools, key=lambda t: t.name)\nclass Agent:\n    def __init__(self, mcp: SortingClient):\n        self.mcp = mcp\n    async def setup(self):\n        self.tools = [{'name': t.name} for t in await self.mcp.list_tools()]\n    async def ask(self, history):\n        return client.messages.create(model='m', max_tokens=9, messages=history, tools=self.tools)\n",
        # Issue 11 (letta, blind set 28): a client's own `list_tools` handing on the listing's tools (dumped) is
        # the listing: a caller's `x.list_tools()` is reported where it is sent, not this method too.
        _CLAUDE + "class MCPClient:\n    async def list_tools(self, serialize=False):\n        response = await self.session.list_tools()\n        if serialize:\n            return [tool.model_dump() for tool in response.tools]\n        return response.tools\n",
        # Review (s26): an own wrapper that sorts by name, on an instance made in the expression, listed once.
        _CLAUDE + "class MCPClient:\n    def __init__(self, session):\n        self.session = session\n    async def list_tools(self):\n        listed = await self.session.list_tools()\n        return sorted(listed.tools, key=lambda t: t.name)\nasync def agent(session, questions):\n    tools = await MCPClient(session).list_tools()\n    history = []\n    for q in questions:\n        history.append({'role': 'user', 'content': q})\n        r = await client.messages.create(model='m', max_tokens=9, messages=history, tools=[{'name': t.name} for t in tools])\n        history.append({'role': 'assistant', 'content': r.content})\n",
    ]
    INVALID = [
        # Second review of stop 33: a parameter typed `Any` is no evidence that it is not an MCP session.
        Invalid(_CLAUDE + "from typing import Any\nasync def ask(session: Any, m):\n    tools = [{'name': t.name} for t in (await session.list_tools()).tools]\n    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=m)\n", line=6),
        # The same method returning definitions built from the listing is a tool builder.
        Invalid(_CLAUDE + "class Client:\n    async def list_tools(self):\n        result = await self.session.list_tools()\n        return [{'name': tool.name, 'input_schema': tool.inputSchema} for tool in result.tools]\n", line=6),
        # Review of blind set 28: an own list_tools that builds tool objects from the listing (skyvern's overlays),
        # or merges the listings of several servers in completion order, makes the tool list: reported there.
        Invalid(_CLAUDE + "from mcp.types import Tool\nclass Adapter:\n    async def list_tools(self, run_context=None, agent=None):\n        raw = await self._client.list_tools()\n        return [Tool(name=self.alias.get(t.name, t.name), inputSchema=t.inputSchema) for t in raw if t.name in self.allowed]\n", line=7),
        Invalid(_CLAUDE + "import asyncio\nclass MultiClient:\n    async def list_tools(self):\n        done, _ = await asyncio.wait([s.list_tools() for s in self.sessions])\n        return [t for d in done for t in d.result().tools]\n", line=7),
        Invalid(_CLAUDE + "class Client:\n    async def list_tools(self):\n        response = await self.session.list_tools()\n        return [dict(name=t.name, input_schema=t.inputSchema) for t in response.tools]\n", line=6),
        Invalid(_CLAUDE + "import asyncio\nclass MultiClient:\n    async def list_tools(self):\n        tools = []\n        for fut in asyncio.as_completed([s.list_tools() for s in self.sessions]):\n            response = await fut\n            tools.extend(response.tools)\n        return tools\n", line=10),
        Invalid(_CLAUDE + "async def ask(s, m):\n    return client.messages.create(model='m', messages=m,\n        tools=[{'name': t.name} for t in (await s.list_tools()).tools])\n", line=5),
        Invalid(_CLAUDE + "async def ask(s, m):\n    listed = await s.list_tools()\n    tools = sorted(listed.tools, key=lambda t: t.name)\n    return client.messages.create(model='m', tools=tools, messages=m)\n", line=4),
        Invalid(_CLAUDE + "class A:\n    async def connect(self, s):\n        self.tools = (await s.list_tools()).tools\n    async def ask(self, m):\n        return client.messages.create(model='m', tools=self.tools, messages=m)\n", line=7),
        # An app's own wrapper over the SDK's listing, on an instance made here or at module level: the call is
        # followed into what the method returns (an own registry's list_tools() is VALID in PC306's cases).
        Invalid(_CLAUDE + "class MCPClient:\n    def __init__(self, session):\n        self.session = session\n    async def list_tools(self):\n        return (await self.session.list_tools()).tools\nasync def ask(session, m):\n    tools = await MCPClient(session).list_tools()\n    return client.messages.create(model='m', messages=m, tools=[{'name': t.name} for t in tools])\n", line=10),
        Invalid(_CLAUDE + "class MCPClient:\n    async def list_tools(self):\n        return (await self.session.list_tools()).tools\nMCP = MCPClient()\nasync def ask(m):\n    tools = await MCP.list_tools()\n    return client.messages.create(model='m', messages=m, tools=[{'name': t.name} for t in tools])\n", line=9),
        Invalid(_CLAUDE + "async def agent(session, questions):\n    history = []\n    for q in questions:\n        listed = await session.list_tools()\n        tools = sorted(listed.tools, key=lambda t: t.name)\n        history.append({'role': 'user', 'content': q})\n        client.messages.create(model='m', tools=tools, messages=history)\n", line=6),
    ]
