"""``--diff-since REF``: the lines changed since a git ref, to report only the findings on them.

git runs as a subprocess: ``git diff --unified=0 --no-ext-diff REF --`` gives
the added or changed lines of every tracked file (the working tree against
REF, so uncommitted edits count), and ``git ls-files --others
--exclude-standard`` the untracked files, which count as changed throughout.
A deleted line changes nothing that can be reported.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from promptcache.lint.finding import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_FILE = re.compile(r"^\+\+\+ (?:b/(.*)|/dev/null)$", re.MULTILINE)
WHOLE_FILE = None  # an untracked file: every line counts as changed


class GitError(Exception):
    """git is missing, the folder is not in a repository, or the ref is unknown; the message says which."""


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace", check=False)
    except FileNotFoundError:
        raise GitError("--diff-since needs git, and git is not installed (or not on PATH)") from None
    if done.returncode != 0:
        raise GitError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"git {args[0]} failed")
    return done.stdout


def changed_lines(ref: str, folder: Path) -> dict[Path, set[int] | None]:
    """``{absolute path: changed 1-based lines}`` since ``ref`` for the repository holding ``folder``;
    ``None`` as the lines of an untracked file. Raises :class:`GitError`."""
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], folder).strip())
    except GitError as exc:
        raise GitError(f"--diff-since needs a git repository, and {folder} is not in one ({exc})") from None
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], top)
    except GitError:
        raise GitError(f"git does not know the ref {ref!r}: give a commit, branch or tag (e.g. origin/main, HEAD~1)") from None
    diff = _git(["diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-renames", ref, "--"], top)
    changed: dict[Path, set[int] | None] = {}
    current: set[int] | None = None
    for line in diff.splitlines():
        file_match = _FILE.match(line)
        if file_match:
            name = file_match.group(1)
            current = changed.setdefault((top / name).resolve(), set()) if name else None
            continue
        hunk = _HUNK.match(line)
        if hunk and current is not None:
            start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
            current.update(range(start, start + count))
    for name in _git(["ls-files", "--others", "--exclude-standard", "-z"], top).split("\0"):
        if name:
            changed[(top / name).resolve()] = WHOLE_FILE
    return changed


def changed_in(ref: str, paths: Iterable[Path]) -> dict[Path, set[int] | None]:
    """:func:`changed_lines` for the repositories holding ``paths`` (files or folders, each looked up from its own
    folder, not the current one): a path outside the current folder's repository is diffed in its own. Raises
    :class:`GitError` when one of them is in no repository."""
    changed: dict[Path, set[int] | None] = {}
    tops: dict[Path, Path] = {}  # folder -> its repository's top: one `git rev-parse` per folder
    diffed: set[Path] = set()
    for path in paths:
        path = Path(path).resolve()
        if not path.exists():
            continue  # a PC901 finding of the run, always shown; or a --stdin-filename not saved yet
        folder = path if path.is_dir() else path.parent
        if folder not in tops:
            try:
                tops[folder] = Path(_git(["rev-parse", "--show-toplevel"], folder).strip()).resolve()
            except GitError as exc:
                raise GitError(f"--diff-since needs a git repository, and {path} is not in one ({exc})") from None
        if tops[folder] not in diffed:
            diffed.add(tops[folder])
            changed.update(changed_lines(ref, tops[folder]))
    return changed


def on_changed_lines(findings: Iterable[Finding], changed: dict[Path, set[int] | None]) -> list[Finding]:
    """The findings whose lines (``line`` to ``end_line``, the lines of the sources a data-flow finding names, and
    the lines its fix rewrites: PC301 reported at the set, its ``sorted()`` on the ``tools=`` line) include a
    changed line (any line of an untracked file); PC901 findings and those of a path that does not exist (stdin
    named for a new file) always."""
    kept = []
    for finding in findings:
        path = Path(finding.path).resolve()
        if finding.code == "PC901" or not path.exists():
            kept.append(finding)  # a file that could not be read, or stdin named for a file not saved yet
            continue
        lines = changed.get(path, set())
        rewritten = [n for e in (finding.fix.edits if finding.fix else ()) if not e.content.lstrip().startswith(("import ", "from "))
                     for n in range(e.start_line, e.end_line + 1)]  # not an import the fix adds
        touched = (*range(finding.line, finding.end_line + 1), *finding.source_lines, *rewritten)
        if lines is WHOLE_FILE or any(n in lines for n in touched):
            kept.append(finding)
    return kept


__all__ = ["GitError", "changed_in", "changed_lines", "on_changed_lines"]
