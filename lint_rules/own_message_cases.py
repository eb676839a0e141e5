"""Case data of PC101 and PC102 for requests built with an app's own message helpers in a module that imports no
SDK (blind set 31: :func:`promptcache.lint.framework_slots.message_lists`)."""

from __future__ import annotations

from promptcache.lint.rule import Invalid

from lint_rules.volatile_cases import _OPENAI

PC101_OWN_INVALID = [
    # Blind set 31 (browser-use judge.py): a request's messages built with an app's own classes, in a module that
    # imports no SDK (its model wrapper sends them), the time to the minute in the system message.
    Invalid("from datetime import datetime, timezone\nfrom myapp.llm.messages import SystemMessage, UserMessage\ndef judge_messages(task):\n    now = datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')\n    system = f'You judge agents. The time is {now}.'\n    return [\n        SystemMessage(content=system),\n        UserMessage(content=task),\n    ]\n", line=7),
    # Blind set 31 (TaskWeaver planner.py): a role="system" message built by the app's helper heads the list its
    # prompt-named function returns (the rounds are appended after it).
    Invalid("import datetime\nfrom taskweaver.llm.util import format_chat_message\nclass Planner:\n    def get_env_context(self):\n        now = datetime.datetime.now()\n        return f'- Current time: {now.strftime(\"%Y-%m-%d %H:%M:%S\")}'\n    def compose_prompt(self, rounds):\n        chat_history = [\n            format_chat_message(role='system', message=f'{self.system}\\n{self.get_env_context()}'),\n        ]\n        for r in rounds:\n            chat_history.append(format_chat_message(role='user', message=r.text))\n        return chat_history\n", line=9),
]
# Blind set 34 (SuperAGI's AgentLlmMessageBuilder.build_agent_messages): a system message appended ahead of the history
# to the list a messages-named function returns, the time to the second in it.
PC101_OWN_INVALID.append(Invalid("import time\nclass Builder:\n    def build_agent_messages(self, prompt, feeds, completion_prompt):\n        messages = [{'role': 'system', 'content': prompt}]\n        messages.append({'role': 'system', 'content': f\"The current time and date is {time.strftime('%c')}\"})\n        for feed in feeds:\n            messages.append({'role': feed.role, 'content': feed.text})\n        messages.append({'role': 'user', 'content': completion_prompt})\n        return messages\n", line=5))
# ... also inside `if history_enabled:`, ahead of the history added there.
PC101_OWN_INVALID.append(Invalid("import time\nclass Builder:\n    def build_agent_messages(self, prompt, feeds, history_enabled):\n        messages = [{'role': 'system', 'content': prompt}]\n        if history_enabled:\n            messages.append({'role': 'system', 'content': f\"The current time is {time.strftime('%c')}\"})\n            messages += feeds\n        messages.append({'role': 'user', 'content': 'Next?'})\n        return messages\n", line=6))
PC101_OWN_VALID = [
    # ... nor one after a helper that fills the list with the history (review helper-93)
    "import time\nclass Builder:\n    def build_agent_messages(self, prompt, feeds):\n        messages = [{'role': 'system', 'content': prompt}]\n        self._add_feeds(messages, feeds)\n        messages.append({'role': 'system', 'content': f\"The time is {time.strftime('%c')}\"})\n        messages.append({'role': 'user', 'content': 'Next?'})\n        return messages\n",
    # ... but one appended after the history (the newest turn's note) is not the prefix
    "import time\nclass Builder:\n    def build_agent_messages(self, prompt, feeds):\n        messages = [{'role': 'system', 'content': prompt}]\n        for feed in feeds:\n            messages.append({'role': feed.role, 'content': feed.text})\n        messages.append({'role': 'system', 'content': f\"The time is {time.strftime('%c')}\"})\n        return messages\n",
    # ... nor one after an `if` whose body adds the history too: it may come after the history (review helper-96)
    "import time\nclass Builder:\n    def build_agent_messages(self, prompt, feeds, memory):\n        messages = [{'role': 'system', 'content': prompt}]\n        if memory:\n            messages.append({'role': 'system', 'content': memory})\n            messages += feeds\n        messages.append({'role': 'system', 'content': f\"The time is {time.strftime('%c')}\"})\n        messages.append({'role': 'user', 'content': 'Next?'})\n        return messages\n",
    # ... but a lone system message is stored or appended somewhere (marvin's thread), not a request
    "from datetime import datetime\nfrom .llm import SystemMessage\nasync def note(thread):\n    return await thread.add_messages([SystemMessage(content=f'Started {datetime.now()}')])\n",
    # ... nor is a conversation with the assistant's turn (a stored chat, a dataset row), nor a list a function
    # named for neither prompts nor messages returns
    "from datetime import datetime\ndef export(chat, q, a):\n    return [{'role': 'system', 'content': f'Exported {datetime.now()}'}, {'role': 'user', 'content': q}, {'role': 'assistant', 'content': a}]\n",
    "from datetime import datetime\ndef notice(room):\n    rows = [{'role': 'system', 'content': f'{room} opened at {datetime.now()}'}]\n    return rows\n",
]
PC102_OWN_VALID = [
    # Blind set 31 (browser-use): a parameter annotated with a `*Settings` class is configuration, not a request's data
    # (in a request shown only by an app's own message list PC101 alone runs; in an LLM file, PC102 too).
    "from myapp.llm.messages import SystemMessage, UserMessage\nasync def compact(llm, settings: CompactionSettings | None, text):\n    system = 'Summarize the run.'\n    if settings.max_chars:\n        system += f' Keep under {settings.max_chars} characters.'\n    return await llm.ainvoke([SystemMessage(content=system), UserMessage(content=text)])\n",
    _OPENAI + "def compact(history, settings: 'CompactionSettings', text):\n    system = f'Summarize the run. Keep under {settings.max_chars} characters.'\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': system}, *history, {'role': 'user', 'content': text}])\n",
]
