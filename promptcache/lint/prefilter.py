"""The pre-filter: decide from a file's bytes whether it is worth parsing.

Parsing is the cost of a lint run (libcst needs tens of milliseconds per
average file), and most files of a code base never talk to an LLM. A file is
parsed only when its bytes show one of:

- an import of an LLM SDK or framework (anthropic, openai, litellm,
  langchain*, langgraph, llama_index, google.genai, mistralai, cohere, ...);
- a sink-like call (``.messages.create(``, ``.chat.completions.``,
  ``.responses.create(``, also through ``.with_raw_response.`` / ``.with_streaming_response.``,
  ``completion(``) or an ``extra-sinks`` name;
- ``cache_control``;
- a message list that starts with a system message (``[SystemMessage(content=p), UserMessage(...)]``,
  ``[fmt(role="system", ...)``, ``[{"role": "system", ...``: an app's own message helpers, sent through its own
  model wrapper);
- promptcache's own ``PromptBuilder`` or ``Conversation`` (the builder's
  layers are prefix slots, its ``.history(...)`` a conversation sink), imported
  by name or used through ``import promptcache [as pc]``;
- being a **prompt module**: a file imported (``import x`` / ``from .x
  import y``) by a file that imports an LLM SDK or makes a sink-like call.
  Importers are looked for among the files of the run and, for a file named
  on its own (``promptcache lint bot/prompts.py``, as pre-commit and
  changed-files CI do), in its package and import root
  (:func:`imported_by_llm_code`, bytes only).

Every rule needs one of these to fire, so the pre-filter changes speed, not
results (``--no-prefilter`` parses every file; the tests check both agree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from promptcache.lint.config import LintConfig
from promptcache.lint.imports import is_llm_module
from promptcache.lint.sdk_builder import BUILDER_CLASSES, CONVERSATION_CLASSES

_WRAPPER = rb"(?:with_raw_response\.|with_streaming_response\.)?"  # the SDKs' raw / streamed-response wrappers
_SINK_LIKE = re.compile(rb"\.messages\." + _WRAPPER + rb"(?:create|stream|parse)\s*\(|\.chat\.completions\.|\.responses\."
                        + _WRAPPER + rb"(?:create|parse|stream)\s*\(")
# A message list headed by a system message: `[SystemMessage(`, `[fmt(role="system"`, `[{"role": "system"`.
_SYSTEM_FIRST = re.compile(rb"\[\s*(?:SystemMessage\s*\(|[\w.]+\(\s*role\s*=\s*[\"'](?:system|developer)[\"']|"
                           rb"\{\s*[\"']role[\"']\s*:\s*[\"'](?:system|developer)[\"'])")
_COMPLETION_CALL = re.compile(rb"\ba?completion\s*\(")  # litellm; also common outside LLM code
_CACHE_CONTROL = re.compile(rb"cache_control")
# promptcache's own builder and conversation, imported by name, or named after `import promptcache [as pc]`.
_BUILDER_IMPORTS = BUILDER_CLASSES | CONVERSATION_CLASSES
_BUILDER_ATTRIBUTE = re.compile(rb"\.\s*(?:PromptBuilder|Conversation)\b")
_BUILDER_QUALIFIED = re.compile(rb"\bpromptcache\.(?:PromptBuilder|Conversation)\b")
_BOM = b"\xef\xbb\xbf"
# An import statement starts a line, follows a `;` (`import json; import openai`) or the colon of a
# one-line compound statement (`try: import openai`). Names may continue over backslash-newlines, or
# inside parentheses over several lines. A match in a comment or a string only makes the file parsed.
_IMPORT = re.compile(
    rb"(?:^|[;:])[ \t]*(?:"
    rb"from(?:[ \t]+|(?=\.))(?P<from>\.*[\w.]*)[ \t]+import[ \t]*"
    rb"(?:\((?P<pnames>[^)]*)\)|(?P<names>[\w \t,*]*(?:\\\r?\n[\w \t,]*)*))"
    rb"|import[ \t]+(?P<mods>[\w. \t,]+(?:\\\r?\n[\w. \t,]*)*))",
    re.MULTILINE,
)


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*")


def _import_matches(data: bytes) -> list[re.Match]:
    """``_IMPORT.finditer(data)``, tried only where a match can start: a statement's ``import`` keyword sits on
    the line (between two ``\\n``) where its match starts, at the line's start or at a ``;`` / ``:`` of it.
    The same matches, in the same order (a match that runs over later lines hides the starts inside it), at a
    fraction of the cost of trying every byte of the file."""
    out: list[re.Match] = []
    end = 0  # where the last match ended: finditer goes on from there
    at = data.find(b"import")
    while at != -1:
        line_start = data.rfind(b"\n", 0, at) + 1
        line_end = data.find(b"\n", at)
        if line_end == -1:
            line_end = len(data)
        starts = [line_start] + [i for i in range(line_start, line_end) if data[i] in b";:"]
        for start in starts:
            if start >= end:
                match = _IMPORT.match(data, start)
                if match is not None:
                    out.append(match)
                    end = match.end()
        at = data.find(b"import", max(line_end, end))
    return out


def _words(raw: bytes) -> list[str]:
    """The dotted name leading each comma-separated item (``a.b as c, d`` gives ``a.b``, ``d``)."""
    text = re.sub(r"#[^\n]*", "", raw.decode("ascii", "replace")).replace("\\", " ")
    return [m.group() for item in text.split(",") if (m := _DOTTED.match(item.strip()))]


@dataclass
class Scan:
    """What the pre-filter saw in one file's bytes."""

    llm_import: bool = False  # imports an LLM SDK (:func:`promptcache.lint.imports.is_llm_module`)
    sink_like: bool = False
    cache_control: bool = False
    completion_call: bool = False
    imports: list[str] = field(default_factory=list)
    builder: bool = False  # uses promptcache's PromptBuilder or Conversation
    message_list: bool = False  # `[SystemMessage(...), ...]`: parsed, its imports are not prompt modules

    @property
    def passes(self) -> bool:
        """Worth parsing (see the module docstring)."""
        return self.llm_import or self.sink_like or self.cache_control or self.completion_call or self.builder \
            or self.message_list

    @property
    def llm_code(self) -> bool:
        """Builds or sends LLM requests: the files it imports are prompt modules."""
        return self.llm_import or self.sink_like or self.builder

    @property
    def reason(self) -> str:
        if self.llm_import:
            return "LLM SDK import"
        if self.sink_like or self.completion_call:
            return "LLM call"
        if self.builder:
            return "PromptBuilder"
        if self.message_list:
            return "message list"
        return "cache_control" if self.cache_control else ""


def scan(data: bytes, extra_sinks: tuple[str, ...] = ()) -> Scan:
    """Scan one file's bytes (no parsing).

    SDK imports are read from the import statements found (``import json,
    openai``, ``import json; import anthropic``, ``from google import genai``,
    a first line after a UTF-8 BOM) and judged by the same
    :func:`~promptcache.lint.imports.is_llm_module` the parsed module index
    uses, so a file the analysis treats as LLM code always passes.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    sink_like = bool(_SINK_LIKE.search(data))
    if not sink_like:
        for name in extra_sinks:
            last = re.escape(name.rsplit(".", 1)[-1].encode())
            # a qualified name may be imported under another name (`from myapp.llm import complete as ask`)
            if re.search(rb"\b" + last + (rb"\s*\(" if name.startswith("*.") else rb"\b"), data):
                sink_like = True
                break
    imports: list[str] = []
    for match in _import_matches(data):
        if match.group("from") is not None:
            module = match.group("from").decode("ascii", "replace")
            names = _words(match.group("pnames") if match.group("pnames") is not None else match.group("names"))
            imports.append(module)
            imports += [(module if module.endswith(".") else module + ".") + n for n in names]
        else:
            imports += _words(match.group("mods"))
    llm_import = any(is_llm_module(m) for m in imports)
    # The literal checks first: the patterns start with \b, which the regex engine cannot search for quickly.
    return Scan(
        llm_import, sink_like, bool(_CACHE_CONTROL.search(data)),
        b"completion" in data and bool(_COMPLETION_CALL.search(data)), imports,
        any(m in _BUILDER_IMPORTS for m in imports)
        or (b"promptcache." in data and bool(_BUILDER_QUALIFIED.search(data)))
        or (any(m == "promptcache" or m.startswith("promptcache.") for m in imports) and bool(_BUILDER_ATTRIBUTE.search(data))),
        b"ystem" in data and bool(_SYSTEM_FIRST.search(data)),
    )


def prompt_modules(scans: dict[Path, Scan]) -> set[Path]:
    """Files imported by a file that imports an LLM SDK, makes an SDK-shaped call or uses PromptBuilder.

    A bare ``completion(`` call (litellm's name, but a common word) passes the
    pre-filter without making its imports prompt modules.

    Relative imports resolve against the importing file's folder. An absolute
    import ``app.prompts`` resolves to a linted ``.../app/prompts.py`` (or
    ``.../app/prompts/__init__.py``) whose import root (the folder holding
    ``app/``) contains the importing file, as it does when the project runs
    from that root; a same-named module elsewhere is not taken for it.
    """
    found: set[Path] = set()
    if not any(result.llm_code for result in scans.values()):
        return found
    table = module_table(scans)
    for path, result in scans.items():
        if result.llm_code:
            for module in result.imports:
                found.update(resolve(path, module, scans, table))
    return found


def module_table(files) -> dict[str, list[tuple[Path, tuple[str, ...]]]]:
    """``{module suffix: [(file, import root parts)]}`` for :func:`resolve` (``files``: the run's paths)."""
    by_suffix: dict[str, list[tuple[Path, tuple[str, ...]]]] = {}
    for path in files:
        parts = path.parts[:-1] + (path.name[: -len(path.suffix)] if path.suffix else path.name,)
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts) - 1, max(len(parts) - 6, 0), -1):
            by_suffix.setdefault(".".join(parts[i:]), []).append((path, parts[:i]))
    return by_suffix


def resolve(path: Path, module: str, files, table) -> list[Path]:
    """The files of ``files`` that ``import <module>`` in ``path`` may load (see :func:`prompt_modules`);
    ``table`` is :func:`module_table` of ``files``."""
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base = path.parent
        for _ in range(dots - 1):
            base = base.parent
        rest = module[dots:].replace(".", "/")
        return [c for c in ((base / (rest + ".py"), base / rest / "__init__.py") if rest else ()) if c in files]
    return [p for p, root in table.get(module, ()) if p != path and path.parts[: len(root)] == root]


# Names a prompt module is read for: assigned (``SYSTEM_PROMPT = ...``, ``TOOLS: list = ...``) or defined (``def``).
_DEFINED = re.compile(rb"^[ \t]*(?:(?:async[ \t]+)?def[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=))", re.MULTILINE)
_TOOL_WORD = re.compile(r"(?i)tool")
_SEARCH_LIMIT = 5000  # files read when looking for the importers of one named file


def may_hold_prompts(data: bytes, prompt_name_regex: str) -> bool:
    """True when a file defines a prompt-named or tool-named name (what a prompt module contributes)."""
    pattern = re.compile(prompt_name_regex)
    for match in _DEFINED.finditer(data):
        name = (match.group(1) or match.group(2)).decode("ascii", "replace")
        if pattern.search(name) or _TOOL_WORD.search(name):
            return True
    return False


def import_root(path: Path) -> tuple[Path, Path | None]:
    """``(import root, top package)`` of a file: the folder holding its outermost package (folders with
    ``__init__.py``) and that package, or ``(its folder, None)`` when it is not in a package."""
    folder, top = path.parent, None
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        top, folder = folder, folder.parent
    return folder, top


def imported_by_llm_code(path: Path, own: Scan, config: LintConfig, known: dict[Path, Scan] | None = None) -> bool:
    """True when a file of ``path``'s package or import root that uses an LLM SDK imports ``path``
    (:func:`llm_importers` is not empty)."""
    return bool(llm_importers(path, own, config, known))


def llm_importers(path: Path, own: Scan, config: LintConfig, known: dict[Path, Scan] | None = None) -> dict[Path, Scan]:
    """``{file: its scan}`` for the files of ``path``'s package or import root that are LLM code
    (:attr:`Scan.llm_code`) and import ``path``, in search order.

    Searches, reading bytes only (no parsing): every file of the top package
    (honouring ``exclude``, ``.gitignore`` and ``include-tests``) and the files directly in the
    import root (test modules left out unless ``include-tests``); outside a package, the files of ``path``'s folder and of the
    folder above. At most 5,000 files are read. ``known`` are scans already
    made in this run (not read again).
    """
    from promptcache.lint.discovery import discover, is_test_name  # discovery -> config; imported here to keep this module light

    root, top = import_root(path)
    folders = [root]
    if top is None and root.parent != root:
        folders.append(root.parent)
    candidates: list[Path] = []
    if top is not None:
        candidates += [p for p, _ in discover([top], config).files]
    for folder in folders:
        try:
            candidates += sorted(p for p in folder.iterdir() if p.suffix == ".py" and p.is_file()
                                 and (config.include_tests or not is_test_name(p)))
        except OSError:
            continue
    scans = {path: own}
    for candidate in candidates[:_SEARCH_LIMIT]:
        if candidate in scans:
            continue
        found = (known or {}).get(candidate)
        if found is None:
            try:
                found = scan(candidate.read_bytes(), config.extra_sink_names)
            except OSError:
                continue
        scans[candidate] = found
    table = module_table(scans)
    return {p: s for p, s in scans.items()
            if p != path and s.llm_code and any(path in resolve(p, m, scans, table) for m in s.imports)}
