"""The lint result cache: findings per file content, so a second run over unchanged files parses nothing.

Like ruff's ``.ruff_cache``, the cache lives in ``.promptcache_cache/`` beside
the configuration (or in the current folder), with a ``.gitignore`` of ``*``
inside. One JSON file per *settings key*: a hash of the effective
configuration, the selected rule codes, the promptcache and libcst versions
and the contents of the lint engine's modules and of every registered rule's
module, plugins included (so an edited rule
invalidates it even without a version bump, and two installs of one version
share it: a cache restored in CI is read). The ``MAX_KEYS`` most recently
written cache files are kept; older ones are removed when one is written. Inside, entries
are keyed by the SHA-256 of a file's bytes and whether it is linted as a
prompt module; an entry holds the findings with their fixes, without the
path (the run that reads it gives the path), and the file's cross-module
facts (:attr:`~promptcache.lint.filelint.FileResult.depends` and ``uses``), never
a verdict that depends on other files: the run settles those afresh
(:mod:`promptcache.lint.cross_module`), so an edited importer changes it. The pre-filter's verdict on each
file (:class:`~promptcache.lint.prefilter.Scan`, the costly part of a run
over code without LLM calls) is kept the same way, by content hash.

A cache that cannot be read is treated as empty, and one that cannot be
written is skipped: the cache never changes what a run reports.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import tempfile
from importlib import resources
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from promptcache.lint import prefilter
from promptcache.lint.config import LintConfig
from promptcache.lint.filelint import FileResult
from promptcache.lint.finding import Applicability, Edit, Finding, Fix, Severity
from promptcache.lint.prefilter import Scan
from promptcache.lint.request_size import Size, Weight
from promptcache.lint.rule import LintRule

CACHE_DIR_NAME = ".promptcache_cache"
MAX_ENTRIES = 50_000  # entries kept per settings key; those this run did not use go first
MAX_KEYS = 8  # cache files (settings keys) kept in one folder, the most recently written


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        return "unknown"


@functools.cache
def _code_stamp() -> str:
    """SHA-256 of the sources of the lint engine, of every registered rule's module (built-in and plugin rules
    alike) and of the providers data, once per process."""
    import promptcache.lint as engine
    from promptcache.lint.registry import discover

    # Named by module, not by path: installs of one version in two places share the key.
    files = {f"promptcache.lint/{path.relative_to(folder).as_posix()}": path
             for folder in map(Path, engine.__path__) for path in folder.rglob("*.py")}
    for rule in discover().values():
        module = sys.modules.get(rule.__module__)
        if module is not None and getattr(module, "__file__", None):
            files[rule.__module__] = Path(module.__file__)
    stamp = hashlib.sha256()
    for name, path in sorted(files.items()):
        stamp.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    # the providers data: PC102 and PC603/PC604 read models' minimum cacheable lengths from it
    stamp.update(resources.files("promptcache").joinpath("data/providers.toml").read_bytes())
    return stamp.hexdigest()


def settings_key(config: LintConfig, rules: list[type[LintRule]]) -> str:
    """The hash that names one cache file (see the module docstring)."""
    fields = {f.name: repr(getattr(config, f.name)) for f in dataclasses.fields(config)}
    payload = json.dumps(
        {"config": fields, "rules": [r.code for r in rules], "promptcache": _version("promptcache"),
         "libcst": _version("libcst"), "code": _code_stamp()},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes (hex): the key of its scan, and of its findings with :func:`entry_key`."""
    return hashlib.sha256(data).hexdigest()


def entry_key(file_digest: str, prompt_module: bool) -> str:
    """The key of one file's findings: its :func:`digest`, and ``:p`` for a prompt module."""
    return file_digest + (":p" if prompt_module else "")


def cache_dir_for(config: LintConfig) -> Path:
    """``.promptcache_cache`` beside the configuration file, or in the current folder without one."""
    root = config.root if config.source is not None else Path.cwd()
    return Path(root) / CACHE_DIR_NAME


class ResultCache:
    """One settings key's entries: :meth:`get` before linting a file, :meth:`put` after, :meth:`save` at the end."""

    def __init__(self, folder: Path, key: str):
        self.folder = folder
        self.file = folder / f"lint-{key}.json"
        self.entries: dict[str, dict] = {}
        self.scans: dict[str, dict] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            loaded = json.loads(self.file.read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and isinstance(loaded.get("findings"), dict) and isinstance(loaded.get("scans"), dict):
                self.entries, self.scans = loaded["findings"], loaded["scans"]
        except (OSError, ValueError):
            pass

    def scan(self, digest: str, data: bytes, extra_sinks) -> Scan:
        """The pre-filter's scan of ``data`` (whose SHA-256 is ``digest``), from the cache or made now."""
        self.used.add(digest)
        found = self.scans.get(digest)
        if isinstance(found, dict):
            try:
                return Scan(**found)
            except TypeError:
                pass
        made = prefilter.scan(data, extra_sinks)
        self.scans[digest] = dataclasses.asdict(made)
        self.dirty = True
        return made

    def get(self, key: str, path: str) -> FileResult | None:
        """The cached result of the file with entry ``key``, its findings given ``path``; None on a miss."""
        found = self.entries.get(key)
        if not isinstance(found, dict):
            return None
        try:
            findings = [_finding(item, path) for item in found["findings"]]
            depends = {(code, line): tuple(symbols) for code, line, symbols in found.get("depends", ())}
            uses = {qualified: tuple(kinds) for qualified, kinds in found.get("uses", {}).items()}
            weights = {(code, line): Weight(Size(chars, frozenset(symbols)), minimum, model)
                       for code, line, chars, symbols, minimum, model in found.get("weights", ())}
            sizes = {name: int(chars) for name, chars in found.get("sizes", {}).items()}
            requires = {(code, line): tuple((t, v) for t, v in pairs) for code, line, pairs in found.get("requires", ())}
            fields = {name: tuple(variables) for name, variables in found.get("fields", {}).items()}
            seen = {str(entry): tuple(map(str, facts)) for entry, facts in found.get("sinks_seen", {}).items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self.used.add(key)
        return FileResult(path, findings, True, depends, uses, weights, sizes, requires, fields, seen)

    def put(self, key: str, result: FileResult) -> None:
        """Remember ``result`` (a parsed file's findings and cross-module facts) under ``key``."""
        entry: dict = {"findings": [_entry(f) for f in result.findings]}
        if result.depends:
            entry["depends"] = [[code, line, list(symbols)] for (code, line), symbols in sorted(result.depends.items())]
        if result.uses:
            entry["uses"] = {qualified: list(kinds) for qualified, kinds in result.uses.items()}
        if result.weights:
            entry["weights"] = [[code, line, w.size.chars, sorted(w.size.symbols), w.minimum, w.model]
                                for (code, line), w in sorted(result.weights.items())]
        if result.sizes:
            entry["sizes"] = result.sizes
        if result.requires:
            entry["requires"] = [[code, line, [list(p) for p in r]] for (code, line), r in sorted(result.requires.items())]
        if result.fields:
            entry["fields"] = {name: list(variables) for name, variables in result.fields.items()}
        if result.sinks_seen:
            entry["sinks_seen"] = {name: list(facts) for name, facts in result.sinks_seen.items()}
        self.entries[key] = entry
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        """Write the entries (atomically); an unwritable folder is skipped silently."""
        if not self.dirty:
            return
        for table in (self.entries, self.scans):
            if len(table) > MAX_ENTRIES:
                unused = [k for k in table if k not in self.used and k.split(":")[0] not in self.used]
                for k in unused[: len(table) - MAX_ENTRIES]:
                    del table[k]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by promptcache lint automatically.\n*\n", encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".lint-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"findings": self.entries, "scans": self.scans}, out, separators=(",", ":"))
            os.chmod(temp, 0o644)
            os.replace(temp, self.file)
            for old in sorted(self.folder.glob("lint-*.json"), key=lambda f: f.stat().st_mtime, reverse=True)[MAX_KEYS:]:
                old.unlink(missing_ok=True)
        except OSError:
            pass


def _entry(f: Finding) -> dict:
    item = f.to_json()
    del item["path"]
    if f.source_lines:
        item["source_lines"] = list(f.source_lines)
    return item


def _finding(item: dict, path: str) -> Finding:
    fix = item.get("fix")
    return Finding(
        code=item["code"], name=item["name"], severity=Severity(item["severity"]), path=path,
        line=item["line"], column=item["column"], end_line=item["end_line"], end_column=item["end_column"],
        message=item["message"], source_lines=tuple(item.get("source_lines", ())),
        fix=None if fix is None else Fix(
            fix["message"], Applicability(fix["applicability"]),
            tuple(Edit(e["location"]["row"], e["location"]["column"], e["end_location"]["row"],
                       e["end_location"]["column"], e["content"]) for e in fix["edits"]),
        ),
    )


__all__ = ["CACHE_DIR_NAME", "ResultCache", "cache_dir_for", "digest", "entry_key", "settings_key"]
