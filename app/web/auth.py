"""The access token: required on every route, /socket.io included, when FANWHY_TOKEN is set.

Binding anything but loopback without a token is refused at start (config.Settings.validate).
The token is accepted as ``Authorization: Bearer <token>`` or as the ``fanwhy_token`` cookie (set by
visiting ``/?token=<token>`` once, or by the login form); Socket.IO also takes ``?token=<token>`` on its URL.
Socket.IO is checked by app.web.gate, before any session exists. Compared in constant time.
"""

from __future__ import annotations

import hmac
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from flask import Flask, Response, jsonify, redirect, render_template, request
from werkzeug.http import parse_cookie
from werkzeug.wrappers import Response as BaseResponse

from .refusals import Refusals

if TYPE_CHECKING:  # the standard's types (PEP 3333), from typeshed
    from _typeshed.wsgi import WSGIEnvironment

COOKIE = "fanwhy_token"
UNAUTHORIZED = ("this FanWhy needs its token: Authorization: Bearer <token>, or open /?token=<token> once in the "
                "browser")


def token_matches(expected: str | None, offered: str | None) -> bool:
    if not expected:
        return True
    if not offered:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode())


def token_from_environ(environ: WSGIEnvironment, query: bool = True) -> str | None:
    """The token a request carries: ``Authorization: Bearer``, the login cookie, or (``query``) ``?token=``."""
    header = environ.get("HTTP_AUTHORIZATION") or ""
    if header[:7].lower() == "bearer ":
        return header[7:].strip()
    cookie = parse_cookie(environ.get("HTTP_COOKIE") or "").get(COOKIE)
    if cookie:
        return cookie
    if query:
        values = parse_qs(environ.get("QUERY_STRING") or "").get("token")
        return values[-1] if values else None
    return None


def offered_token() -> str | None:
    """The token this REST request carries, if any (a query token only opens the page: see require_token)."""
    return token_from_environ(request.environ, query=False)


# served before the token: the sign-in page and what it shows with (its stylesheet and the icon hold no data)
PUBLIC_PATHS = frozenset({"/login", "/favicon.ico", "/static/app.css"})
WRONG_TOKEN = "That token is not right."


def _signed_in(token: str) -> BaseResponse:
    response = redirect(request.script_root + "/")  # behind a proxy at /fanwhy: /fanwhy/
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure,
                        path=request.script_root or "/")
    return response


def init_app(app: Flask, token: str | None, metrics_token: str | None = None,
             refusals: Refusals | None = None) -> None:
    if not token and not metrics_token:
        return

    def refused(reason: str) -> None:
        if refusals is not None:
            refusals.record("token", request.remote_addr, 401, reason)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> BaseResponse | tuple[str, int]:
        if request.method == "POST":
            offered = request.form.get("token", "")
            if token and token_matches(token, offered):
                return _signed_in(token)
            refused("the sign-in form was sent with a token that is not this FanWhy's")
            return render_template("login.html", message=WRONG_TOKEN), 401
        return render_template("login.html", message=""), 200

    @app.before_request
    def require_token() -> BaseResponse | tuple[Response, int] | None:
        if request.path.startswith("/socket.io") or request.path in PUBLIC_PATHS:
            return None  # Socket.IO is checked by app.web.gate before a session or upgrade
        if not token:
            if request.path != "/metrics" or token_matches(metrics_token, offered_token()):
                return None
        elif request.path == "/" and request.args.get("token") and token_matches(token, request.args["token"]):
            return _signed_in(token)
        elif token_matches(token, offered_token()):
            return None
        if request.path == "/metrics" and metrics_token and token_matches(metrics_token, offered_token()):
            return None
        if request.path == "/" and request.method == "GET":
            return redirect(request.script_root + "/login")
        refused(f"{request.method} {request.path[:80]!r} without the token" if offered_token() is None else
                f"{request.method} {request.path[:80]!r} with a token that is not this FanWhy's")
        response = jsonify(error="unauthorized", detail=UNAUTHORIZED)
        response.status_code = 401
        return response
