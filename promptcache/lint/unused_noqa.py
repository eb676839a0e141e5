"""PC900: a ``# noqa: PC...`` that silences nothing (an engine code: it needs every rule's results).

The engine (:mod:`promptcache.lint.filelint`) records which ``(line, code)``
pairs a suppression comment really silenced, then asks :func:`unused` for the
codes of each comment that silenced nothing. Only promptcache's own codes are
judged (``E501`` or ``BLE001`` belong to other linters), only codes that this
run enabled (a code left out by ``select`` cannot be judged), and never a bare
``# noqa``, which may be meant for another linter.
"""

from __future__ import annotations

from collections.abc import Collection, Set

from promptcache.lint.finding import Applicability, Edit, Finding, Fix, Severity
from promptcache.lint.rule import LintRule
from promptcache.lint.suppression import NoqaComment

_PREFIX = "PC"


class UnusedNoqa(LintRule):
    """
    ## What it does
    Finds a ``# noqa: PC...`` comment (or one code of it) that silences no
    finding on its line, and codes that are not promptcache rules.

    ## Why is this bad?
    A stale suppression hides the next real cache breaker on that line: the
    code it was written for is gone, but a new timestamp or an unsorted tool
    list there would still be silenced. Unknown codes are usually typos and
    silence nothing.

    ## Example
    ```python
    SYSTEM_PROMPT = "You answer billing questions."  # noqa: PC101
    ```

    ## Use instead
    ```python
    SYSTEM_PROMPT = "You answer billing questions."
    ```

    ## Fix safety
    The fix removes the unused codes from the comment (the whole ``# noqa``
    when none is left; other linters' codes stay). It is safe: no prompt
    byte changes.

    ## When it does not fire
    A bare ``# noqa``; codes of other linters; promptcache codes that this run
    did not enable (``--select``) or that a file-level ``# promptcache: noqa``
    already silences; a ``# noqa: PC101`` on the line of a value
    that reaches a prompt slot on another line (it silences that source).
    Files that are not parsed (the pre-filter skipped them) are not checked.
    """

    code = "PC900"
    name = "unused-noqa"
    severity = Severity.INFO  # a stale suppression is not a cache breaker: shown, and fixed by --fix, not failing CI
    fixable = "safe"
    message = "unused `# noqa` code{s}: {codes} {verb} nothing on this line; remove {them}"
    VALID = [
        "import anthropic\nimport datetime\nSYSTEM_PROMPT = f'Now: {datetime.datetime.now()}'  # noqa: PC101\n",
        "import anthropic\nSYSTEM_PROMPT = 'Be brief.'  # noqa\n",
        "import anthropic\nSYSTEM_PROMPT = 'Be brief.'  # noqa: E501, BLE001\n",
    ]
    INVALID = [
        "import anthropic\nSYSTEM_PROMPT = 'Be brief.'  # noqa: PC101\n",
        "import anthropic\nimport datetime\nSYSTEM_PROMPT = f'Now: {datetime.datetime.now()}'  # noqa: PC101, PC406\n",
        "import anthropic\nSYSTEM_PROMPT = 'Be brief.'  # noqa: PC999, E501\n",
    ]


def unused(
    comments: list[NoqaComment],
    used: Set[tuple[int, str]],
    enabled: Collection[str],
    known: Collection[str],
    path: str,
    lines: list[str],
) -> list[Finding]:
    """One PC900 finding per comment with unused promptcache codes, with a safe fix that removes them.

    ``used`` holds the ``(line, code)`` pairs a comment silenced; ``enabled`` the codes this run checks;
    ``known`` every registered code; ``lines`` the file's lines (no line ends), to build the edit.
    """
    findings = []
    for comment in comments:
        if comment.codes is None:
            continue
        stale = [
            c for c in comment.codes
            if c.startswith(_PREFIX) and c != UnusedNoqa.code
            and (c not in known or (c in enabled and not any((row, c) in used for row in comment.rows)))
        ]
        if not stale:
            continue
        unknown = [c for c in stale if c not in known]
        shown = ", ".join(f"`{c}`" + (" (not a promptcache rule)" if c in unknown else "") for c in stale)
        many = len(stale) > 1
        message = UnusedNoqa.message.format(
            s="s" if many else "", codes=shown, verb="silence" if many else "silences", them="them" if many else "it"
        )
        keep = [c for c in comment.codes if c not in stale]
        edit = _edit(comment, keep, lines[comment.line - 1] if comment.line <= len(lines) else "")
        findings.append(
            Finding(
                code=UnusedNoqa.code,
                name=UnusedNoqa.name,
                severity=UnusedNoqa.severity,
                path=path,
                line=comment.line,
                column=comment.start + 1,
                end_line=comment.line,
                end_column=comment.end + 1,
                message=message,
                fix=Fix(f"Remove the unused code{'s' if many else ''} {', '.join(stale)}", Applicability.SAFE, (edit,)),
            )
        )
    return findings


def _edit(comment: NoqaComment, keep: list[str], text: str) -> Edit:
    """The edit that leaves ``keep`` in the directive, or removes it (and the comment, when nothing else is in it)."""
    row = comment.line
    if keep:
        return Edit(row, comment.start + 1, row, comment.end + 1, "# noqa: " + ", ".join(keep))
    rest = text[comment.end : comment.comment_end]
    if comment.start == comment.comment_start and not rest.strip():
        start = len(text[: comment.start].rstrip())  # the spaces before the comment go with it
        return Edit(row, start + 1, row, comment.comment_end + 1, "")
    if comment.start == comment.comment_start:  # `# noqa: PC101 - reason` -> `# - reason`
        after = len(rest) - len(rest.lstrip())
        return Edit(row, comment.start + 1, row, comment.end + after + 1, "# ")
    start = len(text[: comment.start].rstrip())  # `# type: ignore  # noqa: PC101` -> `# type: ignore`
    return Edit(row, start + 1, row, comment.end + 1, "")


__all__ = ["UnusedNoqa", "unused"]
