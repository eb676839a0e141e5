"""The FastAPI app: OpenAI (Chat, Completions, Responses) and Anthropic endpoints plus ``/health``, ``/metrics``,
``/v1/cache/reset``.

The app translates HTTP to engine calls and back and holds no cache logic
(style guide: "the server holds cache logic" is forbidden): the engine caches
automatically, one engine-loop thread drives it, handlers await its outputs.

    from local_backend import LocalEngine
    from local_backend.server import create_app
    app = create_app(LocalEngine(kv_cache_mb=256), served_model_names=["my-model"])
    # uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from local_backend.engine import LocalEngine
from local_backend.errors import InvalidBodyError
from local_backend.server import anthropic_api, openai_api, responses_api
from local_backend.server.engine_loop import EngineLoop
from local_backend.server.errors import APIError, flavour_of
from local_backend.server.generation import ClientDisconnected
from local_backend.server.metrics import RequestCounter
from local_backend.server.state import DEFAULT_MAX_TOKENS, ServerState

logger = logging.getLogger("promptcache.server")

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
CLIENT_CLOSED = 499
"""Status of a request whose client left (nginx's convention)."""


def create_app(engine: LocalEngine, *, served_model_names: Sequence[str] = (),
               default_max_tokens: int = DEFAULT_MAX_TOKENS) -> FastAPI:
    """Build the server app around ``engine``.

    Args:
        engine: the engine to serve; from app start-up on, only the app's
            engine-loop thread may call it.
        served_model_names: model names to accept (others get 404); empty =
            any name, served by the loaded model and echoed in responses.
        default_max_tokens: output tokens of OpenAI requests that give no ``max_tokens``.

    Returns:
        A FastAPI app; its lifespan starts and stops the engine-loop thread.
    """
    loop = EngineLoop(engine)
    state = ServerState(engine, loop, tuple(served_model_names), default_max_tokens)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        loop.start()
        try:
            yield
        finally:
            loop.stop()

    app = FastAPI(title="promptcache local backend", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.server = state
    app.include_router(openai_api.router)
    app.include_router(responses_api.router)
    app.include_router(anthropic_api.router)

    @app.exception_handler(APIError)
    async def api_error(request: Request, exc: APIError) -> JSONResponse:
        return exc.response(flavour_of(request.url.path))

    @app.exception_handler(InvalidBodyError)
    async def invalid_body(request: Request, exc: InvalidBodyError) -> JSONResponse:
        return APIError(400, exc.message, param=exc.param).response(flavour_of(request.url.path))

    @app.exception_handler(ClientDisconnected)
    async def client_gone(request: Request, exc: ClientDisconnected) -> Response:
        return Response(status_code=CLIENT_CLOSED)  # nobody reads it; logged and counted as 499

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return APIError(400, f"invalid request: {exc.errors()}").response(flavour_of(request.url.path))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = f"{request.method} {request.url.path}: {exc.detail}"
        if exc.status_code == 404:  # an endpoint this server does not implement (the Assistants API, ...)
            paths = [getattr(route, "path", "") for route in app.routes]
            paths += [getattr(route, "path", "") for router in (openai_api.router, responses_api.router,
                                                                 anthropic_api.router) for route in router.routes]
            served = sorted({path for path in paths if path.startswith("/v1/")})
            message += f"; this server serves {', '.join(served)}"
        return APIError(exc.status_code, message).response(flavour_of(request.url.path))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error on %s", request.url.path)
        return APIError(500, f"internal server error: {type(exc).__name__}: {exc}").response(
            flavour_of(request.url.path))

    app.add_middleware(RequestCounter, counter=state.metrics.http_requests)

    @app.get("/health")
    async def health() -> JSONResponse:
        if not loop.alive:
            return JSONResponse({"status": "error", "error": loop.last_error or "the engine loop stopped"},
                                status_code=503)
        return JSONResponse({"status": "ok", "model": engine.model_name})

    @app.get("/metrics")
    async def metrics() -> Response:
        stats = await loop.call(engine.stats)
        return Response(state.metrics.render(stats), media_type=PROMETHEUS_CONTENT_TYPE)

    @app.post("/v1/cache/reset")
    async def cache_reset() -> JSONResponse:
        """Forget every cached block (refused with 409 while requests are running)."""
        if not await loop.call(engine.reset_prefix_cache):
            raise APIError(409, "the prefix cache cannot be reset while requests are running; retry when idle")
        return JSONResponse({"reset": True})

    return app
