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
