"""Taint propagation of the shared data-flow helpers, one construct at a time (lint-rules.md list).

Each snippet builds ``system`` inside ``ask()`` and sends it as ``system=``; the
test checks whether PC101 (a volatile value in the system prompt) is reported.
"""

from __future__ import annotations

import textwrap

import pytest
from lint_support import lint_text

HEAD = """\
import textwrap, time, uuid, random, json
from datetime import datetime, date
import datetime as dt
from uuid import uuid4 as make_id
import anthropic
client = anthropic.Anthropic()
"""


def pc101(body: str, prelude: str = "") -> bool:
    code = HEAD + textwrap.dedent(prelude) + "def ask(q):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    code += "    return client.messages.create(model='m', system=system, messages=[{'role': 'user', 'content': q}])\n"
    return any(f.code == "PC101" for f in lint_text(code))


@pytest.mark.parametrize(
    "body",
    [
        "system = f'Now {datetime.now()}'\n",
        "now = datetime.now()\nsystem = 'Now ' + str(now)\n",
        "a, b = time.time(), 1\nsystem = f'{a}'\n",
        "if (t := time.time()):\n    pass\nsystem = f'{t}'\n",
        "system = 'At %s' % time.ctime()\n",
        "system = 'At {}'.format(date.today())\n",
        "system = ' '.join(['At', str(uuid.uuid4())])\n",
        "system = textwrap.dedent(f'''\\\n    At {dt.datetime.now()}''')\n",
        "parts = ['Rules']\nparts.append(str(make_id()))\nsystem = '\\n'.join(parts)\n",
        "parts = []\nparts.extend([str(random.random())])\nsystem = ''.join(parts)\n",
        "parts = ['a']\nparts.insert(0, time.strftime('%H'))\nsystem = parts[0]\n",
        "meta = {'stamp': time.time()}\nsystem = f\"{meta['stamp']}\"\n",
        "system = f'{datetime.now()}' if q else 'static'\n",
        "system = 'Rules'\nsystem += f' at {time.time()}'\n",
        "session_id = q.session\nsystem = f'Session {session_id}'\n",
        "system = stamp_prompt('Rules')\n",
        "system = Builder().build()\n",
    ],
)
def test_volatile_reaches(body):
    prelude = """\
    def stamp_prompt(base):
        return f'{base} @ {datetime.utcnow()}'
    class Builder:
        def __init__(self):
            self.stamp = uuid.uuid4().hex
        def build(self):
            return f'Rules {self.stamp}'
    """
    if "Builder" in body:
        code = HEAD + textwrap.dedent(prelude) + "class Bot(Builder):\n    def ask(self, q):\n        return client.messages.create(model='m', system=self.build(), messages=[])\n"
        assert any(f.code == "PC101" for f in lint_text(code))
    else:
        assert pc101(body, prelude)


@pytest.mark.parametrize(
    "body",
    [
        "system = 'Rules'\nstarted = time.time()\n",
        "system = f'Question at {len(q)}'\n",
        "system = 'At %s' % 'noon'\n",
        "system = time.strftime('%H:%M', (2024, 1, 1, 0, 0, 0, 0, 1, -1))\n",
        "t = time.time()\nsystem = 'Rules' if t else 'Other'\n",
        "parts = ['Rules']\nparts.append('More')\nsystem = '\\n'.join(parts)\n",
    ],
)
def test_no_volatile(body):
    assert not pc101(body)


def test_async_await_and_returns_through_two_functions():
    code = HEAD + textwrap.dedent(
        """\
        async def stamp():
            return f'{datetime.now()}'
        def outer(x):
            return inner(x)
        def inner(y):
            return 'Rules ' + y
        async def ask(q):
            s = await stamp()
            return await client.messages.create(model='m', system=outer(s), messages=[])
        """
    )
    assert [f.code for f in lint_text(code)] == ["PC101"]


def test_per_request_needs_static_text_and_the_sink_function():
    wrapper = HEAD + "def call(system, q):\n    return client.messages.create(model='m', system=system, messages=[q])\n"
    templated = HEAD + "def call(topic, q):\n    return client.messages.create(model='m', system='Answer about ' + topic, messages=[q])\n"
    helper_param = HEAD + (
        "def make(topic):\n    return f'Answer about {topic}'\nSYSTEM = make('tax')\n"
        "def call(q):\n    return client.messages.create(model='m', system=SYSTEM, messages=[q])\n"
    )
    assert lint_text(wrapper) == []
    assert [f.code for f in lint_text(templated)] == ["PC102"]
    assert lint_text(helper_param) == []


def test_one_problem_one_finding():
    code = HEAD + "SYSTEM_PROMPT = f'Rules {datetime.now()}'\ndef ask(q):\n    return client.messages.create(model='m', system=SYSTEM_PROMPT, messages=[])\n"
    findings = lint_text(code)
    assert [(f.code, f.line) for f in findings] == [("PC101", 7)]  # at the constant, not again at system=


def test_a_slot_inside_a_prompt_named_constant_reports_once_at_the_inner_slot():
    code = (
        "from datetime import datetime\nfrom langchain_core.prompts import ChatPromptTemplate\n"
        "prompt2 = ChatPromptTemplate.from_messages([\n"
        "    ('system', f'You are a travel agent. Now: {datetime.now()}'),\n"
        "    ('human', '{question}'),\n])\n"
    )
    assert [(f.code, f.line, f.column) for f in lint_text(code)] == [("PC101", 4, 48)]


def test_twilio_is_not_a_sink():
    code = HEAD + "from twilio.rest import Client\nsms = Client()\ndef send(to):\n    return sms.messages.create(to=to, body=f'{datetime.now()}')\n"
    assert lint_text(code) == []


def test_format_on_a_prompt_constant_is_a_template():
    code = HEAD + "TEMPLATE = 'You help {name} with taxes.'\ndef ask(name, q):\n    return client.messages.create(model='m', system=TEMPLATE.format(name=name), messages=[q])\n"
    assert [f.code for f in lint_text(code)] == ["PC102"]


def test_response_format_is_a_prefix_slot():
    code = (
        "from openai import OpenAI\nimport time\nclient = OpenAI()\n"
        "def ask(q):\n    return client.chat.completions.create(model='m', messages=[q],\n"
        "        response_format={'type': 'json_schema', 'json_schema': {'name': f'v{time.time()}'}})\n"
    )
    assert [(f.code, f.line) for f in lint_text(code)] == [("PC101", 6)]


def test_a_prompt_module_that_also_passes_the_prefilter_keeps_its_constants():
    code = "import time\nPREAMBLE = f'Started {time.time()}'\nNOTE = 'cache_control is set by the caller'\n"
    assert lint_text(code) == []
    assert [f.code for f in lint_text(code, prompt_module=True)] == ["PC101"]


def test_window_copied_into_the_sent_list_is_a_sliding_window():
    code = HEAD + (
        "def turn(history, text):\n"
        "    messages = [{'role': 'system', 'content': 'Help.'}] + history[-10:]\n"
        "    return client.messages.create(model='m', messages=messages)\n"
        "def guarded(history, text):\n"
        "    recent = history[-10:] if len(history) > 50 else history\n"
        "    return client.messages.create(model='m', messages=recent)\n"
    )
    assert [(f.code, f.line) for f in lint_text(code)] == [("PC203", 8)]


def test_pc201_names_the_summarising_helper_and_the_direct_call():
    code = HEAD + (
        "def recap_chat(history):\n"
        "    return client.messages.create(model='m', messages=history + [{'role': 'user', 'content': 'Summarize our conversation.'}])\n"
        "def turn(history, text):\n"
        "    history[:] = [{'role': 'user', 'content': recap_chat(history)}]\n"
        "    return client.messages.create(model='m', messages=history)\n"
        "def loop(history):\n"
        "    while True:\n"
        "        client.messages.create(model='m', messages=history + [{'role': 'user', 'content': 'Summarize this chat.'}])\n"
    )
    found = [(f.line, f.message.split(" rewrites ")[0]) for f in lint_text(code) if f.code == "PC201"]
    assert found == [
        (10, "recap_chat() (an LLM call asking for a summary)"),
        (14, "client.messages.create() asking for a summary"),
    ]


def test_field_taint_is_memoised_on_long_rebinding_chains():
    """Issue 11 review: following every binding of a name again at each occurrence made this take minutes at 12
    links (exponential); memoised per (node, scope, field) it is linear, and the clock is still found."""
    links = "".join(f"    cfg = opts.get('c{i}') or cfg\n" for i in range(40))
    code = ("import anthropic\nfrom datetime import datetime\nfrom .config import Config\nclient = anthropic.Anthropic()\n"
            "def ask(q, opts):\n    cfg = Config(system=f'{datetime.now()}')\n" + links
            + "    return client.messages.create(model='m', system=cfg.system, messages=[])\n")
    assert [f.code for f in lint_text(code)] == ["PC101"]


@pytest.mark.parametrize(
    ("value", "changes", "severity"),
    [
        ("{date.today()}", "once a day", "warning"),
        ("{datetime.now():%Y-%m-%d}", "once a day", "warning"),
        ("{datetime.now().astimezone().strftime('%A %d %B')}", "once a day", "warning"),
        ("{datetime.now().date()}", "once a day", "warning"),
        # newcomer helper-88: an hourly clock was said to change "on every request"
        ("{datetime.now().strftime('%H')}", "once an hour", "warning"),
        ("{datetime.now():%Y-%m-%d %H:00}", "once an hour", "warning"),
        ("{time.strftime('%I %p')}", "once an hour", "warning"),
        ("{datetime.now():%Y-%m-%d %H:%M}", "every minute", "error"),
        ("{datetime.now().strftime('%R')}", "every minute", "error"),
        ("{datetime.now():%H:%M:%S}", "on every request", "error"),
        ("{datetime.now():%H %Z}", "once an hour", "warning"),  # the zone is fixed per process (review helper-89)
        ("{datetime.now():%Y-%m-%d %%H}", "once a day", "warning"),  # `%%H` is the text "%H"
        ("{datetime.now()}", "on every request", "error"),
        # newcomer helper-90: the other ways code keeps part of a clock
        ("{datetime.now().hour}", "once an hour", "warning"),
        ("{datetime.now().minute}", "every minute", "error"),
        ("{datetime.now().second}", "on every request", "error"),
        ("{datetime.now().day}", "once a day", "warning"),
        ("{datetime.now().replace(minute=0, second=0, microsecond=0)}", "once an hour", "warning"),
        ("{datetime.now().replace(second=0, microsecond=0)}", "every minute", "error"),
        ("{datetime.now().replace(second=0)}", "on every request", "error"),
        ("{datetime.now().isoformat(timespec='hours')}", "once an hour", "warning"),
        ("{datetime.now().isoformat(timespec='seconds')}", "on every request", "error"),
        ("{'{:%H:%M}'.format(datetime.now())}", "every minute", "error"),
        ("{'{0:%Y-%m-%d} {0}'.format(datetime.now())}", "on every request", "error"),
        ("{int(time.time() // 3600)}", "once an hour", "warning"),
        ("{int(time.time() // 10)}", "on every request", "error"),
        # review helper-91: only a timestamp in seconds divided down keeps a coarser unit
        ("{time.time() // 3600}", "once an hour", "warning"),
        ("{int(datetime.now().timestamp()) // 60}", "every minute", "error"),
        ("{int(time.time_ns() // 1000000)}", "on every request", "error"),
        ("{uuid.uuid4().int // 100000}", "on every request", "error"),
        ("{random.randint(0, 10**9) // 3600}", "on every request", "error"),
        # review helper-93: the divisor is read in the timestamp's unit
        ("{int(time.time() * 1000) // 60000}", "every minute", "error"),
        ("{int(time.time() * 1000) // 3600}", "on every request", "error"),
        ("{time.time_ns() // 3_600_000_000_000}", "once an hour", "warning"),
        ("{time.time_ns() // 1_000_000 // 86_400_000}", "once a day", "warning"),
    ],
)
def test_a_clock_read_as_a_date_changes_once_a_day(value, changes, severity):
    # Issue 11: a date at day precision changes once a day; the message says so instead of "every request".
    code = HEAD + "import time\n" + f"def ask(q):\n    return client.messages.create(model='m', system=f'Today: {value}', messages=[q])\n"
    [finding] = lint_text(code)
    assert finding.code == "PC101"
    assert f"the prompt prefix changes {changes}" in finding.message
    assert finding.severity.value == severity


@pytest.mark.parametrize("value", ["{datetime.now().year}", "{datetime.now():%B %Y}", "{date.today().month}",
                                   "{time.strftime('%Y')}", "{'{:%Y}'.format(datetime.now())}"])
def test_a_clock_kept_to_the_month_or_the_year_is_not_reported(value):
    # newcomer helper-90: `%B %Y` was said to change "once a day"; a prefix that changes once a month costs one
    # cache write a month (caches live minutes to an hour): nothing to report
    code = HEAD + "import time\n" + f"def ask(q):\n    return client.messages.create(model='m', system=f'Year: {value}', messages=[q])\n"
    assert lint_text(code) == []


@pytest.mark.parametrize(
    ("value", "per_user"),
    [
        ("user.project_keys", True),
        ("[user_id]", True),
        ("[str(uuid.uuid4())]", False),
        ("[user_id, time.time()]", False),
    ],
)
def test_a_per_user_value_in_the_tools_is_a_warning_that_says_so(value, per_user):
    # Issue 11 (deer-flow, blind set 5): a user's value changes the tools between users, not between one user's calls.
    code = HEAD + ("def ask(q, user, user_id):\n    tools = [{'name': 'open', 'input_schema': {'type': 'object', 'properties': "
                   f"{{'p': {{'enum': {value}}}}}}}}}]\n    return client.messages.create(model='m', tools=tools, messages=[q])\n")
    [finding] = lint_text(code)
    assert finding.code == "PC104"
    assert (finding.severity.value, "each user gets tools of their own" in finding.message) == \
        (("warning", True) if per_user else ("error", False))


@pytest.mark.parametrize(
    ("tool", "reported"),
    [
        ("FunctionTool(func=handler.run, openai_tool_schema=SCHEMA)", False),  # the callable runs, the schema is sent
        ("FunctionTool(func=handler.run, args_schema=SCHEMA, description='Search.')", False),
        ("FunctionTool(func=handler.run, openai_tool_schema=None)", True),  # no schema: derived from the callable
        ("FunctionTool(func=handler.run)", True),
        ("FunctionTool(func=handler.run, output_schema=SCHEMA)", True),  # an output schema is no tool definition
        ("FunctionTool(handler.run, openai_tool_schema=SCHEMA)", True),  # positional arguments are kept
        ("FunctionTool(func=handler.run, name=f'search_{sid}', openai_tool_schema=SCHEMA)", True),
        ("FunctionTool(func=handler.run, openai_tool_schema={'name': f'search_{sid}'})", True),
        ("Handoff(tool_name=f'to_{sid}', input_json_schema=SCHEMA, on_invoke_handoff=handler.run)", True),
    ],
)
def test_a_tool_object_given_its_schema_sends_the_schema_not_its_callable(tool, reported):
    code = textwrap.dedent(f"""\
        import uuid
        from openai import OpenAI
        client = OpenAI()
        SCHEMA = {{'type': 'function', 'function': {{'name': 'search', 'parameters': {{}}}}}}
        def ask(session, q):
            sid = str(uuid.uuid4())[:8]
            handler = session.clone(sid)
            tool = {tool}
            return client.chat.completions.create(model='m', messages=[], tools=[tool.schema()])
        """)
    assert any(f.code == "PC104" for f in lint_text(code)) is reported


def test_a_builder_with_two_returns_of_one_source_is_reported_once():
    # R2R's _build_aware_system_instruction: one date read, returned on two paths; one fix, one report
    code = HEAD + ("def build_system_prompt(mode):\n    today = datetime.now().strftime('%m/%d/%Y')\n"
                   "    if mode == 'research':\n        return f'Research. Today: {today}'\n"
                   "    return f'Answer. Today: {today}'\n"
                   "def ask(q, mode):\n    return client.messages.create(model='m', system=build_system_prompt(mode), messages=[q])\n")
    found = lint_text(code)
    assert [(f.code, f.line) for f in found] == [("PC101", 10)]
