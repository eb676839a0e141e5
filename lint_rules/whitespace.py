"""PC401-PC403: invisible differences in prompt text (PC404-PC406: :mod:`lint_rules.characters`).

Whitespace, line endings and invisible characters are tokens like any other.
Two prompts that look the same but differ in one of them are two prefixes and
two cache entries, and editors or formatters change them silently.
"""

from __future__ import annotations

from promptcache.lint import literals as L
from promptcache.lint import text_fixes as T
from promptcache.lint.finding import Severity
from promptcache.lint.rule import Invalid
from promptcache.lint.text_rule import TextRule, dedented_in_source

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_BUILDER = "from promptcache import PromptBuilder\n"


class UndedentedMultilinePrompt(TextRule):
    """
    ## What it does
    Finds a triple-quoted prompt whose continuation lines carry the source
    indentation (a prompt written inside a class or function body) and that
    is not wrapped in ``textwrap.dedent`` or ``inspect.cleandoc``.

    ## Why is this bad?
    The indentation is sent to the model as spaces on every line: wasted
    tokens, and a prefix that changes whenever the code is re-indented or
    moved, so the cache entry is lost on an unrelated refactor.

    ## Example
    ```python
    class Bot:
        SYSTEM_PROMPT = \"\"\"You answer questions.
        Cite the section title.\"\"\"
    ```

    ## Use instead
    ```python
    class Bot:
        SYSTEM_PROMPT = inspect.cleandoc(\"\"\"You answer questions.
            Cite the section title.\"\"\")
    ```

    ## Fix safety
    The fix wraps the literal in ``textwrap.dedent(...)`` when its text starts
    on the line after the quotes, and in ``inspect.cleandoc(...)`` when it
    starts on the quotes' line (dedent cannot remove indentation that the
    first line lacks), adding the import once. An f-string with replacement
    fields instead loses the indentation in its source (dedenting the
    formatted text would depend on the values). It is unsafe: the prompt
    bytes change once. A piece of an implicit concatenation gets no edit.

    ## When it does not fire
    The literal goes through ``textwrap.dedent`` / ``inspect.cleandoc`` on some
    path, or is given to promptcache's ``PromptBuilder`` (``.system()``,
    ``.document()``, ``.example()``) or ``promptcache.normalize_text``, which
    dedent it; it is at module level with its text starting on the line of the
    quotes; its continuation lines are not indented.
    """

    code = "PC401"
    name = "undedented-multiline-prompt"
    severity = Severity.WARNING
    fixable = "unsafe"
    message = (
        "this multi-line prompt carries {indent} spaces of source indentation on each line: they are sent as tokens "
        "and change when the code is re-indented, breaking the cached prefix; {advice}"
    )

    def check(self) -> None:
        for use in self.flow.text.literals:
            if use.dedented:
                continue
            for piece in L.pieces(use.node):
                indent = L.undedented(piece, self.block_indent(use.node))
                if indent:
                    # the advice is what the fix does (TextRule.dedent_fix)
                    advice = "remove it from the source lines" if dedented_in_source(piece) else "wrap it in inspect.cleandoc()"
                    self.report(piece.node, self.message.format(indent=indent, advice=advice), self.dedent_fix(piece, indent))

    VALID = [
        _CLAUDE + "import textwrap\nclass Bot:\n    SYSTEM_PROMPT = textwrap.dedent('''\\\n        Be brief.\n        Cite sources.''')\n",
        _CLAUDE + "SYSTEM_PROMPT = '''Be brief.\nCite sources.\n'''\n",
        _CLAUDE + "def ask(q):\n    note = '''a\n    b'''\n    return client.messages.create(model='m', messages=[{'role': 'user', 'content': note}])\n",
        # The SDK dedents the layers it is given.
        _BUILDER + "class Bot:\n    BASE = PromptBuilder().system(\'\'\'You answer questions.\n        Cite the section title.\'\'\')\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "class Bot:\n    SYSTEM_PROMPT = '''Be brief.\n    Cite sources.'''\n", line=4),
        Invalid(_CLAUDE + "def ask(repo):\n    system = f'''Review {repo}.\n    Flag bugs first.'''\n    return client.messages.create(model='m', system=system, messages=[])\n", line=4),
        Invalid(_OPENAI + "PROMPT = '''\n    You label emails.\n    Reply with JSON.\n'''\n", line=3),
        # Issue 11 (camel): a prompt builder that calls `model_json_schema()` is still a prompt builder, not a
        # request handler returning the model's reply.
        Invalid(_OPENAI + "def generate_prompt_for_structured_output(response_format, user_message):\n    schema = response_format.model_json_schema()\n    sys_prompt = f'Answer as JSON: {schema}'\n    final_prompt = f'''\n    {sys_prompt}\n    User message: {user_message}\n    '''\n    return final_prompt\n", line=6),
    ]


class TrailingWhitespaceInPrompt(TextRule):
    """
    ## What it does
    Finds spaces or tabs typed at the end of a source line inside a
    triple-quoted prompt literal, when they reach the prompt as sent.

    ## Why is this bad?
    Trailing whitespace is invisible in review and is the first thing an
    editor's trim-on-save or a formatter removes. The next commit then changes
    the prompt bytes without anyone meaning to, and the cached prefix is lost.
    Only whitespace at the end of a source line is at risk: a space before the
    closing quotes, an escaped ``\\t``, or a literal that ends in a space sends
    the same bytes on every request, and no editor touches them.

    ## Example
    ```python
    PROMPT = \"\"\"You extract invoice data.··
    Return JSON.\"\"\"
    ```
    (``··``: two spaces at the end of the source line.)

    ## Use instead
    ```python
    PROMPT = \"\"\"You extract invoice data.
    Return JSON.\"\"\"
    ```

    ## Fix safety
    The fix removes the spaces and tabs typed before each source line break
    of the literal, keeping every other character as written. It is unsafe:
    the prompt bytes change once (a Markdown hard break of two trailing
    spaces becomes a plain line break).

    ## When it does not fire
    Whitespace no editor strips: before the closing quotes on their line
    (closing-quote indentation), written as an escape (``"Rules:\\t\\n"``), at
    the end of a one-line literal (``"Be brief. "``). Whitespace the text loses
    on its way: lines that ``textwrap.dedent`` blanks, and anything
    promptcache's ``PromptBuilder`` / ``normalize_text`` strips from each line.
    """

    code = "PC402"
    name = "trailing-whitespace-in-prompt"
    severity = Severity.WARNING
    fixable = "unsafe"
    message = (
        "prompt text has {what}: editors and formatters strip it silently, changing the prompt bytes and the "
        "cached prefix with the next commit; remove it"
    )

    def check(self) -> None:
        for use in self.flow.text.literals:
            found = L.pieces(use.node)
            # Judge the text as sent (dedent() blanks whitespace-only lines, the SDK strips every line), and
            # only the whitespace typed before a source line break, the whitespace editors strip.
            sent = use.as_sent("".join(p.value for p in found))
            if not any(L.trailing_whitespace(text, False) for text in sent):
                continue
            for piece in found:
                if piece.triple and T.typed_trailing_whitespace(piece.body):
                    fix = self.literal_fix(piece.node, T.strip_trailing_whitespace, "Remove the trailing whitespace")
                    self.report(piece.node, self.message.format(what="spaces or tabs at the end of a source line"), fix)
                    break

    VALID = [
        # Issue 11/12, from real code (openai-agents-python, pydantic-ai): nothing an editor strips.
        _OPENAI + "SYSTEM_PROMPT = 'Be brief. '\n",
        _CLAUDE + "def ask(q):\n    return client.messages.create(model='m', system='Rules:\\t\\nBe kind.', messages=[])\n",
        _OPENAI + "class A:\n    INSTRUCTIONS = \"\"\"Help with seats.\n    Transfer back to the triage agent. \"\"\"\n",
        _OPENAI + "class A:\n    INSTRUCTIONS = f\"\"\"{PREFIX}\n    You are an FAQ specialist.\n    \"\"\"\n",
        _OPENAI + "SYSTEM_PROMPT = ('You answer billing questions. '\n    'Never change a plan.')\n",
        _OPENAI + "SYSTEM_PROMPT = 'Line one.\\nLine two.\\n'\n",
        _OPENAI + "def ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': 'Question:  \\n' + q}])\n",
        # The fix PC401 recommends: dedent() blanks the whitespace-only last line, cleandoc() strips it.
        _CLAUDE + "import textwrap\ndef ask(q):\n    system = textwrap.dedent(\'\'\'\\\n        You support ACME.\n        Be brief.\n        \'\'\')\n    return client.messages.create(model='m', system=system, messages=[])\n",
        _CLAUDE + "import inspect\nclass Bot:\n    SYSTEM_PROMPT = inspect.cleandoc(\'\'\'\n        You support ACME.\n        Be brief.\n        \'\'\')\n",
        # The SDK strips trailing whitespace from every line of a layer.
        _BUILDER + "BASE = PromptBuilder().system('Be brief.  \\nCite sources. ').document('Handbook text  ', name='h')\n",
    ]
    INVALID = [
        Invalid(_OPENAI + "SYSTEM_PROMPT = '''Extract data.  \nReturn JSON.\n'''\n", line=3),
        Invalid(_CLAUDE + "def ask(q):\n    system = f'''Rules for {q}:\t\nBe kind.'''\n    return client.messages.create(model='m', system=system, messages=[])\n", line=4),
        Invalid(_OPENAI + "SYSTEM_PROMPT = '''Markdown breaks:  \n- one  \n- two'''\n", line=3),
    ]


class InconsistentSeparator(TextRule):
    """
    ## What it does
    Finds the same prompt parts assembled with different separators
    (``"\\n"`` vs ``"\\n\\n"`` vs ``" \\n"``) in different branches, builders or
    assignments: ``"\\n".join(PARTS)`` here and ``"\\n\\n".join(PARTS)`` there,
    ``"\\n".join([A, B])`` and ``"\\n\\n".join([A, B])``, or ``A + "\\n" + B`` and
    ``f"{A}\\n\\n{B}"`` (a join over a list literal counts as the same parts).

    ## Why is this bad?
    The instructions are identical but the bytes are not, so each entry point
    gets its own prefix and its own cache entry, paying the cache write twice
    and sharing nothing.

    ## Example
    ```python
    def chat_prompt():  return PERSONA + "\\n" + HOUSE_STYLE
    def batch_prompt(): return f"{PERSONA}\\n\\n{HOUSE_STYLE}"
    ```

    ## Use instead
    ```python
    SYSTEM_PROMPT = f"{PERSONA}\\n\\n{HOUSE_STYLE}"  # one builder, used everywhere
    ```

    ## When it does not fire
    Different parts, or the same separator everywhere; parts joined with text
    that is not whitespace.
    """

    code = "PC403"
    name = "inconsistent-separator"
    severity = Severity.WARNING
    message = (
        "this prompt joins the same parts with {sep} where an earlier one uses {norm}: identical instructions with "
        "different bytes never share a cache entry; build the prompt in one place"
    )

    def check(self) -> None:
        first: dict[tuple, tuple[str, ...]] = {}
        for node, parts, seps in self.flow.text.assemblies:
            norm = first.setdefault(parts, seps)
            if seps != norm:
                self.report(node, self.message.format(sep=_show(seps), norm=_show(norm)))

    VALID = [
        # Issue 11 (FastChat, blind set 24): a chat template's styles render each message of the loop, per model.
        _OPENAI + "class Conversation:\n    def get_prompt(self):\n        ret = self.system\n        if self.style == Style.NEW_LINE:\n            for role, message in self.messages:\n                ret += role + '\\n' + message + self.sep\n        elif self.style == Style.NO_COLON:\n            for role, message in self.messages:\n                ret += role + message + self.sep\n        return ret\n    def ask(self):\n        return client.completions.create(model='m', prompt=self.get_prompt())\n",
        _CLAUDE + "PARTS = ['a', 'b']\ndef ask(web):\n    system = '\\n'.join(PARTS) if web else '\\n'.join(PARTS)\n    return client.messages.create(model='m', system=system, messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\nC = 'z'\ndef ask(web):\n    return client.messages.create(model='m', system=A + '\\n' + B if web else f'{A}\\n\\n{C}', messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\ndef ask(web):\n    return client.messages.create(model='m', system=f'{A}\\n\\nContext:\\n{B}', messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\ndef one(q):\n    return client.messages.create(model='m', system='\\n'.join([A, B]), messages=[])\ndef two(q):\n    return client.messages.create(model='m', system=f'{A}\\n{B}', messages=[])\n",
    ]
    INVALID = [
        # Review of the FastChat change: a loop over fixed sections is no chat template.
        Invalid(_CLAUDE + "SECTIONS = {'Persona': 'You are Ada.', 'Style': 'Be brief.'}\ndef build(web):\n    ret = ''\n    for name, text in SECTIONS.items():\n        if web:\n            ret += name + '\\n' + text\n        else:\n            ret += name + '\\n\\n' + text\n    return ret\ndef ask(q, web):\n    return client.messages.create(model='m', system=build(web), messages=[])\n", line=10),
        Invalid(_CLAUDE + "PARTS = ['a', 'b']\ndef ask(web):\n    if web:\n        system = '\\n'.join(PARTS)\n    else:\n        system = '\\n\\n'.join(PARTS)\n    return client.messages.create(model='m', system=system, messages=[])\n", line=8),
        Invalid(_OPENAI + "A = 'x'\nB = 'y'\ndef one():\n    return A + '\\n' + B\ndef two():\n    return f'{A}\\n\\n{B}'\ndef ask(q):\n    client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': one()}])\n    client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': two()}])\n", line=8),
        Invalid(_CLAUDE + "A = 'x'\nB = 'y'\nSYSTEM_PROMPT = A + '\\n' + B\nBATCH_PROMPT = A + ' \\n' + B\n", line=6),
        # A join over a list literal is the same assembly as `+` or an f-string.
        Invalid(_CLAUDE + "PERSONA = 'You are Ada.'\nRULES = 'Be brief.'\ndef web(q):\n    return client.messages.create(model='m', system='\\n'.join([PERSONA, RULES]), messages=[])\ndef api(q):\n    return client.messages.create(model='m', system='\\n\\n'.join([PERSONA, RULES]), messages=[])\n", line=8),
    ]




def _show(seps: tuple[str, ...]) -> str:
    return ", ".join(repr(s) for s in seps) if seps else "nothing"
