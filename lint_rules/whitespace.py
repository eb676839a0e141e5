"""PC4xx: invisible differences in prompt text.

Whitespace, line endings and invisible characters are tokens like any other.
Two prompts that look the same but differ in one of them are two prefixes and
two cache entries, and editors or formatters change them silently.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import literals as L
from promptcache.lint import text_fixes as T
from promptcache.lint.finding import Applicability, Severity
from promptcache.lint.rule import Invalid, LintRule, NodeFix

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_BUILDER = "from promptcache import PromptBuilder\n"


class _TextRule(LintRule):
    """Shared driver: run :meth:`check` on every prompt literal of an LLM file."""

    def leave_Module(self, node: cst.Module) -> None:
        if self.flow.is_llm_file:
            self.check()

    def check(self) -> None:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def literal_fix(self, node: cst.CSTNode, transform, description: str, strip_end: bool = False) -> NodeFix:
        """An unsafe fix that rewrites the literal ``node`` with ``transform`` (:mod:`promptcache.lint.text_fixes`),
        or only describes it when the literal cannot be rewritten safely."""
        new = T.rewrite(node, transform, strip_end)
        if new is None:
            return NodeFix(f"{description} (no edit is offered: this literal cannot be rewritten safely)", Applicability.UNSAFE)
        return NodeFix(description, Applicability.UNSAFE, ((node, new),))

    def block_indent(self, node: cst.CSTNode) -> int:
        """Indentation, in characters, of the block holding ``node``."""
        width = 0
        for anc in self.flow.facts.ancestors(node):
            if isinstance(anc, cst.IndentedBlock):
                width += len(anc.indent if anc.indent is not None else self.flow.module.default_indent)
        return width


class UndedentedMultilinePrompt(_TextRule):
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
    first line lacks), adding the import once. It is unsafe: the prompt bytes
    change once. A piece of an implicit concatenation gets no edit.

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
        "and change when the code is re-indented, breaking the cached prefix; wrap it in textwrap.dedent()"
    )

    def check(self) -> None:
        for use in self.flow.text.literals:
            if use.dedented:
                continue
            for piece in L.pieces(use.node):
                indent = L.undedented(piece, self.block_indent(use.node))
                if indent:
                    self.report(piece.node, self.message.format(indent=indent), self._fix(piece))

    def _fix(self, piece: L.Piece) -> NodeFix:
        call = T.dedent_call(piece)
        module_name = call.split(".")[0]
        description = f"Wrap the prompt in {call}()"
        if isinstance(self.flow.facts.parent.get(piece.node), cst.ConcatenatedString):
            return NodeFix(f"{description} (no edit is offered: it is one piece of an implicit concatenation)", Applicability.UNSAFE)
        insertion = T.import_insertion(self.flow.module, module_name)
        return NodeFix(
            description + (f" and import {module_name}" if insertion else ""),
            Applicability.UNSAFE,
            ((piece.node, f"{call}({self.flow.code(piece.node)})"),),
            (insertion,) if insertion else (),
        )

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
    ]


class TrailingWhitespaceInPrompt(_TextRule):
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
    PROMPT = \"\"\"You extract invoice data.  \\nReturn JSON.\"\"\"
    ```

    ## Use instead
    ```python
    PROMPT = \"\"\"You extract invoice data.\\nReturn JSON.\"\"\"
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
                if piece.triple and L.trailing_whitespace(piece.body, False):  # the body has typed line breaks only
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


class InconsistentSeparator(_TextRule):
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
        _CLAUDE + "PARTS = ['a', 'b']\ndef ask(web):\n    system = '\\n'.join(PARTS) if web else '\\n'.join(PARTS)\n    return client.messages.create(model='m', system=system, messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\nC = 'z'\ndef ask(web):\n    return client.messages.create(model='m', system=A + '\\n' + B if web else f'{A}\\n\\n{C}', messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\ndef ask(web):\n    return client.messages.create(model='m', system=f'{A}\\n\\nContext:\\n{B}', messages=[])\n",
        _CLAUDE + "A = 'x'\nB = 'y'\ndef one(q):\n    return client.messages.create(model='m', system='\\n'.join([A, B]), messages=[])\ndef two(q):\n    return client.messages.create(model='m', system=f'{A}\\n{B}', messages=[])\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "PARTS = ['a', 'b']\ndef ask(web):\n    if web:\n        system = '\\n'.join(PARTS)\n    else:\n        system = '\\n\\n'.join(PARTS)\n    return client.messages.create(model='m', system=system, messages=[])\n", line=8),
        Invalid(_OPENAI + "A = 'x'\nB = 'y'\ndef one():\n    return A + '\\n' + B\ndef two():\n    return f'{A}\\n\\n{B}'\ndef ask(q):\n    client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': one()}])\n    client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': two()}])\n", line=8),
        Invalid(_CLAUDE + "A = 'x'\nB = 'y'\nSYSTEM_PROMPT = A + '\\n' + B\nBATCH_PROMPT = A + ' \\n' + B\n", line=6),
        # A join over a list literal is the same assembly as `+` or an f-string.
        Invalid(_CLAUDE + "PERSONA = 'You are Ada.'\nRULES = 'Be brief.'\ndef web(q):\n    return client.messages.create(model='m', system='\\n'.join([PERSONA, RULES]), messages=[])\ndef api(q):\n    return client.messages.create(model='m', system='\\n\\n'.join([PERSONA, RULES]), messages=[])\n", line=8),
    ]


class CrlfInPrompt(_TextRule):
    """
    ## What it does
    Finds ``\\r\\n`` (or a lone ``\\r``) in a prompt literal, and prompt text
    read with ``open(..., newline="")`` or ``.read_bytes().decode()`` without
    normalising line endings.

    ## Why is this bad?
    A prompt with CRLF line endings never matches the LF copy of the same
    instructions byte for byte. Reading a prompt file without newline
    translation sends CRLF from a Windows checkout and LF from Linux hosts:
    two prefixes, two cache entries.

    ## Example
    ```python
    with open(path, encoding="utf-8", newline="") as fh:
        PROMPT = fh.read()
    ```

    ## Use instead
    ```python
    PROMPT = Path(path).read_text(encoding="utf-8")  # universal newlines: always "\\n"
    ```

    ## Fix safety
    In a literal, the fix drops the ``\\r`` of each ``\\r\\n`` and turns a lone
    ``\\r`` into ``\\n``. It is unsafe: the prompt bytes change once. A file
    read without newline translation gets no edit (read it in text mode).

    ## When it does not fire
    Text read in text mode with default newline handling, or normalised with
    ``.replace("\\r\\n", "\\n")`` / ``.splitlines()`` / promptcache's
    ``PromptBuilder`` or ``normalize_text`` on the way to the slot.
    """

    code = "PC404"
    name = "crlf-in-prompt"
    severity = Severity.WARNING
    fixable = "unsafe"
    message = (
        "{what}: CRLF and LF copies of one prompt are different prefixes and never share a cache entry; "
        "use \\n line endings"
    )

    def check(self) -> None:
        for use in self.flow.text.literals:
            for piece in L.pieces(use.node):
                if any("\r" in sent for sent in use.as_sent(piece.value)):
                    fix = self.literal_fix(piece.node, T.unix_line_ends, "Use \\n line endings in the literal")
                    self.report(piece.node, self.message.format(what="this prompt literal contains carriage returns (\\r)"), fix)
        for call, normalised in self.flow.text.reads:
            if normalised:
                continue
            newline = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "newline"), None)
            if newline is not None and L.string_value(newline) == "":
                self.report(call, self.message.format(what='prompt text is read with newline="" (no newline translation)'))
            elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "decode":
                self.report(call, self.message.format(what="prompt text is decoded from raw bytes (no newline translation)"))

    VALID = [
        _CLAUDE + "from pathlib import Path\nSYSTEM_PROMPT = Path('p.md').read_text(encoding='utf-8')\n",
        _CLAUDE + "def load(p):\n    with open(p, newline='') as fh:\n        return fh.read().replace('\\r\\n', '\\n')\nSYSTEM_PROMPT = load('p.md')\n",
        _CLAUDE + "def ask(q):\n    return client.messages.create(model='m', messages=[{'role': 'user', 'content': 'a\\r\\nb'}])\n",
        # The SDK turns CRLF into LF, in literals and in text read without newline translation.
        _BUILDER + "def base(path):\n    with open(path, newline='') as fh:\n        return PromptBuilder().system('Line one.\\r\\nLine two.').document(fh.read(), name='d')\n",
    ]
    INVALID = [
        Invalid(_OPENAI + "SYSTEM_PROMPT = 'Line one.\\r\\nLine two.'\n", line=3),
        Invalid(_CLAUDE + "def load(p):\n    with open(p, encoding='utf-8', newline='') as fh:\n        return fh.read()\nSYSTEM_PROMPT = load('p.md')\n", line=4),
        Invalid(_CLAUDE + "from pathlib import Path\ndef ask(q):\n    return client.messages.create(model='m', system=Path('p.md').read_bytes().decode('utf-8'), messages=[])\n", line=5),
    ]


class StripAsymmetry(_TextRule):
    """
    ## What it does
    Finds a prompt that reaches the same slot stripped (``.strip()``), or
    newline-terminated, on one path and unchanged on another: a hot-reload
    path, a fallback, a second loader.

    ## Why is this bad?
    The two paths send the prompt with and without its trailing newline: two
    prefixes for one prompt. Dev and prod, or two replicas, stop sharing the
    cache entry without any visible difference.

    ## Example
    ```python
    PROMPT = PROMPT_FILE.read_text().strip()
    def current_prompt():
        if os.environ.get("HOT_RELOAD"):
            return PROMPT_FILE.read_text()
        return PROMPT
    ```

    ## Use instead
    ```python
    def load_prompt():
        return PROMPT_FILE.read_text().strip()
    ```
    and call the one loader on every path.

    ## When it does not fire
    Every path strips (or none does); the paths read different prompts.
    """

    code = "PC405"
    name = "strip-asymmetry"
    severity = Severity.INFO
    message = (
        "this path sends the prompt {status} while an earlier path sends it {norm}: the two paths produce different "
        "prefixes and do not share a cache entry; normalise the prompt in one loader"
    )

    def check(self) -> None:
        order = self.flow.facts.order
        for slot in self.flow.system_slots:
            if slot.kind != "system":
                continue
            groups: dict[str, list] = {}
            for variant in self.flow.text.variants(slot.expr, slot.scope):
                groups.setdefault(variant.base, []).append(variant)
            for variants in groups.values():
                variants.sort(key=lambda v: order.get(v.site, 0))
                norm = variants[0].status
                for variant in variants[1:]:
                    if variant.status != norm:
                        self.report(variant.site, self.message.format(status=_STATUS[variant.status], norm=_STATUS[norm]))

    VALID = [
        _OPENAI + "from pathlib import Path\nP = Path('p.md')\ndef prompt(reload):\n    return P.read_text().strip() if reload else P.read_text().strip()\ndef ask(q, r):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': prompt(r)}])\n",
        _OPENAI + "from pathlib import Path\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': Path('p.md').read_text()}])\n",
        _OPENAI + "A = 'x'\nB = 'y '\ndef ask(flag):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': A if flag else B.strip()}])\n",
    ]
    INVALID = [
        Invalid(_OPENAI + "from pathlib import Path\nP = Path('p.md')\nPROMPT = P.read_text().strip()\ndef prompt(reload):\n    if reload:\n        return P.read_text()\n    return PROMPT\ndef ask(r):\n    return client.chat.completions.create(model='m', messages=[{'role': 'system', 'content': prompt(r)}])\n", line=8),
        Invalid(_CLAUDE + "def ask(text, web):\n    system = text.strip() if web else text\n    return client.messages.create(model='m', system=system, messages=[])\n", line=4),
        Invalid(_CLAUDE + "BASE = 'Rules'\ndef ask(web):\n    system = BASE + '\\n' if web else BASE\n    return client.messages.create(model='m', system=system, messages=[])\n", line=5),
    ]


class InvisibleCharacters(_TextRule):
    """
    ## What it does
    Finds a byte-order mark, zero-width characters, no-break spaces (and
    similar look-alike spaces), text that is not in Unicode NFC form, or
    indentation that mixes tabs and spaces in a prompt literal.

    ## Why is this bad?
    These characters are invisible in review, usually arrive by copy-paste
    from a wiki or a document, and make the prompt differ from the copy other
    services send: different bytes, different tokens, a separate cache entry.

    ## Example
    ```python
    PROMPT = "Quote amounts exactly\\u00a0as listed.\\u200b"
    ```

    ## Use instead
    ```python
    PROMPT = "Quote amounts exactly as listed."
    ```

    ## Fix safety
    The fix removes zero-width characters, byte-order marks and soft hyphens,
    turns look-alike spaces into plain spaces and applies NFC, keeping every
    other character as written. It is unsafe: the prompt bytes change once.
    Mixed tab and space indentation gets no edit.

    ## When it does not fire
    Visible non-ASCII text in NFC form (accents, other scripts, emoji); a BOM,
    zero-width characters or non-NFC text given to promptcache's
    ``PromptBuilder`` or ``normalize_text``, which remove them (a no-break
    space inside a line stays, and is reported).
    """

    code = "PC406"
    name = "invisible-characters"
    severity = Severity.WARNING
    fixable = "unsafe"
    message = (
        "this prompt literal contains {what}: invisible differences make it a different prefix from the copy "
        "other code sends; remove or normalise it"
    )

    def check(self) -> None:
        for use in self.flow.text.literals:
            for piece in L.pieces(use.node):
                what = next((w for sent in use.as_sent(piece.value) if (w := L.invisible(sent))), None)
                if what:
                    if "tabs and spaces" in what:
                        fix = NodeFix("Indent the prompt with spaces only", Applicability.UNSAFE)
                    else:
                        fix = self.literal_fix(piece.node, T.visible_text, "Remove the invisible characters")
                    self.report(piece.node, self.message.format(what=what), fix)

    VALID = [
        _CLAUDE + "SYSTEM_PROMPT = 'Réponds en français. 日本語も可。'\n",
        _CLAUDE + "def ask(q):\n    return client.messages.create(model='m', messages=[{'role': 'user', 'content': 'a\\u00a0b'}])\n",
        _CLAUDE + "SYSTEM_PROMPT = 'Rules:\\n  - one\\n  - two'\n",
        # The SDK removes BOMs and zero-width characters and applies NFC.
        _BUILDER + "import promptcache\nBASE = PromptBuilder().system('\\ufeffBe\\u200b brief.').example('Cafe\\u0301?', 'Yes.')\nSYSTEM_PROMPT = promptcache.normalize_text('\\u200bHi')\n",
    ]
    INVALID = [
        Invalid(_CLAUDE + "SYSTEM_PROMPT = 'Quote amounts\\u00a0exactly.'\n", line=3),
        Invalid(_CLAUDE + "SYSTEM_PROMPT = '\\ufeffYou are helpful.'\n", line=3),
        Invalid(_CLAUDE + "SYSTEM_PROMPT = 'Rules:\\n\\t- one\\n    - two'\n", line=3),
    ]


_STATUS = {"raw": "unchanged", "stripped": "stripped", "newline": "with a trailing newline"}


def _show(seps: tuple[str, ...]) -> str:
    return ", ".join(repr(s) for s in seps) if seps else "nothing"
