"""The frameworks users build on (issue 11, Build 5): each one's system slot is a prefix slot.

For every framework, a timestamp in its system slot is PC101 (INVALID), and the same timestamp in the
user turn reports nothing (VALID). The snippets are parsed only, through the real engine.
"""

from __future__ import annotations

import pytest
from lint_support import lint_text

_NOW = "from datetime import datetime\n"

INVALID = {
    "langchain SystemMessage": (_NOW + "from langchain_core.messages import HumanMessage, SystemMessage\n"
                                "def ask(llm, q):\n"
                                "    return llm.invoke([SystemMessage(content=f'You help. Now: {datetime.now()}'), HumanMessage(content=q)])\n", 4),
    "langchain ChatPromptTemplate.from_messages": (
        _NOW + "from langchain_core.prompts import ChatPromptTemplate\n"
        "def chain(llm):\n"
        "    prompt = ChatPromptTemplate.from_messages([('system', f'You help. It is {datetime.now():%H:%M}'), ('human', '{q}')])\n"
        "    return prompt | llm\n", 4),
    "pydantic-ai Agent(system_prompt=)": (_NOW + "from pydantic_ai import Agent\n"
                                          "agent = Agent('openai:gpt-5', system_prompt=f'Help. Now {datetime.now()}')\n", 3),
    "pydantic-ai Agent(instructions=)": (_NOW + "from pydantic_ai import Agent\n"
                                         "agent = Agent('openai:gpt-5', instructions=f'Help. Now {datetime.now()}')\n", 3),
    "pydantic-ai @agent.system_prompt": (_NOW + "from pydantic_ai import Agent\n"
                                         "agent = Agent('openai:gpt-5')\n"
                                         "@agent.system_prompt\n"
                                         "def add_time() -> str:\n"
                                         "    return f'The time is {datetime.now()}'\n", 6),
    "pydantic-ai @agent.instructions(...)": (_NOW + "from pydantic_ai import Agent, RunContext\n"
                                             "agent = Agent('openai:gpt-5', deps_type=str)\n"
                                             "@agent.instructions\n"
                                             "def add_time(ctx: RunContext[str]) -> str:\n"
                                             "    return f'The time is {datetime.now()}'\n", 6),
    "openai-agents Agent(instructions=function)": (
        _NOW + "from agents import Agent, RunContextWrapper\n"
        "def build(context: RunContextWrapper, agent: Agent) -> str:\n"
        "    return f'You help. The time is {datetime.now()}.'\n"
        "agent = Agent(name='a', instructions=build)\n", 4),
    "openai-agents Agent(instructions=lambda)": (
        _NOW + "from agents import Agent\n"
        "agent = Agent(name='a', instructions=lambda ctx, agent: f'Help. Now {datetime.now()}')\n", 3),
    "litellm completion(messages=)": (
        _NOW + "from litellm import completion\n"
        "def ask(q):\n"
        "    return completion(model='claude-sonnet-4-5', messages=[{'role': 'system', 'content': f'Help. Now {datetime.now()}'}, {'role': 'user', 'content': q}])\n", 4),
    "gemini GenerateContentConfig(system_instruction=)": (
        _NOW + "from google import genai\nfrom google.genai import types\nclient = genai.Client()\n"
        "def ask(q):\n"
        "    return client.models.generate_content(model='gemini-2.5-flash', contents=q,\n"
        "        config=types.GenerateContentConfig(system_instruction=f'Help. Now {datetime.now()}'))\n", 7),
    "gemini config={'system_instruction': ...}": (
        _NOW + "from google import genai\nclient = genai.Client()\n"
        "def ask(q):\n"
        "    return client.models.generate_content(model='gemini-2.5-flash', contents=q, config={'system_instruction': f'Now {datetime.now()}'})\n", 5),
    "gemini cached contents": (
        _NOW + "from google import genai\nfrom google.genai import types\nclient = genai.Client()\n"
        "def cache(docs):\n"
        "    return client.caches.create(model='gemini-2.5-flash', config=types.CreateCachedContentConfig(\n"
        "        system_instruction='Help.', contents=[f'Docs as of {datetime.now()}', docs]))\n", 7),
}

VALID = {
    "langchain SystemMessage": (_NOW + "from langchain_core.messages import HumanMessage, SystemMessage\n"
                                "def ask(llm, q):\n"
                                "    return llm.invoke([SystemMessage(content='You help.'), HumanMessage(content=f'Now: {datetime.now()}. {q}')])\n"),
    "langchain ChatPromptTemplate.from_messages": (
        _NOW + "from langchain_core.prompts import ChatPromptTemplate\n"
        "PROMPT = ChatPromptTemplate.from_messages([('system', 'You help.'), ('human', 'It is {now}. {q}')])\n"
        "def ask(llm, q):\n"
        "    return (PROMPT | llm).invoke({'now': datetime.now().isoformat(), 'q': q})\n"),
    "pydantic-ai Agent(system_prompt=)": (_NOW + "from pydantic_ai import Agent\n"
                                          "agent = Agent('openai:gpt-5', system_prompt='Help.')\n"
                                          "def ask(q):\n"
                                          "    return agent.run_sync(f'Now {datetime.now()}: {q}')\n"),
    "pydantic-ai @agent.system_prompt": (_NOW + "from pydantic_ai import Agent\n"
                                         "agent = Agent('openai:gpt-5')\n"
                                         "@agent.system_prompt\n"
                                         "def rules() -> str:\n"
                                         "    return 'Answer in French.'\n"
                                         "def ask(q):\n"
                                         "    return agent.run_sync(f'Now {datetime.now()}: {q}')\n"),
    "openai-agents Agent(instructions=function)": (
        _NOW + "from agents import Agent, Runner\n"
        "def build(context, agent) -> str:\n"
        "    return 'You help.'\n"
        "agent = Agent(name='a', instructions=build)\n"
        "async def ask(q):\n"
        "    return await Runner.run(agent, f'Now {datetime.now()}: {q}')\n"),
    "litellm completion(messages=)": (
        _NOW + "import litellm\n"
        "def ask(q):\n"
        "    return litellm.completion(model='gpt-5', messages=[{'role': 'system', 'content': 'Help.'}, {'role': 'user', 'content': f'Now {datetime.now()}: {q}'}])\n"),
    "gemini GenerateContentConfig(system_instruction=)": (
        _NOW + "from google import genai\nfrom google.genai import types\nclient = genai.Client()\n"
        "CONFIG = types.GenerateContentConfig(system_instruction='Help.')\n"
        "def ask(q):\n"
        "    return client.models.generate_content(model='gemini-2.5-flash', contents=f'Now {datetime.now()}: {q}', config=CONFIG)\n"),
}


@pytest.mark.parametrize(("code", "line"), INVALID.values(), ids=list(INVALID))
def test_a_timestamp_in_the_framework_system_slot_is_pc101(code, line):
    findings = [f for f in lint_text(code) if f.code == "PC101"]
    assert [f.line for f in findings] == [line], f"{[(f.code, f.line, f.message) for f in lint_text(code)]}"


@pytest.mark.parametrize("code", VALID.values(), ids=list(VALID))
def test_a_timestamp_in_the_user_turn_reports_nothing(code):
    assert [(f.code, f.line) for f in lint_text(code)] == []


def test_gemini_generate_content_is_a_sink_whose_contents_are_the_conversation():
    code = ("from google import genai\nclient = genai.Client()\n"
            "def chat(history, q):\n"
            "    history.append({'role': 'user', 'parts': [{'text': q}]})\n"
            "    r = client.models.generate_content(model='gemini-2.5-flash', contents=history[-6:])\n")
    assert [(f.code, f.line) for f in lint_text(code)] == [("PC203", 5)]


_LC_TEMPLATE = (
    "from datetime import datetime\n"
    "from langchain_core.prompts import ChatPromptTemplate\n"
    "from langchain_openai import ChatOpenAI\n"
    "SYSTEM = 'You help {company}. The user is {user_name}. Now: {now}'\n"
    "prompt = ChatPromptTemplate.from_messages([('system', SYSTEM), ('placeholder', '{history}'), ('human', '{question}')])\n"
    "chain = prompt | ChatOpenAI(model='gpt-4.1-mini')\n"
    "def ask(user, history, question):\n"
    "    return chain.invoke({'company': 'Acme', 'user_name': user.name,\n"
    "                         'history': history, 'question': question, 'now': 'n/a'})\n"
    "def ask_now(history, question):\n"
    "    return prompt.partial(now=datetime.now().isoformat()).invoke({'history': history, 'question': question})\n"
)


def test_langchain_template_variables_filled_at_invoke_are_system_prompt_text():
    # Newcomer (stop 33): `("system", "... {user_name} ...")` filled by `chain.invoke({...})` or `.partial(...)`;
    # the human template's `{question}` and the history are the turn, not the prefix.
    found = sorted((f.code, f.line, f.message.split(":")[0]) for f in lint_text(_LC_TEMPLATE))
    assert found == [
        ("PC101", 11, "`datetime.datetime.now()` reaches the LangChain system template's {now}"),
        ("PC102", 8, "`user.name` reaches the LangChain system template's {user_name}"),
    ]


def test_a_template_imported_from_a_module_of_the_run_decides_which_values_are_system_text(write_tree, run_cli):
    # Newcomer (stop 33): prompts.py holds the system template; chain.py fills it. Only the values of the variables
    # the system template names are reported; linted alone, chain.py cannot tell and reports none.
    import json

    chain = (
        "from langchain_core.prompts import ChatPromptTemplate\nfrom langchain_openai import ChatOpenAI\n"
        "from .prompts import SYSTEM_PROMPT, QA\n"
        "prompt = ChatPromptTemplate.from_messages([('system', SYSTEM_PROMPT), ('human', QA)])\n"
        "chain = prompt | ChatOpenAI(model='gpt-4.1-mini')\n"
        "def ask(user, question):\n"
        "    return chain.invoke({'user_name': user.name,\n"
        "                         'question': f'  {question}  '})\n"
        "def ask_both(user, question):\n"
        "    return chain.invoke({'question': question, 'user_name': user.name})\n"
    )
    prompts = "SYSTEM_PROMPT = 'You help. The user is {user_name}.'\nQA = 'Question: {question}'\n"
    root = write_tree({"app/__init__.py": "", "app/prompts.py": prompts, "app/chain.py": chain})
    _, out, _ = run_cli("lint", root, "--output-format", "json", "--no-cache")
    assert [(f["code"], f["line"]) for f in json.loads(out)] == [("PC102", 7), ("PC102", 10)]
    for _ in range(2):  # written to the result cache, then read from it: the same
        _, again, _ = run_cli("lint", root, "--output-format", "json")
        assert json.loads(again) == json.loads(out)
    _, out, _ = run_cli("lint", root / "app" / "chain.py", "--output-format", "json", "--no-cache")
    assert json.loads(out) == []
