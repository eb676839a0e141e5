"""``promptcache lint``: find code patterns that break LLM prompt caching."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from promptcache.lint.config import ConfigError, load_config
from promptcache.lint.finding import Severity
from promptcache.lint.reporters import FORMATS, MACHINE_FORMATS, render, summary
from promptcache.lint.runner import EXIT_ERROR, lint_paths
from promptcache.trace.output_path import check_writable_file


def _codes(values: tuple[str, ...]) -> tuple[str, ...] | None:
    codes = tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
    return codes or None


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (comma-separated), replacing the config's.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable (added to the config's).")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), help="Lowest severity that makes the exit code 1 [default: warning].")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported.")
@click.option("--output-format", type=click.Choice(FORMATS), default="concise", show_default=True)
@click.option("-o", "--output-file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to a file.")
@click.option("--no-prefilter", is_flag=True, help="Parse every file, not only files with LLM imports, calls or prompt modules.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), help="Use this pyproject.toml / promptcache.toml.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes [default: CPU count].")
@click.option("--no-respect-gitignore", is_flag=True, help="Lint files that .gitignore excludes.")
@click.option("-v", "--verbose", is_flag=True, help="Say which files were parsed and which the pre-filter skipped.")
def lint(paths, select, extend_select, ignore, fail_on, exit_zero, output_format, output_file, no_prefilter, config_file, jobs, no_respect_gitignore, verbose):
    """Lint PATHS (default: the current folder) for cache-breaking patterns.

    Exit codes: 0 clean, 1 findings at or above --fail-on, 2 a usage or
    configuration error, or a file that could not be read or parsed (PC901).
    """
    targets = list(paths) or [Path(".")]
    if output_file is not None:  # before linting: a report that cannot be written fails now, not after the run
        try:
            check_writable_file(output_file)
        except OSError as problem:
            click.echo(f"error: cannot write {output_file}: {problem}", err=True)
            sys.exit(EXIT_ERROR)
    try:
        config = load_config(config_file, start=targets[0])
        extra_ignore = _codes(ignore)
        config = config.with_overrides(
            select=_codes(select),
            extend_select=(config.extend_select + _codes(extend_select)) if _codes(extend_select) else None,
            ignore=(config.ignore + extra_ignore) if extra_ignore else None,
            fail_on=Severity.parse(fail_on) if fail_on else None,
            respect_gitignore=False if no_respect_gitignore else None,
        )
        result = lint_paths(targets, config, prefilter_files=not no_prefilter, jobs=jobs)
    except ConfigError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    if output_file is not None:
        try:
            with output_file.open("w", encoding="utf-8") as out:
                render(result, output_format, out)
        except OSError as exc:
            click.echo(f"error: cannot write {output_file}: {exc.strerror}; choose another --output-file", err=True)
            sys.exit(EXIT_ERROR)
    else:
        try:
            render(result, output_format, sys.stdout, color=sys.stdout.isatty())
            sys.stdout.flush()
        except BrokenPipeError:  # `promptcache lint | head`: the reader left; keep the exit code
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if output_format in MACHINE_FORMATS or output_file is not None:
        click.echo(summary(result), err=True)
    if verbose:
        for path in result.parsed_paths:
            click.echo(f"parsed: {path}", err=True)
        click.echo(f"{result.parsed} parsed, {result.skipped} skipped by the pre-filter, {len(result.rules)} rules", err=True)
    sys.exit(result.exit_code(config.fail_on, exit_zero))
