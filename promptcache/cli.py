"""The ``promptcache`` command line: a thin click layer.

Each command lives in its own module under :mod:`promptcache.commands` and is
imported only when it is invoked, so ``promptcache lint`` never pays for
torch or transformers (the pattern from click's "lazily loading subcommands"
documentation). Every command's logic is importable and testable without the
CLI; the command modules only parse options, call one library function and
print.
"""

from __future__ import annotations

import importlib

import click

from promptcache import __version__

# command name -> "module:attribute" of a click.Command. Add a line per command.
COMMANDS: dict[str, str] = {
    "lint": "promptcache.commands.lint:lint",
    "clean": "promptcache.commands.lint:clean",
    "rules": "promptcache.commands.rules:rules",
    "rule": "promptcache.commands.rules:rule",
    "simulate": "promptcache.commands.simulate:simulate",
    "providers": "promptcache.commands.providers:providers",
    "diff": "promptcache.commands.diff:diff",
    "convert": "promptcache.commands.convert:convert",
    "engine-bench": "promptcache.commands.engine_bench:engine_bench",
    "serve": "promptcache.commands.serve:serve",
    "proxy": "promptcache.commands.proxy:proxy",
    "verify": "promptcache.commands.verify:verify",
    "report": "promptcache.commands.report:report",
    "demo": "promptcache.commands.demo:demo",
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def __init__(self, *args, lazy_subcommands: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_subcommands = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy_subcommands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy_subcommands:
            module_name, attr = self.lazy_subcommands[cmd_name].split(":")
            command = getattr(importlib.import_module(module_name), attr)
            if not isinstance(command, click.Command):  # pragma: no cover - programming error
                raise TypeError(f"{module_name}:{attr} is not a click command")
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, lazy_subcommands=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="promptcache")
def main() -> None:
    """Keep LLM prompt caches hot: lint app code, build cache-friendly prompts,
    replay requests on a local prefix-caching engine, simulate provider caches."""


if __name__ == "__main__":  # pragma: no cover
    main()
