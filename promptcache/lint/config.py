"""Lint configuration: ``[tool.promptcache.lint]`` in pyproject.toml, or ``[lint]`` in promptcache.toml.

The nearest configuration file wins, searching from the first linted path
upwards (in one folder ``promptcache.toml`` wins over ``pyproject.toml``; a
``pyproject.toml`` without ``[tool.promptcache.lint]`` is skipped, as ruff
does). Validation is strict: an unknown key, an unknown rule code, a wrong
type or a regex that does not compile raises :class:`ConfigError` naming the
file and the key (the CLI exits 2). There is no silent fallback.

Keys (kebab-case, like ruff):

``select`` / ``extend-select`` / ``ignore`` (codes or prefixes: ``PC1``, ``PC203``, ``ALL``),
``per-file-ignores`` (glob -> codes), ``exclude`` (replaces the default
exclusions) / ``extend-exclude`` (gitignore-style patterns),
``respect-gitignore`` (bool), ``include-tests`` (bool, default false: see
:data:`TEST_PATTERNS`), ``fail-on`` (error / warning / info),
``prompt-name-regex``, ``volatile-name-regex``, ``extra-sinks`` (qualified
names like ``myapp.llm.complete``, methods like ``myapp.llm.LLM.chat``, ``*.suffix.patterns``, or tables that
map a wrapper's arguments: :mod:`promptcache.lint.extra_sinks`), ``extra-volatile-sources`` (qualified names).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from promptcache.lint.extra_sinks import EntryError, ExtraSink, check_name, parse_entry
from promptcache.lint.finding import Severity
from promptcache.lint.sources import DEFAULT_PROMPT_NAME_REGEX, DEFAULT_VOLATILE_NAME_REGEX

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".eggs",
    "*.egg-info",
)

# Test code, left out unless ``include-tests = true`` (``--include-tests``) or a test folder or file is named
# on the command line. A test's requests are fixtures, not production traffic: of 135 findings on 37 real
# code bases (2026-12-04), 17 were in tests, and none was a production cache breaker (agents run against
# pydantic-ai's FunctionModel, fixed fixture text, onyx's test that busts its prompt cache on purpose); one
# more (a PC402 in MetaGPT's ut_writer.py) was in a prompt module that only a test imports, no longer parsed.
# Precedents: Semgrep's default .semgrepignore skips /tests and /test (semgrep.dev/docs/ignoring-files-folders-code);
# gosec skips test files unless -tests. The file names: pytest's default ``python_files`` (test_*.py, *_test.py),
# Django's ``tests.py``, pytest's ``conftest.py``.
TEST_PATTERNS: tuple[str, ...] = ("tests/", "test/", "test_*.py", "*_test.py", "tests.py", "conftest.py")


class ConfigError(Exception):
    """A configuration or usage problem; the message says what to change. CLI exit code 2."""


@dataclass(frozen=True)
class LintConfig:
    """The resolved settings of one lint run. ``root`` is the folder paths in the config are relative to."""

    root: Path = field(default_factory=Path.cwd)
    source: Path | None = None
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    include_tests: bool = False
    fail_on: Severity = Severity.WARNING
    prompt_name_regex: str = DEFAULT_PROMPT_NAME_REGEX
    volatile_name_regex: str = DEFAULT_VOLATILE_NAME_REGEX
    extra_sinks: tuple[ExtraSink, ...] = ()
    extra_volatile_sources: tuple[str, ...] = ()

    @property
    def extra_sink_names(self) -> tuple[str, ...]:
        """The names the ``extra-sinks`` entries match calls by (the pre-filter and the unmatched-entry warning)."""
        return tuple(sink.call for sink in self.extra_sinks)

    def selected(self, codes: Iterable[str], always: Iterable[str] = ()) -> set[str]:
        """The codes enabled out of ``codes``: (select + extend-select) minus ignore, by prefix.

        ``always`` are codes that ``select`` cannot leave out (PC901): they are
        enabled unless ``ignore`` names them (by code, prefix or ``ALL``).
        """
        codes = list(codes)
        chosen = _expand(self.select, codes) | _expand(self.extend_select, codes) | (set(always) & set(codes))
        return chosen - _expand(self.ignore, codes)

    def validate_codes(self, codes: Iterable[str] | Mapping[str, type]) -> None:
        """Raise ConfigError for a selector that matches no known rule code; given the rules by code (a mapping),
        a selector that is a rule's name says which code it is."""
        names = {getattr(rule, "name", ""): code for code, rule in codes.items()} if isinstance(codes, dict) else {}
        codes = list(codes)
        for key, selectors in (
            ("select", self.select),
            ("extend-select", self.extend_select),
            ("ignore", self.ignore),
            *(("per-file-ignores", s) for _, s in self.per_file_ignores),
        ):
            for selector in selectors:
                if selector != "ALL" and not any(c.startswith(selector) for c in codes):
                    if selector.lower() in names:
                        raise ConfigError(f"{self._where()}{key}: {selector.lower()!r} is the name of {names[selector.lower()]}; "
                                          "rules are selected by code or code prefix (run `promptcache rules`)")
                    raise ConfigError(
                        f"{self._where()}{key}: unknown rule code {selector!r}; "
                        f"known codes are {', '.join(sorted(codes))} (run `promptcache rules`)"
                    )

    def _where(self) -> str:
        return f"{self.source}: " if self.source is not None else ""

    def with_overrides(self, **changes) -> LintConfig:
        """A copy with command-line values applied (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _expand(selectors: Iterable[str], codes: list[str]) -> set[str]:
    out: set[str] = set()
    for selector in selectors:
        out |= {c for c in codes if selector == "ALL" or c.startswith(selector)}
    return out


_KEYS = {
    "select": "codes",
    "extend-select": "codes",
    "ignore": "codes",
    "per-file-ignores": "table",
    "exclude": "strings",
    "extend-exclude": "strings",
    "respect-gitignore": "bool",
    "include-tests": "bool",
    "fail-on": "severity",
    "prompt-name-regex": "regex",
    "volatile-name-regex": "regex",
    "extra-sinks": "sinks",
    "extra-volatile-sources": "names",
}


_TABLES = ("lint",)  # the tables promptcache reads from promptcache.toml / [tool.promptcache]


def _lint_table(path: Path, data: dict) -> dict | None:
    """The lint table of a parsed config file (None: a pyproject.toml without ``[tool.promptcache]``).

    Raises ConfigError for a key or table promptcache does not know at the top
    of ``promptcache.toml`` or in ``[tool.promptcache]`` (``select = [...]``
    without ``[lint]``, a misspelt ``[lnit]``): a silently ignored setting is
    worse than an error.
    """
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "promptcache" not in tool:
            return None
        table, where = tool["promptcache"], "[tool.promptcache]"
    else:
        table, where = data, "the top level"
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    # `[tool.promptcache.providers]` is the provider rules' table (promptcache.providers.userfile), not lint's
    known = (*_TABLES, "providers") if path.name == "pyproject.toml" else _TABLES
    unknown = sorted(set(table) - set(known))
    if unknown:
        hint = "[tool.promptcache.lint]" if path.name == "pyproject.toml" else "[lint]"
        raise ConfigError(
            f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)} at {where}; "
            f"lint settings go in the {hint} table (known tables: {', '.join(known)})"
        )
    return table.get("lint", {})


def find_config(start: Path) -> tuple[Path, dict] | None:
    """The nearest config file at or above ``start`` and its lint table, or None.

    A ``promptcache.toml`` always counts; a ``pyproject.toml`` counts when it
    has a ``[tool.promptcache]`` table. Raises ConfigError for unknown keys there.
    """
    start = _resolved(start)
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        for name in ("promptcache.toml", "pyproject.toml"):
            path = candidate / name
            if path.is_file():
                table = _lint_table(path, _read(path))
                if table is not None:
                    return path, table
    return None


def _resolved(path: Path) -> Path:
    """``path.resolve()``, or its absolute form when it is a symbolic link loop (discovery reports that as PC901)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {exc}") from None


def load_config(config_file: Path | None = None, start: Path | None = None, overrides: Iterable[str] = ()) -> LintConfig:
    """Load and validate the configuration.

    ``config_file`` names a file explicitly (``--config``); otherwise the
    nearest one above ``start`` (default: the current folder) is used, and
    the defaults apply when there is none. ``overrides`` are ``key = value``
    TOML lines (ruff's ``--config "key = value"``) that win over the file.
    Raises :class:`ConfigError`.
    """
    if config_file is not None:
        if config_file.is_dir():
            raise ConfigError(f"{config_file}: is a folder; give the pyproject.toml or promptcache.toml file in it")
        if not config_file.is_file():
            raise ConfigError(f"{config_file}: configuration file not found")
        table = _lint_table(config_file, _read(config_file))
        found: tuple[Path, dict] | None = (config_file.resolve(), table or {})
    else:
        found = find_config(start or Path.cwd())
    changes = override_table(overrides)
    if found is None:
        base = _resolved(start or Path.cwd())
        root = base if base.is_dir() else base.parent
        return replace(from_table(changes), root=root) if changes else LintConfig(root=root)
    path, table = found
    return from_table({**table, **changes}, path)  # the overrides were checked alone: an error is the file's


def is_override(value: str) -> bool:
    """True when a ``--config`` value is a ``key = value`` line rather than a file's path: it has an ``=`` and
    names no existing file (a line that is not valid TOML is then reported as such, not as a missing file)."""
    return "=" in value and not Path(value).is_file()


def override_table(lines: Iterable[str]) -> dict:
    """The lint table the ``key = value`` lines set (a ``lint.`` in front of a key, as ruff writes it, dropped)."""
    table: dict = {}
    for line in lines:
        try:
            parsed = tomllib.loads(line)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--config {line!r}: not a file, nor a valid `key = value` TOML line ({exc}); "
                              "strings need quotes, as in extra-sinks = [\"myapp.llm.LLM.chat\"]") from None
        table.update(parsed.get("lint", {}) if set(parsed) == {"lint"} and isinstance(parsed["lint"], dict) else parsed)
    try:
        from_table(table)
    except ConfigError as exc:
        raise ConfigError(f"--config: {exc}") from None
    return table


def from_table(table: dict, path: Path | None = None) -> LintConfig:
    """Build a :class:`LintConfig` from a parsed lint table; raises ConfigError on any bad key or value."""
    where = f"{path}: " if path is not None else ""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}the lint configuration must be a table")
    values: dict = {}
    for key, raw in table.items():
        kind = _KEYS.get(key)
        if kind is None:
            close = difflib.get_close_matches(key.replace("_", "-"), list(_KEYS), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"{where}unknown key {key!r} in the lint configuration; {hint}known keys: {', '.join(sorted(_KEYS))}"
            )
        values[key.replace("-", "_")] = _coerce(kind, key, raw, where)
    return LintConfig(root=path.parent if path is not None else Path.cwd(), source=path, **values)


def _coerce(kind: str, key: str, raw, where: str):
    def fail(expected: str):
        raise ConfigError(f"{where}{key}: expected {expected}, got {raw!r}")

    if kind in ("codes", "strings"):
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            fail("a list of strings")
        if kind == "codes":  # `pc101` as on the command line (`--select pc1`)
            raw = [code.upper() for code in raw]
            for code in raw:
                if code != "ALL" and not re.fullmatch(r"PC\d{0,3}", code):
                    raise ConfigError(f"{where}{key}: unknown rule code {code!r} (codes look like PC101, or a prefix like PC1)")
        return tuple(raw)
    if kind in ("sinks", "names"):
        if not isinstance(raw, list):  # `[tool.promptcache.lint.extra-sinks]`: one table, not an array of them
            fail("a list of names" + (" or tables (in pyproject.toml, one [[tool.promptcache.lint.extra-sinks]] "
                                      "per table)" if kind == "sinks" and isinstance(raw, dict) else ""))
        try:
            if kind == "sinks":
                entries = tuple(parse_entry(entry) for entry in raw)
                twice = sorted(call for call, n in Counter(e.call for e in entries).items() if n > 1)
                if twice:
                    raise EntryError(f"{twice[0]!r} is named twice; give one entry per call (a table maps all its "
                                     "options)")
                return entries
            return tuple(check_name(name, wildcard=False) if isinstance(name, str) else fail("a list of names")
                         for name in raw)
        except EntryError as exc:
            raise ConfigError(f"{where}{key}: {exc}") from None
    if kind == "table":
        if not isinstance(raw, dict):
            fail("a table of glob = [codes]")
        out = []
        for glob, codes in raw.items():
            if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                raise ConfigError(f"{where}{key}.{glob}: expected a list of rule codes, got {codes!r}")
            codes = [code.upper() for code in codes]
            for code in codes:
                if code != "ALL" and not re.fullmatch(r"PC\d{0,3}", code):
                    raise ConfigError(f"{where}{key}.{glob}: unknown rule code {code!r}")
            out.append((glob, tuple(codes)))
        return tuple(out)
    if kind == "bool":
        if not isinstance(raw, bool):
            fail("true or false")
        return raw
    if kind == "severity":
        try:
            return Severity.parse(raw if isinstance(raw, str) else "")
        except ValueError:
            fail('"error", "warning" or "info"')
    if kind == "regex":
        if not isinstance(raw, str):
            fail("a regular expression string")
        try:
            re.compile(raw)
        except re.error as exc:
            raise ConfigError(f"{where}{key}: invalid regular expression {raw!r}: {exc}") from None
        return raw
    raise AssertionError(kind)  # pragma: no cover
