"""Which files a lint run reads.

``discover(paths, config)`` walks each folder (sorted, so runs are
deterministic), keeps ``*.py`` / ``*.pyi`` files, and leaves out paths matched
by ``exclude`` / ``extend-exclude`` (gitignore syntax, relative to the config
folder, or to the walked folder when it lies outside) and, unless
``respect-gitignore = false``, by ``.gitignore`` files: the ones between the
walked folder and its git root, and every one met on the way down (matched
with pathspec's git semantics). A file or folder named on the command line is
always linted, even when an outer ``.gitignore`` or an exclusion lists it (the
exclusions then apply below it only).

Test code (:data:`~promptcache.lint.config.TEST_PATTERNS`: ``tests/``,
``test/``, ``test_*.py``, ``*_test.py``, ``tests.py``, ``conftest.py``) is left out and
counted, unless ``include-tests = true``, or the folder named on the command
line is itself in a test folder (``promptcache lint tests/``), or the file is
named on the command line (without ``--force-exclude``).

Directory symlinks are not followed (no loops). A ``.py`` symlink that
dangles or loops, or a ``.py`` path that is not a regular file, is reported as
PC901 and the walk goes on. A folder named ``x.py`` is a folder.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from promptcache.lint.config import TEST_PATTERNS, LintConfig
from promptcache.lint.errors import unparsable
from promptcache.lint.finding import Finding

SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    """The files to lint (``(path, display path)``, sorted) and the problems met while looking.

    ``named`` holds the files named on the command line themselves (not found
    in a named folder): pre-commit and changed-files CI name only edited files.
    ``tests``: the test files left out (see the module docstring).
    """

    files: list[tuple[Path, str]] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    named: set[Path] = field(default_factory=set)
    tests: int = 0


def display_path(path: Path) -> str:
    """The path relative to the current folder when it is inside it, POSIX style."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


def _spec(patterns) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(patterns)


_TESTS = _spec(TEST_PATTERNS)  # test folders (``tests/``) match a path below them, file patterns its name


def _git_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class _Walker:
    def __init__(self, config: LintConfig, result: Discovery):
        self.config = config
        self.result = result
        self.exclude = _spec([*config.exclude, *config.extend_exclude])
        self.seen: set[str] = set()
        self.excluded_roots: set[Path] = set()  # folders named on the command line inside an excluded area
        self.tests = None if config.include_tests else _TESTS

    def excluded(self, path: Path, is_dir: bool, walk_root: Path) -> bool:
        bases = (walk_root,) if walk_root in self.excluded_roots else (self.config.root, walk_root)
        for base in bases:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if rel in ("", "."):
                return False
            return self.exclude.match_file(rel + ("/" if is_dir else ""))
        return False

    def is_test(self, path: Path, is_dir: bool, base: Path) -> bool:
        """``path`` is test code below ``base`` (always False with ``include-tests``)."""
        if self.tests is None:
            return False
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            return False
        return rel not in ("", ".") and self.tests.match_file(rel + ("/" if is_dir else ""))

    def _in_test_folder(self, root: Path) -> bool:
        """A folder named on the command line lies in a test folder (``promptcache lint tests/``): its test files
        are what the user asked for. Judged by its folders below the current one (``cd ~/test && promptcache lint
        .`` is not in a test folder), else below the config folder, else by its own name."""
        try:
            parts = root.relative_to(Path.cwd()).parts
        except ValueError:
            try:
                parts = root.relative_to(self.config.root).parts or (root.name,)
            except ValueError:
                parts = (root.name,)
        return self.tests is not None and any(self.tests.match_file(f"{part}/") for part in parts)

    def add(self, path: Path) -> None:
        shown = display_path(path)
        if shown not in self.seen:
            self.seen.add(shown)
            self.result.files.append((path, shown))

    def problem(self, path: Path, reason: str) -> None:
        self.result.problems.append(unparsable(display_path(path), reason))

    def named_test(self, path: Path, is_dir: bool) -> bool:
        """A path named on the command line is test code, for ``--force-exclude``: judged by the folders below
        the config folder or the current one (pre-commit names ``tests/helpers.py``), or by its own name."""
        return any(self.is_test(path, is_dir, base) for base in (self.config.root, Path.cwd(), path.parent))

    def walk(self, root: Path, counting: bool = False) -> None:
        """Add the files below ``root`` (``counting``: a test folder; only count its files)."""
        if self.excluded(root, True, root.parent):
            self.excluded_roots.add(root)
        ignores: list[tuple[Path, pathspec.PathSpec]] = []
        if self.config.respect_gitignore:
            git_root = _git_root(root)
            chain = []
            if git_root is not None:
                folder = root
                while True:
                    chain.append(folder)
                    if folder == git_root or folder.parent == folder:
                        break
                    folder = folder.parent
            for folder in reversed(chain[1:]):
                spec = _read_gitignore(folder)
                # A folder named on the command line is linted even when an outer .gitignore lists it.
                if spec is not None and not spec.match_file(root.relative_to(folder).as_posix() + "/"):
                    ignores.append((folder, spec))
        self._walk_dir(root, root, ignores, self.tests is not None and not self._in_test_folder(root), counting)

    def _ignored(self, path: Path, is_dir: bool, ignores) -> bool:
        suffix = "/" if is_dir else ""
        for base, spec in ignores:
            try:
                rel = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + suffix):
                return True
        return False

    def _walk_dir(self, folder: Path, walk_root: Path, ignores, skip_tests: bool, counting: bool = False) -> None:
        """Add the files below ``folder``; ``counting``: a test folder, whose files are only counted."""
        if self.config.respect_gitignore:
            spec = _read_gitignore(folder)
            if spec is not None:
                ignores = [*ignores, (folder, spec)]
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.problem(folder, f"cannot list this folder ({exc.strerror}); fix its permissions or exclude it")
            return
        for entry in entries:
            path = Path(entry.path)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_link, is_dir = False, False
            if is_dir:
                if not self.excluded(path, True, walk_root) and not self._ignored(path, True, ignores):
                    test = counting or (skip_tests and self.is_test(path, True, walk_root))
                    self._walk_dir(path, walk_root, ignores, skip_tests, test)
                continue
            if not entry.name.endswith(SUFFIXES):
                continue
            if self.excluded(path, False, walk_root) or self._ignored(path, False, ignores):
                continue
            if counting or (skip_tests and self.is_test(path, False, walk_root)):
                self.result.tests += 1
            elif is_link:
                self._symlink(path)
            else:
                self._file(path)

    def _symlink(self, path: Path) -> None:
        try:
            target = path.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self.problem(path, "is a symbolic link loop; remove the link or exclude it")
            else:
                self.problem(path, f"is a dangling symbolic link (to {os.readlink(path)!r}); remove it or exclude it")
            return
        if stat.S_ISDIR(target.st_mode):
            return  # directory links are not followed
        self._file(path, target.st_mode)

    def _file(self, path: Path, mode: int | None = None) -> None:
        if mode is None:
            try:
                mode = path.stat().st_mode
            except OSError as exc:
                self.problem(path, f"cannot be read ({exc.strerror})")
                return
        if stat.S_ISREG(mode):
            self.add(path)
        else:
            self.problem(path, "is not a regular file (a FIFO, socket or device); exclude it")


def _read_gitignore(folder: Path) -> pathspec.PathSpec | None:
    ignore = folder / ".gitignore"
    try:
        lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return _spec(lines)


def discover(paths: list[Path], config: LintConfig, force_exclude: bool = False) -> Discovery:
    """Find the files to lint under ``paths``; see the module docstring for the rules. ``force_exclude``
    applies ``exclude`` / ``extend-exclude`` to files named in ``paths`` too (as pre-commit names them)."""
    result = Discovery()
    walker = _Walker(config, result)
    for raw in paths:
        path = Path(os.path.abspath(raw))
        if not path.is_dir() and _left_out(walker, path, force_exclude):
            continue
        if path.is_symlink() and not path.exists():
            walker._symlink(path)
        elif path.is_dir():
            if force_exclude and walker.excluded(path, True, path.parent):
                continue
            walker.walk(path, counting=force_exclude and walker.named_test(path, True))
        elif path.exists():
            walker._file(path)
            result.named.add(path)
        else:
            result.problems.append(unparsable(display_path(path), "does not exist; check the path"))
    result.files.sort(key=lambda item: item[1])
    return result


def _left_out(walker: _Walker, path: Path, force_exclude: bool) -> bool:
    """With ``force_exclude``, the file named ``path`` is excluded, or test code (counted)."""
    if not force_exclude:
        return False
    if walker.excluded(path, False, path.parent):
        return True
    if walker.named_test(path, False):
        walker.result.tests += 1
        return True
    return False


def named_file(path: Path, config: LintConfig, force_exclude: bool = False) -> Discovery:
    """The :class:`Discovery` of one file named for ``--stdin-filename`` (it need not exist); ``force_exclude``
    leaves it out when it is excluded or test code, as for a file named on the command line."""
    result = Discovery()
    if not _left_out(_Walker(config, result), path, force_exclude):
        result.files.append((path, display_path(path)))
        result.named.add(path)
    return result


def is_test_name(path: Path) -> bool:
    """``path``'s file name is a test module's (``test_x.py``, ``conftest.py``): for the pre-filter's search of a
    named file's importers, which skips them unless ``include-tests``."""
    return _TESTS.match_file(path.name)  # a bare name: only the file patterns can match it
