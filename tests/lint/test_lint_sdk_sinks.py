"""promptcache's own builder as a conversation sink: ``PromptBuilder().history(...)`` is judged like ``messages=``."""

from __future__ import annotations

import json

import pytest

from lint_support import lint_text
from promptcache.lint import prefilter

APP = {
    # The two windows of the issue: a slice and a slice of list(chat), through both import styles.
    "bot/by_name.py": (
        "from promptcache import PromptBuilder\n"
        "\n"
        "def turn(history, text):\n"
        "    history.append({'role': 'user', 'content': text})\n"
        "    return PromptBuilder().system('Rules.').history(history[-6:]).user(text).build()\n"
    ),
    "bot/by_module.py": (
        "import promptcache as pc\n"
        "\n"
        "def turn(chat, text):\n"
        "    return pc.PromptBuilder().system('Rules.').history(list(chat)[-6:]).user(text).build()\n"
    ),
    # A Conversation rebuilt from a window each turn, then given to a builder held in a name.
    "bot/rebuilt.py": (
        "from promptcache import Conversation, PromptBuilder\n"
        "BASE = PromptBuilder().system('Rules.')\n"
        "\n"
        "def turn(history, text):\n"
        "    window = Conversation(history[-8:])\n"
        "    return BASE.history(window).user(text).build()\n"
    ),
    # Clean: the SDK's own chunked truncation, and a window under a size guard.
    "bot/clean.py": (
        "from promptcache import Conversation, PromptBuilder\n"
        "chat = Conversation(budget_tokens=20_000)\n"
        "\n"
        "def turn(history, text):\n"
        "    chat.append({'role': 'user', 'content': text})\n"
        "    if len(history) > 40:\n"
        "        history = history[-20:]\n"
        "    first = PromptBuilder().system('Rules.').history(chat).build()\n"
        "    return first, PromptBuilder().history(history).build()\n"
    ),
}
EXPECTED = [("bot/by_module.py", 4, "PC203"), ("bot/by_name.py", 5, "PC203"), ("bot/rebuilt.py", 5, "PC203")]


@pytest.mark.parametrize("extra", [[], ["--no-prefilter"]])
def test_lint_reports_windows_sent_through_the_builder(run_cli, write_tree, extra):
    root = write_tree(APP)
    code, out, _ = run_cli("lint", root, "--output-format", "json", *extra)
    found = [(f["path"].replace("\\", "/").split(f"{root.name}/", 1)[-1], f["line"], f["code"]) for f in json.loads(out)]
    assert code == 1
    assert found == EXPECTED


def test_concise_output_names_the_window(run_cli, write_tree):
    root = write_tree(APP)
    code, out, _ = run_cli("lint", root / "bot" / "by_module.py", "--output-format", "concise")
    assert code == 1
    assert "by_module.py:4:56: PC203 [warning] `list(chat)[-6:]` drops the oldest messages on every turn" in out
    assert "parsed 1, skipped 0" in out


@pytest.mark.parametrize(
    ("source", "passes"),
    [
        (b"import promptcache as pc\nb = pc.PromptBuilder()\n", True),
        (b"import promptcache\nc = promptcache.Conversation([])\n", True),
        (b"from promptcache import Conversation\n", True),
        (b"from promptcache.builder import PromptBuilder\n", True),
        (b"from promptcache.prompt.builder import PromptBuilder\n", True),
        (b"from promptcache.prompt import Conversation\n", True),
        (b"import promptcache\nprint(promptcache.__version__)\n", False),
        (b"import readline\nreadline.get_history_length()\n", False),
    ],
)
def test_prefilter_passes_files_using_the_sdk(source, passes):
    assert prefilter.scan(source).passes is passes


def test_a_non_builder_history_method_is_not_a_sink():
    code = "from promptcache import PromptBuilder\nclass Shell:\n    def show(self, lines):\n        lines = lines[-6:]\n        return self.console.history(lines)\n"
    assert lint_text(code) == []


def test_the_builder_history_is_a_history_for_pc201_pc204():
    code = (
        "from promptcache import PromptBuilder\n"
        "def turn(history, note):\n"
        "    history[1]['content'] = note\n"
        "    history = compress_history(history)\n"
        "    return PromptBuilder().history(history).build()\n"
    )
    assert [(f.code, f.line) for f in lint_text(code)] == [("PC204", 3), ("PC201", 4)]
