"""Data-flow findings (PC101-PC105) name every source that reaches the slot, with its line, and a
``# noqa: <code>`` on a source's line silences it; the finding stays where the value enters the slot."""

from __future__ import annotations

import json

from lint_support import lint_text

from lint_rules.volatile import PerRequestDataInSystemPrompt, VolatileInSystemPrompt
from lint_rules.volatile_blocks import VolatileBeforeCacheBreakpoint, VolatileInToolDefinition, VolatilePromptCacheKey
from promptcache.lint.source_refs import SourcedMessage, SourceRef, join_capped

# The report of issue 2: the value is built on line 16 and sent on line 20.
ACME = """\
\"\"\"Support assistant for ACME.\"\"\"

import uuid
from datetime import datetime

import anthropic

client = anthropic.Anthropic()

RULES = "Answer in two sentences."


def ask(question: str):
    # The system prompt carries the time and a request id (the mistake).
    model = "claude-sonnet-4-5"
    system = f"You help ACME. Now: {{datetime.now().isoformat()}}. Request {{uuid.uuid4()}}."{noqa16}
    messages = [{{"role": "user", "content": question}}]
    print(RULES)
    # one request per question
    return client.messages.create(model=model, system=system, messages=messages){noqa20}
"""


def acme(noqa16: str = "", noqa20: str = "") -> str:
    return ACME.format(noqa16=noqa16, noqa20=noqa20)


def only(code: str, rule):
    findings = lint_text(code, [rule])
    assert len(findings) == 1, findings
    return findings[0]


def test_the_finding_stays_at_the_slot_and_names_every_source_with_its_line():
    finding = only(acme(), VolatileInSystemPrompt)
    assert (finding.line, finding.column) == (20, 55)
    assert finding.message.startswith(
        "`datetime.datetime.now()` (line 16) and `uuid.uuid4()` (line 16) reach system=: the prompt prefix changes "
        "on every request"
    )
    assert finding.message.endswith("move the values into the final user message")


def test_noqa_on_the_source_line_or_the_reported_line_silences_it():
    assert lint_text(acme(noqa16="  # noqa: PC101"), [VolatileInSystemPrompt]) == []
    assert lint_text(acme(noqa16="  # noqa: PC102, PC101"), [VolatileInSystemPrompt]) == []
    assert lint_text(acme(noqa20="  # noqa: PC101"), [VolatileInSystemPrompt]) == []
    assert lint_text(acme(noqa20="  # noqa"), [VolatileInSystemPrompt]) == []


def test_a_bare_noqa_or_another_code_on_the_source_line_does_not():
    """A bare ``# noqa`` on the source's line may be meant for another linter (flake8-datetimez's DTZ005)."""
    assert len(lint_text(acme(noqa16="  # noqa"), [VolatileInSystemPrompt])) == 1
    assert len(lint_text(acme(noqa16="  # noqa: DTZ005"), [VolatileInSystemPrompt])) == 1
    assert len(lint_text(acme(noqa16="  # noqa: PC102"), [VolatileInSystemPrompt])) == 1


def test_the_cli_honours_noqa_at_the_source(write_tree, run_cli):
    root = write_tree({"app.py": acme(), "quiet.py": acme(noqa16="  # noqa: PC101")})
    code, out, _ = run_cli("lint", root, "--output-format", "json", "--select", "PC1")
    found = json.loads(out)
    assert code == 1
    assert [(f["path"].rsplit("/", 1)[-1], f["code"], f["line"]) for f in found] == [("app.py", "PC101", 20)]
    assert "`uuid.uuid4()` (line 16)" in found[0]["message"]


SPLIT = (
    "import uuid\nfrom datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"  # 1-4
    "def ask(q):\n"  # 5
    "    stamp = datetime.now().isoformat(){noqa}\n"  # 6
    "    rid = uuid.uuid4().hex\n"  # 7
    "    system = f'Now {{stamp}}. Request {{rid}}.'\n"  # 8
    "    return client.messages.create(model='m', system=system, messages=[])\n"  # 9
)


def test_a_silenced_source_leaves_the_others_reported():
    finding = only(SPLIT.format(noqa=""), VolatileInSystemPrompt)
    assert finding.line == 9
    assert finding.message.startswith("`datetime.datetime.now()` (line 6) and `uuid.uuid4()` (line 7) reach system=")
    finding = only(SPLIT.format(noqa="  # noqa: PC101"), VolatileInSystemPrompt)
    assert finding.line == 9
    assert finding.message.startswith("`uuid.uuid4()` (line 7) reaches system=:")
    assert finding.message.endswith("move the value into the final user message")


def test_a_source_on_the_reported_line_gets_no_line_and_the_list_is_capped():
    code = (
        "import os, time, uuid, random\nfrom datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "def ask(q):\n    return client.messages.create(model='m', messages=[], "
        "system=f'{datetime.now()} {time.time()} {uuid.uuid4()} {random.random()} {os.getpid()}')\n"
    )
    finding = only(code, VolatileInSystemPrompt)
    assert finding.message.startswith(
        "`datetime.datetime.now()`, `time.time()`, `uuid.uuid4()` and 2 more reach system=: "
    )


def test_a_variable_carrying_a_source_is_named_by_the_source():
    """``self.session_id = uuid.uuid4().hex``: the source is the uuid, and a noqa belongs on its line."""
    code = (
        "import uuid\nfrom openai import OpenAI\nclient = OpenAI()\n"  # 1-3
        "class Chat:\n"  # 4
        "    def __init__(self):\n"  # 5
        "        self.session_id = uuid.uuid4().hex{noqa}\n"  # 6
        "        self.messages = [{{'role': 'system', 'content': f'Session {{self.session_id}}'}}]\n"  # 7
        "    def ask(self):\n        return client.chat.completions.create(model='m', messages=self.messages)\n"
    )
    finding = only(code.format(noqa=""), VolatileInSystemPrompt)
    assert finding.line == 7
    # set in __init__ only: it changes once per object (a Chat per session), which the message says
    assert finding.message.startswith("`uuid.uuid4()` (line 6) reaches the system message once per object (set in __init__):")
    assert lint_text(code.format(noqa="  # noqa: PC101"), [VolatileInSystemPrompt]) == []


def test_a_source_inside_a_helper_is_named_at_its_line():
    code = (
        "from datetime import date\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "def today():\n    return date.today().isoformat(){noqa}\n"  # 4-5
        "def ask(q):\n    return client.messages.create(model='m', system=f'Today is {{today()}}.', messages=[])\n"  # 6-7
    )
    finding = only(code.format(noqa=""), VolatileInSystemPrompt)
    assert finding.line == 7
    assert finding.message.startswith("`datetime.date.today()` (line 5) reaches system=")
    assert lint_text(code.format(noqa="  # noqa: PC101"), [VolatileInSystemPrompt]) == []


def test_a_source_in_a_triple_quoted_prompt_is_silenced_after_the_closing_quotes():
    code = (
        "from datetime import datetime\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "def ask(q):\n    system = f'''Be brief.\nNow: {{datetime.now()}}\nThanks.'''{noqa}\n"  # 5-7
        "    return client.messages.create(model='m', system=system, messages=[])\n"  # 8
    )
    finding = only(code.format(noqa=""), VolatileInSystemPrompt)
    assert (finding.line, finding.message.split(" reaches")[0]) == (8, "`datetime.datetime.now()` (line 6)")
    assert lint_text(code.format(noqa="  # noqa: PC101"), [VolatileInSystemPrompt]) == []


def test_pc102_names_every_identity_and_parameter_of_the_slot():
    code = (
        "import anthropic\nclient = anthropic.Anthropic()\n"
        "def ask(user, doc, q):\n"  # 3
        "    return client.messages.create(model='m', messages=[],\n"  # 4
        "        system=f'Help {user.name} on the {user.plan} plan. Use {doc}.')\n"  # 5
    )
    finding = only(code, PerRequestDataInSystemPrompt)
    assert finding.line == 5
    assert finding.message.startswith(
        "`user.name`, `user.plan` and the per-request parameter `doc` (line 3) reach system=: each user or call"
    )
    # a noqa on one source's line leaves the others
    finding = only(code.replace("def ask(user, doc, q):", "def ask(user, doc, q):  # noqa: PC102"), PerRequestDataInSystemPrompt)
    assert finding.message.startswith("`user.name` and `user.plan` reach system=")


def test_pc103_pc104_pc105_name_their_sources():
    pc103 = only(
        "import anthropic\nclient = anthropic.Anthropic()\nDOC = open('d.md').read()\n"
        "def ask(account, q):\n    header = f'Account {account.account_id} on {account.plan}'\n"  # 4-5
        "    return client.messages.create(model='m', messages=[{'role': 'user', 'content': [\n"  # 6
        "        {'type': 'text', 'text': header},\n"  # 7
        "        {'type': 'text', 'text': DOC, 'cache_control': {'type': 'ephemeral'}}]}])\n",
        VolatileBeforeCacheBreakpoint,
    )
    assert pc103.line == 7
    assert pc103.message.startswith(
        "`account.account_id` (line 5) and `account.plan` (line 5) are in a block at or before the last "
        "cache_control breakpoint"
    )
    assert "only hits for the same values; move the values after the last breakpoint" in pc103.message
    pc104 = only(
        "import os\nfrom datetime import date\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "def ask(q):\n    tools = [{'name': 'book', 'description': f'Today is {date.today()} in {os.environ[\"REGION\"]}.'}]\n"
        "    return client.messages.create(model='m', tools=tools, messages=[])\n",
        VolatileInToolDefinition,
    )
    # Issue 11: an environment variable is per process, not per request, so it is not named as a source.
    assert pc104.message.startswith("`datetime.date.today()` is inside a tool definition:")
    code = (
        "from openai import OpenAI\nclient = OpenAI()\n"
        "def ask(request, q):\n    request_id = request.headers.get('x-request-id'){noqa}\n"  # 3-4
        "    return client.responses.create(model='m', input=q, prompt_cache_key=f'help-{{request_id}}')\n"  # 5
    )
    pc105 = only(code.format(noqa=""), VolatilePromptCacheKey)
    assert pc105.line == 5
    assert pc105.message.startswith("prompt_cache_key is built from `request.headers.get('x-request-id')` (line 4): ")
    assert lint_text(code.format(noqa="  # noqa: PC105"), [VolatilePromptCacheKey]) == []


def test_rendering_joins_groups_lines_and_caps():
    assert join_capped([]) == ""
    assert join_capped(["`a`"]) == "`a`"
    assert join_capped(["`a`", "`b`", "`c`"]) == "`a`, `b` and `c`"
    assert join_capped(["`a`", "`b`", "`c`", "`d`", "`e`"]) == "`a`, `b`, `c` and 2 more"
    a, b = SourceRef("`request_id`", None, (0, 1)), SourceRef("`now()`", None, (0, 0))
    message = SourcedMessage("{sources} {reach} {slot}; move the {value}", {"slot": "system="}, (a, b))
    assert message.render([(a, 3), (a, 5), (a, 9), (b, None)], 9) == "`now()` and `request_id` (lines 3 and 5) reach system=; move the values"
    assert message.render([(a, 9)], 9) == "`request_id` reaches system=; move the value"


def test_a_with_binding_after_the_read_is_not_a_source():
    # Issue 11 (cognee, blind set 17): `with open(out_file, "w") as file` after `json.load(file)` of the questions
    # does not reach them: only the input file is named; a `for` target after the read is the same.
    code = (
        "import json\nfrom openai import OpenAI\nclient = OpenAI()\n"
        "def answer(qa_file, out_file=None):\n"
        "    with open(qa_file) as file:\n"
        "        qa = json.load(file)\n"
        "    for q in qa:\n"
        "        client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': f'Use {q}'}])\n"
        "    if out_file:\n"
        "        with open(out_file, 'w') as file:\n"
        "            file.write('done')\n"
        "        for file in [out_file]:\n"
        "            print(file)\n"
    )
    finding = only(code, PerRequestDataInSystemPrompt)
    assert finding.line == 8
    assert finding.message.startswith("the per-request parameter `qa_file` (line 4) reaches the system message:")


def test_an_mcp_listing_kept_from_connect_names_where_to_sort():
    # Issue 11 (camel, blind set 12): listed in `connect()` and kept; "list once" is done already, so the message
    # says where the listing is and to sort it there. A listing in the request handler keeps the first wording.
    from lint_rules.mcp_listing import McpToolsUnsorted

    code = (
        "import anthropic\nclient = anthropic.Anthropic()\n"
        "class Client:\n"
        "    async def connect(self, session):\n"
        "        self._tools = (await session.list_tools()).tools\n"
        "    def get_tools(self):\n"
        "        return [{'name': t.name} for t in self._tools]\n"
        "    def ask(self, m):\n"
        "        return client.messages.create(model='m', max_tokens=9, tools=self.get_tools(), messages=m)\n"
    )
    finding = only(code, McpToolsUnsorted)
    assert finding.message.startswith("tools= comes from MCP list_tools() in connect(), unsorted, in the order the server gives")
    handler = (
        "import anthropic\nclient = anthropic.Anthropic()\n"
        "async def ask(session, m):\n"
        "    tools = [{'name': t.name} for t in (await session.list_tools()).tools]\n"
        "    return client.messages.create(model='m', max_tokens=9, tools=tools, messages=m)\n"
    )
    assert only(handler, McpToolsUnsorted).message.startswith("tools= comes from MCP list_tools() without sorting by name")


def test_a_user_beside_a_clock_is_reported_by_both_rules():
    # Newcomer (stop 33): a date and the customer's name in one system prompt are two problems: PC101 names the
    # date, PC102 the name. A parameter named as an id (`session_id`) is the clock's alone.
    code = (
        "from datetime import date\nimport anthropic\nclient = anthropic.Anthropic()\n"
        "def reply(customer_name, history, q):\n"
        "    system = f'Help. Today is {date.today()}. The customer is {customer_name}.'\n"
        "    return client.messages.create(model='m', max_tokens=9, system=system, messages=history + [q])\n"
        "def session(session_id, history, q):\n"
        "    return client.messages.create(model='m', max_tokens=9, system=f'Session {session_id}', messages=history + [q])\n"
    )
    found = [(f.code, f.line, f.message.split(" reach")[0]) for f in lint_text(code, [VolatileInSystemPrompt, PerRequestDataInSystemPrompt])]
    assert found == [("PC101", 6, "`datetime.date.today()` (line 5)"),
                     ("PC102", 6, "`customer_name` (line 5)"),  # an identity by its name (newcomer helper-88)
                     ("PC101", 8, "`session_id`")]


def test_an_unordered_tool_list_is_named_by_where_it_is_passed():
    # Stop 39's open list: `.bind_tools(list(set(...)))` and a table-mapped `tool_specs=` said "tools=".
    from lint_rules.ordering import ToolsFromUnorderedCollection
    from promptcache.lint.config import LintConfig
    from promptcache.lint.extra_sinks import parse_entry

    code = ("from langchain_openai import ChatOpenAI\n"
            "def run(q, registry):\n"
            "    llm = ChatOpenAI(model='gpt-4o').bind_tools(list(set(registry)))\n"
            "    return llm.invoke([('system', 'Be brief.'), ('human', q)])\n")
    assert only(code, ToolsFromUnorderedCollection).message.startswith(
        "the list passed to bind_tools() comes from set() without sorted(): set order varies")
    # a wrapper's own option, mapped by an extra-sinks table, by its name
    wrapper = ("from openai import OpenAI\n"
               "def run(client, q, registry):\n"
               "    return client.complete(tool_specs=list(set(registry)), messages=[q])\n")
    config = LintConfig(extra_sinks=(parse_entry({"call": "*.complete", "tools": "tool_specs", "messages": "messages"}),))
    findings = lint_text(wrapper, [ToolsFromUnorderedCollection], config=config)
    assert [f.message.split(" without")[0] for f in findings] == ["tool_specs= comes from set()"]
