"""``promptcache serve``: the local engine behind OpenAI- and Anthropic-compatible HTTP endpoints."""

from __future__ import annotations

import warnings

import click
from rich.console import Console

from promptcache.commands.backend import (
    check_model_options,
    loading_model,
    require_backend,
)


class CannotListen(click.ClickException):
    """``--host`` / ``--port`` cannot be bound: exit code 2, like other usage errors."""

    exit_code = 2


@click.command("serve")
@click.option("--model", "model_path", type=click.Path(), default=None,
              help="Local transformers model directory [default: the embedded model, no download].")
@click.option("--tokenizer", default=None,
              help="'chatml' (the embedded model's cl100k + ChatML tokenizer) or a tokenizer directory "
                   "[default: the model's own].")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--block-size", type=click.IntRange(min=1), default=16, show_default=True, help="Tokens per KV block.")
@click.option("--kv-cache-mb", type=click.FloatRange(min=0, min_open=True), default=None,
              help="KV pool size in MiB [default: 1024].")
@click.option("--num-blocks", type=click.IntRange(min=1), default=None, help="KV pool size in blocks (instead of MiB).")
@click.option("--eviction", type=click.Choice(["lru", "lfu", "priority"]), default="lru", show_default=True)
@click.option("--max-num-seqs", type=click.IntRange(min=1), default=None,
              help="Running requests at most [default: 32].")
@click.option("--max-model-len", type=click.IntRange(min=1), default=None,
              help="Context cap in tokens [default: the model's, bounded by the pool].")
@click.option("--served-model-name", "served_model_names", multiple=True,
              help="Accept only these model names (repeatable) [default: any name].")
@click.option("--default-max-tokens", type=click.IntRange(min=1), default=256, show_default=True,
              help="Output tokens of OpenAI requests that give no max_tokens.")
@click.option("--device", default=None, help="cpu, cuda or mps [default: CUDA, then MPS, then CPU].")
@click.option("--dtype", default=None, help="float32, bfloat16 or float16 [default: fp32 on CPU].")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="torch.set_num_threads.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None,
              help="Append one trace line per API request served to this JSONL file (body and usage, as "
                   "promptcache proxy and wrap() record them).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
def serve(model_path, tokenizer, host, port, block_size, kv_cache_mb, num_blocks, eviction, max_num_seqs,
          max_model_len, served_model_names, default_max_tokens, device, dtype, threads, trace_path, log_level):
    """Serve the local engine (paged KV cache, automatic prefix caching) over HTTP.

    OpenAI: /v1/chat/completions, /v1/completions, /v1/models, /tokenize.
    Anthropic: /v1/messages, /v1/messages/count_tokens. Also /metrics
    (Prometheus), /v1/cache/reset, /health. Point the official SDKs at it
    with base_url="http://HOST:PORT/v1" (OpenAI) or "http://HOST:PORT" (Anthropic).

    Exit codes: 0 after a graceful shutdown on Ctrl-C / SIGTERM once serving (during the model load,
    Ctrl-C aborts with exit 1 and SIGTERM ends the process, 143); 2 a usage error, before the model loads
    where it can be (the backend extra missing, HOST:PORT cannot be bound, a --model / --tokenizer that
    cannot be loaded).
    """
    check_model_options(model_path, tokenizer)  # before torch is imported: a bad path fails in a moment
    recorder = _trace_recorder(trace_path)  # a trace path that cannot be written fails in a moment too
    from local_backend.server.listen import ListenError, bind_listener  # torch-free

    try:
        sock = bind_listener(host, port)  # before torch and the model load: a taken port fails in a moment
    except ListenError as exc:
        raise CannotListen(str(exc)) from None
    port = sock.getsockname()[1]  # the port picked for --port 0
    console = Console(stderr=True, highlight=False, soft_wrap=True)  # a URL or path is never broken across lines
    try:
        require_backend(what="promptcache serve")
        from local_backend.embedded import EMBEDDED_NOTICE
        from local_backend.loader import build_engine
        from local_backend.server.run import serve as run_server

        with loading_model(console), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # printed once each below (e.g. token ids past the model's embedding)
            engine = build_engine(model_path, tokenizer, block_size=block_size, kv_cache_mb=kv_cache_mb,
                                  num_blocks=num_blocks, eviction=eviction, max_num_seqs=max_num_seqs,
                                  max_model_len=max_model_len, device=device, dtype=dtype, num_threads=threads)
    except BaseException:
        sock.close()
        raise
    stats = engine.stats()
    names = ", ".join(served_model_names) if served_model_names else "any name"
    console.print(f"model [bold]{engine.model_name}[/bold] ({stats['model']['device']}, {stats['model']['dtype']}), "
                  f"served as {names}; KV pool {engine.num_blocks:,} blocks of {block_size} tokens "
                  f"({stats['kv']['pool_bytes'] / 2**20:,.0f} MiB), context {engine.max_model_len:,} tokens")
    if engine.loaded.is_embedded:
        console.print(f"[dim]{EMBEDDED_NOTICE}[/dim]")
    from promptcache.commands.options import (
        print_warnings,  # here: it imports the trace reader
    )

    print_warnings(caught, console)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # an IPv6 address in a URL is bracketed
    console.print(f"listening on http://{address} (Ctrl-C to stop)")  # uvicorn does not say so: it got the socket
    console.print(f"OpenAI base_url http://{address}/v1  Anthropic base_url http://{address}")
    if recorder is None:
        run_server(engine, host=host, port=port, served_model_names=served_model_names,
                   default_max_tokens=default_max_tokens, log_level=log_level, sock=sock)
        return
    from local_backend.server.app import create_app
    from local_backend.server.graceful import run_asgi
    from promptcache.recording.asgi import RecordingMiddleware

    console.print(f"recording the API calls to {trace_path}")
    app = create_app(engine, served_model_names=served_model_names, default_max_tokens=default_max_tokens)
    run_asgi(RecordingMiddleware(app, recorder), host=host, port=port, log_level=log_level, sock=sock)


def _trace_recorder(trace_path: str | None):
    """The recorder of ``--trace`` (guard off: the server records, the client's side diagnoses), or None.

    Raises:
        click.BadParameter: the trace file cannot be appended to (its folder is missing, ...).
    """
    if trace_path is None:
        return None
    from promptcache.misses.guard import PrefixGuard
    from promptcache.providers.usage import UsageStats
    from promptcache.recording.exchange import ExchangeRecorder
    from promptcache.trace.recorder import TraceClock

    try:
        clock = TraceClock(trace_path)
    except OSError as exc:
        raise click.BadParameter(str(exc), param_hint="--trace") from None
    return ExchangeRecorder(trace=clock, guard=PrefixGuard(), stats=UsageStats(), guard_mode="off",
                            clock=clock.clock)
