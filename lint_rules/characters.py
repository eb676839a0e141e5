"""PC404-PC406: line endings, strip asymmetry and invisible characters in prompt text.

The second half of the PC4xx family (:mod:`lint_rules.whitespace` holds PC401-PC403): characters a
reader cannot see make two copies of one prompt two prefixes and two cache entries.
"""

from __future__ import annotations

import libcst as cst

from promptcache.lint import literals as L
from promptcache.lint import text_fixes as T
from promptcache.lint.finding import Applicability, Severity
from promptcache.lint.rule import Invalid, NodeFix
from promptcache.lint.text_rule import TextRule

_CLAUDE = "import anthropic\nclient = anthropic.Anthropic()\n"
_OPENAI = "from openai import OpenAI\nclient = OpenAI()\n"
_BUILDER = "from promptcache import PromptBuilder\n"


class CrlfInPrompt(TextRule):
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
            found = L.pieces(use.node)
            for i, piece in enumerate(found):
                if any("\r" in sent for sent in use.as_sent(piece.value)):
                    crlf_across = i + 1 < len(found) and found[i + 1].value.startswith("\n")  # 'A\r' '\nB'
                    fix = self.literal_fix(piece.node, T.unix_line_ends, "Use \\n line endings in the literal", crlf_across)
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


class StripAsymmetry(TextRule):
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
            if slot.kind != "system" or slot.requires is not None:
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


class InvisibleCharacters(TextRule):
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
