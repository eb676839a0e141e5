"""Provider-shaped HTTP errors: one exception, rendered the way each API family renders errors.

* OpenAI (``/v1/chat/completions``, ``/v1/completions``, ``/v1/responses``,
  ``/v1/models``, ``/tokenize``, ``/v1/cache/reset``): ``{"error": {"message", "type",
  "param", "code"}}`` (OpenAI API reference, "Error codes"; vLLM uses the
  same body).
* Anthropic (``/v1/messages``): ``{"type": "error", "error": {"type",
  "message"}}`` with ``invalid_request_error`` (400), ``not_found_error``
  (404), ``api_error`` (500), ``overloaded_error`` (529) (Anthropic API
  reference, "Errors").

The status code is the same for both; only the body differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi.responses import JSONResponse

OPENAI = "openai"
ANTHROPIC = "anthropic"

_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 409: "invalid_request_error", 413: "request_too_large",
                    429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 529: "overloaded_error"}
_OPENAI_TYPES = {400: "invalid_request_error", 404: "invalid_request_error", 409: "invalid_request_error",
                 413: "invalid_request_error", 500: "server_error", 503: "server_error"}


class APIError(Exception):
    """An error to send back as an HTTP response in the caller's API shape.

    Args:
        status: HTTP status code (400 bad request, 404 unknown model, 409
            refused while busy, 500 engine failure).
        message: what went wrong and what to do, for a person.
        param: the offending request field (OpenAI's ``param``), if any.
        code: OpenAI's machine-readable ``code`` (``context_length_exceeded``,
            ``model_not_found``), if any.
    """

    def __init__(self, status: int, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code

    def body(self, flavour: str) -> dict[str, Any]:
        """The JSON body in ``flavour`` (:data:`OPENAI` or :data:`ANTHROPIC`) shape."""
        if flavour == ANTHROPIC:
            kind = _ANTHROPIC_TYPES.get(self.status, "api_error" if self.status >= 500 else "invalid_request_error")
            return {"type": "error", "error": {"type": kind, "message": self.message}}
        kind = _OPENAI_TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}

    def response(self, flavour: str) -> JSONResponse:
        from fastapi.responses import JSONResponse

        return JSONResponse(self.body(flavour), status_code=self.status)


def flavour_of(path: str) -> str:
    """Which error shape a request path gets: Anthropic for ``/v1/messages*``, OpenAI otherwise."""
    return ANTHROPIC if path.startswith("/v1/messages") else OPENAI


def bad_request(message: str, param: str | None = None, code: str | None = None) -> APIError:
    """A 400 with ``message`` (which should say what to change)."""
    return APIError(400, message, param=param, code=code)
