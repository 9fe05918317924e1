"""The access token: required on every route, /socket.io included, when FANWHY_TOKEN is set.

Binding anything but loopback without a token is refused at start (config.Settings.validate).
The token is accepted as ``Authorization: Bearer <token>``, as the ``fanwhy_token`` cookie (set by
visiting ``/?token=<token>`` once), or in the Socket.IO ``auth`` payload; compared in constant time.
"""

from __future__ import annotations

import hmac
from typing import Any, Mapping

from flask import Flask, Response, jsonify, redirect, request

COOKIE = "fanwhy_token"


def token_matches(expected: str | None, offered: str | None) -> bool:
    if not expected:
        return True
    if not offered:
        return False
    return hmac.compare_digest(expected.encode(), offered.encode())


def offered_token(auth: Mapping[str, Any] | None = None) -> str | None:
    """The token this request (or Socket.IO connect) carries, if any."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    if isinstance(auth, Mapping) and isinstance(auth.get("token"), str):
        return auth["token"]
    return request.cookies.get(COOKIE)


def init_app(app: Flask, token: str | None) -> None:
    if not token:
        return

    @app.before_request
    def require_token() -> Response | None:
        if request.path.startswith("/socket.io"):
            return None  # checked in the Socket.IO connect handler, where `auth` is visible
        if request.path == "/" and token_matches(token, request.args.get("token")):
            response = redirect("/")
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict",
                                secure=request.is_secure)
            return response
        if token_matches(token, offered_token()):
            return None
        response = jsonify(error="unauthorized",
                           detail="this FanWhy needs its token: Authorization: Bearer <token>, "
                                  "or open /?token=<token> once in the browser")
        response.status_code = 401
        return response
