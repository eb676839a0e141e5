"""PC901: a file that cannot be read or parsed (an engine code, not a pattern rule)."""

from __future__ import annotations

from promptcache.lint.finding import Finding, Severity
from promptcache.lint.rule import LintRule


class UnparsableFile(LintRule):
    """
    ## What it does
    Reports a file that the linter could not read, or that the pre-filter
    selected and libcst could not parse: NUL bytes, bytes that are not valid
    UTF-8 (or not valid in the encoding the file declares), a syntax error, a
    dangling symbolic link or a symbolic link loop.

    ## Why is this bad?
    A file that is not analysed can hide any of the cache-breaking patterns.
    The run goes on with the other files, and exits with code 2 so CI notices.

    ## Example
    ```python
    import anthropic
    def ask(q):
        return anthropic.Anthropic().messages.create(model="m", messages=[q]  # missing ")"
    ```

    ## Use instead
    Fix the syntax error, re-save the file as UTF-8 (or declare its encoding
    with a ``# -*- coding: ... -*-`` line), or exclude generated and test-data
    files with ``exclude`` / ``extend-exclude`` in ``[tool.promptcache.lint]``.

    ## When it does not fire
    It is reported whatever ``select`` says (a file that is not analysed hides
    every rule); only an explicit ``ignore = ["PC901"]`` (or a
    ``per-file-ignores`` entry) turns it off. An empty file is fine. Files the pre-filter skips are never parsed, so a
    syntax error in code without LLM calls is only found with ``--no-prefilter``.
    """

    code = "PC901"
    name = "unparsable-file"
    severity = Severity.ERROR
    always_selected = True
    message = "cannot lint this file"
    VALID = ["", "import anthropic\n", "# -*- coding: latin-1 -*-\nimport openai\nNAME = \"caf\xe9\"\n"]
    INVALID = ["import anthropic\ndef broken(:\n", "import openai\nx = (1,\n", "import anthropic\nclass\n"]


def unparsable(path: str, reason: str, line: int = 1, column: int = 1) -> Finding:
    """A PC901 finding for ``path``; ``reason`` says what is wrong and what to do."""
    return Finding(
        code=UnparsableFile.code,
        name=UnparsableFile.name,
        severity=UnparsableFile.severity,
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        message=reason,
    )
