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

from flask import Flask, Response, jsonify, redirect, request
from werkzeug.http import parse_cookie
from werkzeug.wrappers import Response as BaseResponse

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


LOGIN_FORM = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>FanWhy: sign in</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<main><h1>FanWhy</h1><p>This FanWhy needs its token (FANWHY_TOKEN).</p>
<form method="post" action="login"><label>Token <input type="password" name="token" autocomplete="current-password"
required autofocus></label> <button type="submit">Sign in</button></form>{message}</main></body></html>"""


def _signed_in(token: str) -> BaseResponse:
    response = redirect(request.script_root + "/")  # behind a proxy at /fanwhy: /fanwhy/
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure,
                        path=request.script_root or "/")
    return response


def init_app(app: Flask, token: str | None, metrics_token: str | None = None) -> None:
    if not token and not metrics_token:
        return

    @app.route("/login", methods=["GET", "POST"])
    def login() -> BaseResponse | tuple[str, int]:
        if request.method == "POST":
            offered = request.form.get("token", "")
            if token and token_matches(token, offered):
                return _signed_in(token)
            return LOGIN_FORM.format(message="<p role=alert>That token is not right.</p>"), 401
        return LOGIN_FORM.format(message=""), 200

    @app.before_request
    def require_token() -> BaseResponse | tuple[Response, int] | None:
        if request.path.startswith("/socket.io") or request.path in ("/login", "/favicon.ico"):
            return None  # Socket.IO is checked by app.web.gate before a session or upgrade; the icon is public
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
        response = jsonify(error="unauthorized", detail=UNAUTHORIZED)
        response.status_code = 401
        return response
