"""PC102 weighs a one-shot request's literal text (promptcache.lint.one_shot and request_size, settled in
cross_module).

open_deep_research (blind set 12): LangGraph nodes format a 150-500-token template from ``prompts.py`` with the
run's topic into a ``SystemMessage`` and send it with one fixed ``HumanMessage``. Below the model's minimum
cacheable length nothing is cached, so the finding is info and says so; a history, tools, a long template or a
template the run does not show keep the warning.
"""

from __future__ import annotations

import json
import textwrap

from promptcache.lint.one_shot import PER_REQUEST_CLAIM
from promptcache.lint.request_size import Size, measure

_HEAD = "import anthropic\nclient = anthropic.Anthropic()\nPOLICY = 'You help employees file expense reports.'\n"


def _one(run_cli, path, *extra):
    code, out, _ = run_cli("lint", str(path), "--output-format", "json", "--select", "PC102", *extra)
    return [(f["path"].rsplit("/", 1)[-1], f["line"], f["severity"], f["message"]) for f in json.loads(out)]


def _app(tmp_path, body: str, name: str = "app.py"):
    path = tmp_path / name
    path.write_text(_HEAD + textwrap.dedent(body))
    return path


def test_short_one_shot_request_is_info_with_its_size(tmp_path, run_cli):
    path = _app(tmp_path, """\
        def ask(q, user):
            return client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                system=f"{POLICY} You talk to {user.full_name}.", messages=[{"role": "user", "content": q}])
    """)
    [(_, line, severity, message)] = _one(run_cli, path, "--no-cache")
    assert (line, severity) == (6, "info")
    # POLICY (41 chars) + " You talk to " + "." = 55 characters: 13 tokens at 4 a token; Haiku 4.5's minimum is 4,096
    assert message == (
        "`user.full_name` reaches system=: at about 13 tokens this one-shot request is below the 4,096-token minimum "
        "cacheable length (claude-haiku-4-5), so it is not cached yet; put per-request data in the final user message "
        "before the prompt grows")
    assert PER_REQUEST_CLAIM not in message
    assert _one(run_cli, path) == _one(run_cli, path)  # the result cache keeps the weight (second run reads it)
    assert _one(run_cli, path)[0][2] == "info"


def test_history_tools_or_a_long_prompt_keep_the_warning(tmp_path, run_cli):
    history = _app(tmp_path, """\
        def ask(q, user, history):
            return client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                system=f"{POLICY} You talk to {user.full_name}.", messages=[*history, {"role": "user", "content": q}])
    """, "history.py")
    tools = _app(tmp_path, """\
        def ask(q, user, tools):
            return client.messages.create(model="claude-haiku-4-5", max_tokens=9, tools=tools,
                system=f"{POLICY} You talk to {user.full_name}.", messages=[{"role": "user", "content": q}])
    """, "tools.py")
    long = _app(tmp_path, """\
        def ask(q, user):
            return client.messages.create(model="claude-sonnet-4-5", max_tokens=9,
                system=f"{LONG} You talk to {user.full_name}.", messages=[{"role": "user", "content": q}])
    """.replace("{LONG}", "x" * (4 * 1024 + 8)), "long.py")
    read = _app(tmp_path, """\
        def ask(q, user):
            rules = open("rules.md").read()
            return client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                system=f"{rules} You talk to {user.full_name}.", messages=[{"role": "user", "content": q}])
    """, "read.py")
    registry = _app(tmp_path, """\
        from .registry import get_prompt
        def ask(q, user):
            return client.messages.create(model="claude-haiku-4-5", max_tokens=9,
                system=get_prompt("expenses") + f" You talk to {user.full_name}.", messages=[{"role": "user", "content": q}])
    """, "registry.py")
    for path in (history, tools, long, read, registry):
        [(_, _, severity, message)] = _one(run_cli, path, "--no-cache")
        assert severity == "warning", path.name
        assert PER_REQUEST_CLAIM in message


PROMPTS = 'PLANNER = """You plan a report on {topic}.\nWrite {n} sections."""\n'
STATE = "from pydantic import BaseModel\nclass Plan(BaseModel):\n    sections: list[str]\n"
GRAPH = textwrap.dedent("""\
    from langchain.chat_models import init_chat_model
    from langchain_core.messages import HumanMessage, SystemMessage
    from .prompts import PLANNER
    from .state import Plan

    async def plan(state, config):
        model = init_chat_model(model=config["model"]).with_structured_output(Plan)
        system = PLANNER.format(topic=state["topic"], n=5)
        return await model.ainvoke([SystemMessage(content=system), HumanMessage(content="Plan the report.")])
""")


def test_template_from_another_module_is_weighed_when_the_run_shows_it(write_tree, run_cli):
    root = write_tree({"app/__init__.py": "", "app/prompts.py": PROMPTS, "app/state.py": STATE, "app/graph.py": GRAPH})
    [(name, line, severity, message)] = _one(run_cli, root, "--no-cache")
    assert (name, line, severity) == ("graph.py", 9, "info")
    # PLANNER's 49 characters + "Plan the report." (16) + Plan's class source (47, its newline included) = 112: 28 tokens, below 512 (the
    # smallest minimum of the Anthropic, OpenAI, Gemini and Bedrock models in the providers data)
    assert "at about 28 tokens this one-shot request is below the 512-token minimum cacheable length (no model named" \
        in message
    # linted alone, graph.py cannot see PLANNER's text: the warning stands
    [(_, _, severity, _)] = _one(run_cli, root / "app" / "graph.py", "--no-cache")
    assert severity == "warning"


def test_bind_tools_keeps_the_warning(write_tree, run_cli):
    graph = GRAPH.replace(".with_structured_output(Plan)", ".bind_tools(TOOLS)")
    root = write_tree({"app/__init__.py": "", "app/prompts.py": PROMPTS, "app/state.py": STATE, "app/graph.py": graph})
    [(_, _, severity, _)] = _one(run_cli, root, "--no-cache")
    assert severity == "warning"


def test_measure_counts_literals_through_names_format_and_branches(tmp_path):
    import libcst as cst

    from promptcache.lint.index import Indexer
    from promptcache.lint.walk import TreeFacts, walk

    source = textwrap.dedent("""\
        import string
        from .prompts import BASE
        A = "abcd"
        def f(p, flag):
            x = A + "ef"
            x += f"{p.name}gh"
            y = "long text" if flag else "s"
            return "-".join([x, y, BASE.format(p=p)])
    """)
    module = cst.parse_module(source)
    indexer = Indexer()
    walk(module, [indexer], TreeFacts())
    index = indexer.index
    func = next(s for s in index.scopes if s.name == "f")
    [ret] = func.returns
    # "-" + ("abcd" + "ef" + "gh") + "long text" (the longer arm) + BASE from .prompts
    assert measure(index, ret, func) == Size(1 + 8 + 9, frozenset({".prompts.BASE"}))
    # a call the module does not define is unknown text as the prompt itself, and 0 as a value filled into one,
    # unless it fetches text by a literal key or by its name (a prompt registry, `load_rules()`)
    today = cst.parse_expression("today()")
    assert measure(index, today, func) is None
    assert measure(index, today, func, filled=True) == Size()
    assert measure(index, cst.parse_expression("get('planner')"), func, filled=True) is None
    assert measure(index, cst.parse_expression("load_rules()"), func, filled=True) is None
    # string.Template text (crewAI's release-notes translator): the template's characters, its values filled in
    assert measure(index, cst.parse_expression("string.Template('abcdef $x').substitute(x=p.name)"), func) == Size(9)


def test_a_list_bound_to_a_name_is_one_shot_only_when_sent_as_written(tmp_path, run_cli):
    # cognee (blind set 17): memories retrieved per question in a `messages` list sent at once; the reply appended
    # after the call is no history of that request. A list grown in a loop, or handed to a helper first, is not
    # one-shot.
    path = tmp_path / "qa.py"
    path.write_text(textwrap.dedent("""\
        from openai import OpenAI
        client = OpenAI()
        def answer(memory, qa_pairs, user_id):
            for qa in qa_pairs:
                found = memory.search(query=qa["q"], user_id=user_id)
                messages = [{"role": "system", "content": f"Context: {found}"}, {"role": "user", "content": qa["q"]}]
                response = client.chat.completions.create(model="gpt-4.1", messages=messages)
                messages.append({"role": "assistant", "content": response.choices[0].message.content})
        def grows(memory, qa_pairs):
            messages = [{"role": "system", "content": f"Context: {memory.search(query=qa_pairs[0])}"}]
            for qa in qa_pairs:
                messages.append({"role": "user", "content": qa})
                client.chat.completions.create(model="gpt-4.1", messages=messages)
        def handed(q, user):
            messages = [{"role": "system", "content": f"You talk to {user.name}"}, {"role": "user", "content": q}]
            add_history(messages)
            return client.chat.completions.create(model="gpt-4.1", messages=messages)
    """))
    found = [(line, severity) for _, line, severity, _ in _one(run_cli, path, "--no-cache")]
    assert found == [(6, "info"), (10, "warning"), (15, "warning")]


def test_imported_values_filled_in_count_0_but_imported_prompt_text_must_be_measured(tmp_path, run_cli):
    # `{g.user.name}` of a framework's request object is a value filled in; `{BASE}` / `{base_prompt}` from a
    # module outside the run is prompt text of unknown length, so the warning stays.
    (tmp_path / "filled.py").write_text(textwrap.dedent("""\
        from flask import g
        from openai import OpenAI
        client = OpenAI()
        def ask(q):
            return client.chat.completions.create(model="gpt-4.1", messages=[
                {"role": "system", "content": f"Talk to {g.user.name} of {g.user.org_id}."}, {"role": "user", "content": q}])
    """))
    (tmp_path / "text.py").write_text(textwrap.dedent("""\
        from openai import OpenAI
        from .prompts import BASE, base_prompt
        client = OpenAI()
        def ask(q, user):
            return client.chat.completions.create(model="gpt-4.1", messages=[
                {"role": "system", "content": f"{BASE}\\n{base_prompt}\\nTalk to {user.name}."}, {"role": "user", "content": q}])
    """))
    found = {name: severity for name, _, severity, _ in _one(run_cli, tmp_path, "--no-cache")}
    assert found == {"filled.py": "info", "text.py": "warning"}


def test_the_importers_severity_follows_the_template_module_through_the_cache(write_tree, run_cli):
    root = write_tree({"app/__init__.py": "", "app/prompts.py": PROMPTS, "app/state.py": STATE, "app/graph.py": GRAPH})
    assert [f[2] for f in _one(run_cli, root)] == ["info"]
    (root / "app" / "prompts.py").write_text(f'PLANNER = """{"Plan it well. " * 200}{{topic}} {{n}}"""\n')
    assert [f[2] for f in _one(run_cli, root)] == ["warning"]  # graph.py comes from the cache; prompts.py grew
    (root / "app" / "prompts.py").write_text(PROMPTS)
    assert [f[2] for f in _one(run_cli, root)] == ["info"]


# Review of stop 33: requests whose text, history or tools the code does not show keep the warning.
_UNSHOWN = {
    "fstr_call.py": 'def ask(q, user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{get_prompt(\'x\')}\\nYou talk to {user.full_name}.", messages=[{"role": "user", "content": q}])\n',
    "fmt_call.py": 'def ask(q, user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system="{base} {u}".format(base=load_prompt("x"), u=user.name), messages=[{"role": "user", "content": q}])\n',
    "star.py": 'from .big import *\ndef ask(q, user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{SYSTEM_PROMPT} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "param.py": 'def ask(q, user, system_prompt):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{system_prompt} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "selfattr.py": 'class Bot:\n    def __init__(self, system_prompt):\n        self.system_prompt = system_prompt\n    def ask(self, q, user):\n        return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{self.system_prompt} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "cfg.py": 'def ask(q, user, config):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=config["system_prompt"] + f" {user.name}", messages=[{"role": "user", "content": q}])\n',
    "comp.py": f'RULES = {["Rule text. " * 60] * 40!r}\ndef ask(q, user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system="\\n".join(f"- {{r}}" for r in RULES) + user.name, messages=[{{"role": "user", "content": q}}])\n',
    "qwen.py": 'def ask(q, user):\n    return client.messages.create(model="Qwen/Qwen2.5-7B-Instruct", max_tokens=9, system=f"Hi {user.name}", messages=[{"role": "user", "content": q}])\n',
    "resp_prev.py": 'from openai import OpenAI\noai = OpenAI()\ndef ask(q, user, prev):\n    return oai.responses.create(model="gpt-4.1", instructions=f"Hi {user.name}", input=[{"role": "user", "content": q}], previous_response_id=prev)\n',
    "kwargs.py": 'def ask(q, user, **kw):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=[{"role": "user", "content": q}], **kw)\n',
    "mcp.py": 'def ask(q, user):\n    return client.beta.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=[{"role": "user", "content": q}], mcp_servers=[{"type": "url", "url": "u", "name": "n"}])\n',
    "nested.py": 'def ask(q, user, history):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=[{"role": "user", "content": [*history, {"type": "text", "text": q}]}])\n',
    "empty.py": 'def ask(user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=[])\n',
    "lc_self.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_openai import ChatOpenAI\nclass Agent:\n    def __init__(self, tools):\n        self.llm = ChatOpenAI().bind_tools(tools)\n    def ask(self, q, user):\n        return self.llm.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "lc_param.py": 'from langchain_core.messages import HumanMessage, SystemMessage\ndef ask(llm_with_tools, q, user):\n    return llm_with_tools.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "lc_pipe.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_openai import ChatOpenAI\ndef ask(q, user):\n    chain = ChatOpenAI().bind(functions=F) | parser\n    return chain.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "schema.py": f'from pydantic import BaseModel, Field\nclass Report(BaseModel):\n    body: str = Field(description={"Write the body. " * 300!r})\ndef ask(q, user):\n    return client.messages.create(model="claude-sonnet-4-5", max_tokens=9, system=f"Hi {{user.name}}", messages=[{{"role": "user", "content": q}}], response_format=Report)\n',
    # Second review of stop 33
    "lc_imported.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom .models import llm\ndef ask(q, user):\n    return llm.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "lc_factory.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom .models import get_llm\ndef ask(q, user):\n    llm = get_llm()\n    return llm.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "lc_bind_functions.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_openai import ChatOpenAI\ndef ask(q, user):\n    llm = ChatOpenAI().bind_functions(F)\n    return llm.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "lc_global.py": 'from langchain_core.messages import HumanMessage, SystemMessage\nfrom langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\ndef setup(tools):\n    global llm\n    llm = llm.bind_tools(tools)\ndef ask(q, user):\n    return llm.invoke([SystemMessage(content=f"Hi {user.name}"), HumanMessage(content=q)])\n',
    "two_calls.py": 'def ask(q, q2, user):\n    messages = [{"role": "user", "content": q}]\n    r = client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=messages)\n    messages.append({"role": "user", "content": q2})\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=messages)\n',
    "jinja.py": 'def ask(q, user, env):\n    tmpl = env.get_template("support.j2")\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{tmpl.render()} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "read_helper.py": 'from .files import read_file\ndef ask(q, user):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{read_file(GUIDE)} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "ctor_param.py": 'class Agent:\n    def __init__(self, role, backstory):\n        self.role, self.backstory = role, backstory\n    def ask(self, q, user):\n        return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"{self.role} {self.backstory} {user.name}", messages=[{"role": "user", "content": q}])\n',
    "stored_prompt.py": 'from openai import OpenAI\noai = OpenAI()\ndef ask(q, user):\n    return oai.responses.create(model="gpt-4.1", prompt={"id": "pmpt_1"}, instructions=f"Hi {user.name}", input=[{"role": "user", "content": q}])\n',
    "extra_body.py": 'def ask(q, user, tools):\n    return client.messages.create(model="claude-haiku-4-5", max_tokens=9, system=f"Hi {user.name}", messages=[{"role": "user", "content": q}], extra_body={"tools": tools})\n',
    "cjk.py": f'def ask(q, user):\n    return client.messages.create(model="claude-sonnet-4-5", max_tokens=9, system="{"请遵守公司的报销规定。" * 120}" + user.name, messages=[{{"role": "user", "content": q}}])\n',
    "walrus.py": f'def ask(q, user):\n    return client.messages.create(model="claude-sonnet-4-5", max_tokens=9, system=(t := "{"Follow the policy. " * 300}") + user.name, messages=[{{"role": "user", "content": q}}])\n',
}


def test_text_history_or_tools_the_code_does_not_show_keep_the_warning(tmp_path, run_cli):
    for name, body in _UNSHOWN.items():
        (tmp_path / name).write_text(_HEAD + body)
    found = {name: severity for name, _, severity, _ in _one(run_cli, tmp_path, "--no-cache")}
    assert found == dict.fromkeys(_UNSHOWN, "warning")
