"""``promptcache proxy``: record and diagnose any app's requests by pointing its base URL at a local proxy."""

from __future__ import annotations

import importlib
from typing import Any

import click
from rich.console import Console

from promptcache.commands.serve import CannotListen


def load_redactor(spec: str | None) -> Any:
    """The ``redact(body) -> body`` hook named ``module:function`` (the same hook as ``wrap(redact=...)``).

    Raises:
        click.BadParameter: not ``module:function``, the module cannot be imported, or it has no such callable.
    """
    if spec is None:
        return None
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise click.BadParameter(f"{spec!r} is not module:function (e.g. myapp.privacy:redact)", param_hint="--redact")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {module_name!r}: {exc}", param_hint="--redact") from None
    hook = getattr(module, name, None)
    if not callable(hook):
        raise click.BadParameter(f"{module_name} has no function {name!r}", param_hint="--redact")
    return hook


PROXY_MODULES = ("starlette", "uvicorn", "httpx")
"""What the proxy runs on (the ``proxy`` extra; no torch)."""


@click.command("proxy")
@click.option("--upstream", required=True, metavar="URL",
              help="Where requests go: https://api.anthropic.com, https://api.openai.com, or any compatible "
                   "server (promptcache serve, vLLM, llama.cpp's llama-server).")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="Append one trace line per API request to this JSONL file (headers and keys never).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8788, show_default=True)
@click.option("--session", default="default", show_default=True,
              help="Trace session of requests without an x-promptcache-session header.")
@click.option("--guard", type=click.Choice(["warn", "off"]), default="warn", show_default=True,
              help="Print the cause of each unexpected prefix divergence (the request is forwarded either way).")
@click.option("--redact", "redact_spec", metavar="MODULE:FUNCTION", default=None,
              help="redact(body) -> body, applied to each body before it is written (as wrap(redact=...)).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds to wait for upstream to connect or send the next bytes.")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]),
              default="warning", show_default=True, help="uvicorn's log level.")
def proxy(upstream, trace_path, host, port, session, guard, redact_spec, timeout, log_level):
    """Forward requests to --upstream unchanged; record and diagnose the API calls.

    Point an app at it (OpenAI base_url http://HOST:PORT/v1, Anthropic base_url
    http://HOST:PORT). Each POST to /v1/messages, /v1/chat/completions or
    /v1/responses prints one line (cached / written / uncached prompt tokens, and
    the cause of a prefix divergence) and, with --trace, becomes a trace line for
    verify, simulate and diff. Streams pass through chunk by chunk.

    Exit codes: 0 after Ctrl-C / SIGTERM; 2 a usage error (a bad --upstream, --redact
    or --trace, or HOST:PORT cannot be bound).
    """
    from promptcache.commands.backend import require_backend

    require_backend(PROXY_MODULES, what="promptcache proxy", extra="proxy")
    import httpx

    from local_backend.server.listen import ListenError, bind_listener  # torch-free, as the rest of the proxy
    from promptcache.trace.recorder import TraceClock

    try:
        url = httpx.URL(upstream)
    except (httpx.InvalidURL, ValueError) as exc:
        raise click.BadParameter(f"{upstream!r} is not a URL ({exc})", param_hint="--upstream") from None
    if url.port is not None and not 0 < url.port < 65536:
        raise click.BadParameter(f"{upstream!r} is not a URL (port {url.port} is out of range 1-65535)",
                                 param_hint="--upstream")
    if url.scheme not in ("http", "https") or not url.host:
        raise click.BadParameter(f"{upstream!r} is not an http(s) URL", param_hint="--upstream")
    if url.path.rstrip("/").endswith("/v1"):
        raise click.BadParameter(f"{upstream!r} ends with /v1, but clients send /v1/... themselves: give the "
                                 f"server's root, {upstream.rstrip('/')[:-3]}", param_hint="--upstream")
    redact = load_redactor(redact_spec)
    try:
        clock = TraceClock(trace_path) if trace_path else None
    except OSError as exc:
        raise click.BadParameter(str(exc), param_hint="--trace") from None
    try:
        sock = bind_listener(host, port)
    except ListenError as exc:
        raise CannotListen(str(exc)) from None
    from local_backend.server.graceful import run_asgi
    from promptcache.misses.guard import PrefixGuard
    from promptcache.providers.usage import UsageStats
    from promptcache.recording.exchange import ExchangeRecorder
    from promptcache.recording.proxy import ProxyLog, create_proxy_app

    port = sock.getsockname()[1]
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    stats = UsageStats()
    recorder = ExchangeRecorder(trace=clock, guard=PrefixGuard(), stats=stats, guard_mode=guard, redact=redact,
                                clock=clock.clock if clock else None)
    out = Console(highlight=False, soft_wrap=True)
    app = create_proxy_app(upstream, recorder, log=ProxyLog(lambda line: out.print(line, markup=False)),
                           session=session, timeout=timeout)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    console.print(f"forwarding to {upstream}" + (f", recording to {trace_path}" if trace_path else ""))
    console.print(f"listening on http://{address} (Ctrl-C to stop)")
    console.print(f"OpenAI base_url http://{address}/v1  Anthropic base_url http://{address}")
    run_asgi(app, host=host, port=port, log_level=log_level, sock=sock)
    total = stats.summary()["total"]
    if total["requests"]:
        console.print(f"{total['requests']} requests with usage: {total['cache_read_tokens']:,} of "
                      f"{total['prompt_tokens']:,} prompt tokens read from the cache ({total['hit_rate']:.0%})")
