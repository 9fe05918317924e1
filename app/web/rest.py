"""REST plumbing shared by every blueprint: ``ApiError``, query arguments, JSON bodies, the JSON error handlers.

Every error is ``{"error": "...", "detail": ...}`` with a 4xx (or a 503 for a fault of FanWhy's own), never a
traceback. Query integers fit SQLite's 64 bits and numbers are finite before a check sees them; a JSON body is
bounded in size (MAX_CONTENT_LENGTH) and depth before it is parsed, and every string in it is valid UTF-8.
"""

from __future__ import annotations

import json
import math
import re
from typing import Callable, TypeVar, overload

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from ..core.jsonvalue import Json

T = TypeVar("T")
INT64 = 2**63
MAX_JSON_DEPTH = 8
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


class ApiError(Exception):
    """An answer other than 2xx: its status, a short error and a detail (anything JSON)."""

    def __init__(self, status: int, error: str, detail: Json = None):
        super().__init__(error)
        self.status, self.error, self.detail = status, error, detail


def allow_only(allowed: tuple[str, ...]) -> None:
    """A 400 naming the first query parameter that is not one of ``allowed`` (a typo should not be ignored)."""
    unknown = sorted(set(request.args) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown query parameter {unknown[0]!r}",
                       {"allowed": list(allowed)})


@overload
def arg(name: str, convert: Callable[[str], T], default: T, check: Callable[[T], bool] | None = None,
        expect: str = "") -> T: ...
@overload
def arg(name: str, convert: Callable[[str], T], default: None, check: Callable[[T], bool] | None = None,
        expect: str = "") -> T | None: ...
def arg(name: str, convert: Callable[[str], T], default: T | None, check: Callable[[T], bool] | None = None,
        expect: str = "") -> T | None:
    """A query parameter converted and checked; a 400 naming it otherwise. Integers fit SQLite's 64 bits and
    numbers are finite before ``check`` sees them."""
    raw = request.args.get(name)
    if raw is None:
        return default
    try:
        value = convert(raw)
    except (ValueError, OverflowError):
        raise ApiError(400, f"invalid {name}: {raw[:40]!r}", f"expected {expect}") from None
    in_range = (not isinstance(value, int) or -INT64 <= value < INT64) and \
               (not isinstance(value, float) or math.isfinite(value))
    if not in_range or (check is not None and not check(value)):
        raise ApiError(400, f"invalid {name}: {raw[:40]!r}", f"expected {expect}")
    return value


def json_body() -> Json:
    """The request's JSON body (None when empty), chunked or not: its size is bounded by MAX_CONTENT_LENGTH
    and its nesting by MAX_JSON_DEPTH before it is parsed, and every string in it must be valid UTF-8."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return None
    depth = deepest = 0
    for byte in _JSON_STRING.sub(b'""', raw):
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    if deepest > MAX_JSON_DEPTH:
        raise ApiError(400, "the JSON body is nested too deep", f"at most {MAX_JSON_DEPTH} levels")
    try:
        body: Json = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "the body must be JSON", "send a JSON object, UTF-8 encoded") from None
    if not _valid_text(body):
        raise ApiError(400, "the body must be valid UTF-8", "a string holds an unpaired surrogate (\\ud800-\\udfff)")
    return body


def _valid_text(value: object) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_valid_text(k) and _valid_text(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_valid_text(v) for v in value)
    return True


def _error_response(status: int, error: str, detail: Json = None) -> tuple[Response, int]:
    return jsonify({"error": error, "detail": detail}), status


def init_app(app: Flask) -> None:
    """The JSON error handlers, for every blueprint."""

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> tuple[Response, int]:
        return _error_response(error.status, error.error, error.detail)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[Response, int]:
        return _error_response(error.code or 500, (error.name or "error").lower(), error.description)

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> tuple[Response, int]:
        app.logger.exception("unhandled error on %s", request.path)
        return _error_response(500, "internal error", "logged on the server")
