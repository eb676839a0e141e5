"""``promptcache lint``: find code patterns that break LLM prompt caching (and ``promptcache clean``)."""

from __future__ import annotations

import difflib
import os
import shutil
import sys
import textwrap
from pathlib import Path

import click
from rich.console import Console

from promptcache.commands.progress import progress_bar
from promptcache.lint.add_noqa import add_noqa
from promptcache.lint.changed_lines import GitError, changed_in, on_changed_lines
from promptcache.lint.config import ConfigError, LintConfig, from_table, is_override, load_config, override_table
from promptcache.lint.extra_sinks import toml
from promptcache.lint.finding import Severity
from promptcache.lint.registry import discover as discover_rules
from promptcache.lint.reporters import FORMATS, MACHINE_FORMATS, render, summary
from promptcache.lint.result_cache import CACHE_DIR_NAME, ResultCache, cache_dir_for, settings_key
from promptcache.lint.runner import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, FixMode, lint_paths, select_rules
from promptcache.trace.output_path import check_writable_file

CACHE_ENV = "PROMPTCACHE_CACHE_DIR"
PROGRESS_FROM = 200
"""Runs that parse at least this many files get a progress bar on a terminal (smaller ones end at once)."""


def _codes(values: tuple[str, ...], option: str = "") -> tuple[str, ...] | None:
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    if values and not codes:
        _fail(f"{option} needs rule codes or prefixes, comma-separated (e.g. PC101,PC2); `promptcache rules` lists them")
    return codes or None


def _sink_forms(entry: str) -> str:
    """The three forms of an ``extra-sinks`` entry, in the names of ``entry`` (``'Other.chat'``), indented."""
    parts = [p for p in entry.split(".") if p != "*"]
    method = parts[-1]
    cls = parts[-2] if len(parts) >= 2 and parts[-2][:1].isupper() else "LLM"
    text = (f"A module function: 'myapp.llm.{method}'; a method: 'myapp.llm.{cls}.{method}' (its object built as "
            f"{cls}(...) or annotated ': {cls}' in the calling module); any call ending in .{method}: "
            f"'*.{method}'. See docs/lint.md, Configuration.")
    return textwrap.fill(text, width=79, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)


def _check_codes(options: dict[str, tuple[str, ...] | None], overrides: list[str]) -> None:
    """Raise ConfigError naming the option (not the config file) for a rule selector given on the command line
    that matches no rule."""
    rules = discover_rules()
    for option, codes in options.items():
        try:
            LintConfig(select=(), extend_select=codes or ()).validate_codes(rules)
        except ConfigError as exc:
            raise ConfigError(f"{option}: {str(exc).split(': ', 1)[1]}") from None
    table = override_table(overrides)  # (its own errors name --config)
    try:
        from_table(table).validate_codes(rules)
    except ConfigError as exc:
        raise ConfigError(f"--config: {exc}") from None


def _warn_about_sinks(result, config) -> None:
    """The run's warnings about ``extra-sinks`` entries: one that named no call, one whose calls pass nothing it
    can read (a wrapper's own parameter names; with a table, none of the arguments it maps), one whose method is
    called on objects of a class not shown."""
    if result.unmatched_sinks:
        entries = ", ".join(repr(entry) for entry in result.unmatched_sinks)
        click.echo(f"warning: extra-sinks {entries} named no call in the files linted.\n"
                   + _sink_forms(result.unmatched_sinks[0]), err=True)
    maps = {sink.call: sink.arguments for sink in config.extra_sinks}
    for entry, first in result.unread_sinks.items():
        if maps.get(entry):
            mapped = ", ".join(f"{option} = {toml(sources[0] if len(sources) == 1 else list(sources))}"
                               for option, sources in maps[entry])
            text = (f"extra-sinks {entry!r}: some of its calls (the first at {first}) pass none of the arguments its "
                    f"table maps ({mapped}), so what they send is not checked. A call that passes them by position "
                    "needs the position too (counted from 0, self not counted), e.g.")
        else:
            text = (f"extra-sinks {entry!r}: some of its calls (the first at {first}) pass none of system=, messages=, "
                    "tools=, model=, instructions=, input=, contents=, so what they send is not checked. Map the "
                    "wrapper's own parameters with a table (a keyword by its name, a position as a number from 0), e.g.")
        click.echo(_warning(text) + f'\n    {{call = "{entry}", system = ["system_prompt", 1], messages = ["history", 2]}}\n'
                   "  See docs/lint.md, Configuration.", err=True)
    for entry, first in result.unresolved_sinks.items():
        cls, method = entry.rsplit(".", 2)[-2:]
        click.echo(_warning(
            f"extra-sinks {entry!r}: some calls of .{method}() (the first at {first}) are on objects whose class the "
            "calling module does not show (made by a function of another module, or a parameter without an "
            f"annotation), so they are not checked. Annotate the object (llm: {cls}), or add '*.{method}' to match every call of .{method}()."),
            err=True)


def _warning(text: str) -> str:
    """``warning: text`` wrapped to 79 columns, its next lines indented by two."""
    return textwrap.fill("warning: " + text, width=79, subsequent_indent="  ", break_on_hyphens=False)


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), replacing the config's.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable (added to the config's).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), help="Lowest severity that makes the exit code 1 [default: warning].")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported.")
@click.option("--output-format", type=click.Choice(FORMATS), default="concise", show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to a file.")
@click.option("--fix", is_flag=True, help="Apply safe fixes in place, then report what is left.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, apply unsafe fixes too (they change prompt bytes once).")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff and write nothing; exit 1 if there is a diff.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file and code.")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODE` for every current finding, in place.")
@click.option("--stdin-filename", type=click.Path(path_type=Path), help="Read the source from stdin and lint it as this file.")
@click.option("--diff-since", metavar="REF", help="Report only findings on lines changed since this git ref.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help=f"Result cache folder [default: {CACHE_DIR_NAME} beside the config; env {CACHE_ENV}].")
@click.option("--force-exclude", is_flag=True, help="Apply the exclusions (and leave out test code) for files named on the command line too (for pre-commit).")
@click.option("--no-prefilter", is_flag=True, help="Parse every file, not only files with LLM imports, calls or prompt modules.")
@click.option("--config", "config_values", multiple=True, metavar="PATH | KEY=VALUE",
              help="Use this pyproject.toml / promptcache.toml, or override one setting with a `key = value` "
                   "TOML line (repeatable; an example is above).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes [default: CPU count].")
@click.option("--no-respect-gitignore", is_flag=True, help="Lint files that .gitignore excludes.")
@click.option("--include-tests", is_flag=True, help="Lint test code too (tests/, test/, test_*.py, *_test.py, tests.py, conftest.py).")
@click.option("-v", "--verbose", is_flag=True, help="List the files parsed (or read from the cache), then the parsed, cached, skipped and left-out counts.")
@click.option("--explain", hidden=True, is_flag=False, flag_value="", expose_value=False, is_eager=True,
              callback=lambda ctx, param, value: _no_explain(value))
def lint(paths, select, extend_select, ignore, fail_on, exit_zero, output_format, output_file, fix, unsafe_fixes, show_diff,
         show_fixes, add_noqa, stdin_filename, diff_since, no_cache, cache_dir, force_exclude, no_prefilter, config_values,
         jobs, no_respect_gitignore, include_tests, verbose):
    """Lint PATHS (default: the current folder) for cache-breaking patterns.

    Test code (tests/, test/, test_*.py, *_test.py, tests.py, conftest.py) is left out
    unless --include-tests is given or a test folder or file is named.

    Requests sent through your own wrapper (self.llm.chat(...)) are checked
    once it is named in extra-sinks, in the config or on the command line
    (docs/lint.md, Configuration):

    \b
      --config 'extra-sinks = ["myapp.llm.LLM.chat"]'

    Exit codes: 0 clean, 1 findings at or above --fail-on (with --diff: a
    diff to apply), 2 a usage or configuration error, or a file that could
    not be read or parsed (PC901).
    """
    if stdin_filename is not None and [str(p) for p in paths] == ["-"]:
        paths = ()  # ruff's form: `--stdin-filename app.py -`
    if stdin_filename is not None and any(str(p) == "-" for p in paths):
        _fail("--stdin-filename reads one file from stdin: give no PATHS with it, or only `-`")
    if any(str(p) == "-" for p in paths):
        _fail("`-` is not a file: to lint source from stdin, pass --stdin-filename PATH (the name it is linted as)")
    if stdin_filename is not None and paths:
        _fail("--stdin-filename reads one file from stdin: give no PATHS with it")
    if add_noqa and (fix or show_diff or stdin_filename is not None):
        _fail("--add-noqa writes files in place: it cannot be combined with --fix, --diff or --stdin-filename")
    if diff_since is not None and (fix or show_diff or add_noqa):
        _fail("--diff-since only filters what is reported: run --fix, --diff or --add-noqa without it")
    if unsafe_fixes and not (fix or show_diff):
        click.echo("warning: --unsafe-fixes only applies with --fix or --diff", err=True)
    targets = [stdin_filename] if stdin_filename is not None else (list(paths) or [Path(".")])
    if output_file is not None:  # before linting: a report that cannot be written fails now, not after the run
        try:
            check_writable_file(output_file)
        except OSError as problem:
            _fail(f"cannot write {output_file}: {problem}")
    try:
        files = [Path(v) for v in config_values if not is_override(v)]
        if len(files) > 1:
            raise ConfigError("--config names more than one file: give one, and settings as `key = value`")
        overrides = [v for v in config_values if is_override(v)]
        chosen, extra_select = _codes(select, "--select"), _codes(extend_select, "--extend-select")
        extra_ignore = _codes(ignore, "--ignore")
        _check_codes({"--select": chosen, "--extend-select": extra_select, "--ignore": extra_ignore}, overrides)
        config = load_config(files[0] if files else None, start=targets[0], overrides=overrides)
        config = config.with_overrides(
            select=chosen,
            extend_select=(config.extend_select + extra_select) if extra_select else None,
            ignore=(config.ignore + extra_ignore) if extra_ignore else None,
            fail_on=Severity.parse(fail_on) if fail_on else None,
            respect_gitignore=False if no_respect_gitignore else None,
            include_tests=True if include_tests else None,
        )
        changed = changed_in(diff_since, [Path(t) for t in targets]) if diff_since is not None else None
        cache = None
        if not no_cache:
            folder = cache_dir or (Path(os.environ[CACHE_ENV]) if os.environ.get(CACHE_ENV) else cache_dir_for(config))
            cache = ResultCache(folder, settings_key(config, select_rules(config)))
        mode = FixMode(unsafe=unsafe_fixes, write=not show_diff) if (fix or show_diff) else None
        stdin = sys.stdin.buffer.read() if stdin_filename is not None else None
        with progress_bar(Console(stderr=True), "linting", unit="files", at_least=PROGRESS_FROM) as update:
            result = lint_paths(targets, config, prefilter_files=not no_prefilter, jobs=jobs, fix=mode, cache=cache,
                                stdin=stdin, force_exclude=force_exclude, progress=update)
    except (ConfigError, GitError) as exc:
        _fail(str(exc))
    if add_noqa:
        sys.exit(_add_noqa(result))
    if show_diff:
        sys.exit(_print_diff(result, show_fixes))
    if changed is not None:
        shown = on_changed_lines(result.findings, changed)
        hidden = len(result.findings) - len(shown)
        result.findings = shown
        result.count_fixable()
        if hidden:
            click.echo(f"--diff-since {diff_since}: {hidden} finding{'s' if hidden != 1 else ''} on lines not changed since "
                       f"{diff_since} not shown", err=True)
    if not result.files and not result.tests:
        click.echo("warning: no Python files to lint under the given paths (none there, or all excluded)", err=True)
    else:
        _warn_about_sinks(result, config)
    to_stderr = output_format in MACHINE_FORMATS or output_file is not None
    if stdin_filename is not None and fix:  # ruff's convention: the fixed source on stdout, the report on stderr
        sys.stdout.buffer.write(result.fixes[0].after if result.fixes else stdin)
        sys.stdout.flush()
        render(result, output_format, sys.stderr)
        to_stderr = False
    elif output_file is not None:
        try:
            with output_file.open("w", encoding="utf-8") as out:
                render(result, output_format, out)
        except OSError as exc:
            _fail(f"cannot write {output_file}: {exc.strerror}; choose another --output-file")
    else:
        try:
            render(result, output_format, sys.stdout, color=sys.stdout.isatty())
            sys.stdout.flush()
        except BrokenPipeError:  # `promptcache lint | head`: the reader left; keep the exit code
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if to_stderr:
        click.echo(summary(result), err=True)
    if show_fixes:
        _list_fixes(result, err=to_stderr or stdin_filename is not None)
    if verbose:
        cached_paths = set(result.cached_paths)
        for path in result.parsed_paths:
            click.echo(f"{'cached' if path in cached_paths else 'parsed'}: {path}", err=True)
        parsed = f"{result.parsed - result.cached} parsed, {result.cached} read from the cache" if result.cached \
            else f"{result.parsed} parsed"
        tests = f", {result.tests} test file{'s' if result.tests != 1 else ''} left out" if result.tests else ""
        click.echo(f"{parsed}, {result.skipped} skipped by the pre-filter{tests}, {len(result.rules)} rules",
                   err=True)
    sys.exit(result.exit_code(config.fail_on, exit_zero))


def _no_explain(code: str | None) -> None:
    """``lint --explain CODE`` (ruff's spelling): a usage error naming the command that shows a rule's page."""
    if code is not None:
        raise click.UsageError(f"lint has no --explain option: run `promptcache rule {code.strip() or 'CODE'}` to read a "
                               "rule's page (`promptcache rules` lists them)")


def _print_diff(result, show_fixes: bool) -> int:
    """``--diff``: a unified diff per fixed file on stdout, a count on stderr; 1 when there is a diff."""
    for fixed in result.fixes:
        before = fixed.before.decode("utf-8", errors="replace").splitlines(keepends=True)
        after = fixed.after.decode("utf-8", errors="replace").splitlines(keepends=True)
        sys.stdout.writelines(difflib.unified_diff(before, after, fixed.display, fixed.display))
    sys.stdout.flush()
    if show_fixes:
        _list_fixes(result, err=True, verb="Would fix")
    files = len(result.fixes)
    click.echo(f"Would fix {result.fixed} finding{'s' if result.fixed != 1 else ''} in {files} file{'s' if files != 1 else ''}"
               f" ({len(result.findings)} left after that)." if files else "No fixes to apply.", err=True)
    if result.unsafe_fixable:  # fixes left out because they are unsafe: say how to see them
        n = result.unsafe_fixable
        click.echo(f"{n} unsafe fix{'es' if n != 1 else ''} available: add --unsafe-fixes (they change prompt bytes once).",
                   err=True)
    return EXIT_FINDINGS if files else EXIT_CLEAN


def _list_fixes(result, err: bool, verb: str = "Fixed") -> None:
    """``--show-fixes``: each fixed file with its fixes by code (``verb`` "Would fix" for ``--diff``)."""
    if not result.fixes:
        click.echo("No fixes applied." if verb == "Fixed" else "No fixes to apply.", err=err)
        return
    names = {r.code: r.name for r in result.rules}
    click.echo(f"{verb} {result.fixed} finding{'s' if result.fixed != 1 else ''}:", err=err)
    for fixed in result.fixes:
        click.echo(f"- {fixed.display}:", err=err)
        for code, count in sorted(fixed.fixed.items()):
            click.echo(f"    {count} × {code} ({names.get(code, '')})", err=err)


def _add_noqa(result) -> int:
    """``--add-noqa``: write a ``# noqa`` for every finding (PC900 and PC901 excepted) into its file."""
    by_path: dict[str, list] = {}
    for finding in result.findings:
        if finding.code not in ("PC900", "PC901"):
            by_path.setdefault(finding.path, []).append(finding)
    added = skipped = 0
    for display, findings in sorted(by_path.items()):
        path = Path(display)
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            click.echo(f"warning: {display}: not changed ({exc})", err=True)
            skipped += len(findings)
            continue
        done = add_noqa(text, findings)
        if done.text != text:
            path.write_bytes(done.text.encode("utf-8"))
        added += done.added
        skipped += done.skipped
    click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''}."
               + (f" {skipped} could not be added (a line that ends in a backslash continuation)." if skipped else ""), err=True)
    return EXIT_CLEAN


@click.command("clean")
@click.argument("folder", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
def clean(folder):
    """Remove the lint result cache: every .promptcache_cache under FOLDER (default: the current folder),
    and the folder PROMPTCACHE_CACHE_DIR names."""
    root = folder or Path(".")
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        if CACHE_DIR_NAME in dirnames:
            found.append(Path(dirpath) / CACHE_DIR_NAME)
        dirnames[:] = [d for d in dirnames if d not in (CACHE_DIR_NAME, ".git", ".venv", "node_modules")]
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
        click.echo(f"Removed {path}")
    named = os.environ.get(CACHE_ENV)
    if named and Path(named).is_dir() and Path(named) not in found:
        # A folder of the user's choosing may hold other things: remove only what promptcache wrote there.
        ours = [*Path(named).glob("lint-*.json"), *Path(named).glob(".lint-*.tmp"), Path(named) / ".gitignore"]
        for path in (p for p in ours if p.is_file()):
            path.unlink()
        if ours and not any(Path(named).iterdir()):
            Path(named).rmdir()
        click.echo(f"Removed the lint cache files in {named} ({CACHE_ENV})")
        found.append(Path(named))
    if not found:
        click.echo(f"No {CACHE_DIR_NAME} folder under '{root}'.")
