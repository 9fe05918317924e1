"""Signing in: the sign-in form (``/login``) and the check in front of every REST route, both as the access policy
(app.web.access) decides. Socket.IO is decided by app.web.gate, before any session exists."""

from __future__ import annotations

from flask import Flask, Response, jsonify, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from .access import COOKIE, UNAUTHORIZED, AccessPolicy, Rest, credential
from .refusals import Refusals

WRONG_TOKEN = "That token is not right."


def _signed_in(token: str) -> BaseResponse:
    response = redirect(request.script_root + "/")  # behind a proxy at /fanwhy: /fanwhy/
    response.set_cookie(COOKIE, token, httponly=True, samesite="Strict", secure=request.is_secure,
                        path=request.script_root or "/")
    return response


def init_app(app: Flask, policy: AccessPolicy, refusals: Refusals | None = None) -> None:
    if not policy.token and not policy.metrics_token:
        return

    def refused(reason: str) -> None:
        if refusals is not None:
            refusals.record("token", request.remote_addr, 401, reason)

    @app.route("/login", methods=["GET", "POST"])
    def login() -> BaseResponse | tuple[str, int]:
        if request.method == "POST":
            if policy.signs_in(request.form.get("token", "")) and policy.token:
                return _signed_in(policy.token)
            refused("the sign-in form was sent with a token that is not this FanWhy's")
            return render_template("login.html", message=WRONG_TOKEN), 401
        return render_template("login.html", message=""), 200

    @app.post("/logout")
    def logout() -> BaseResponse:
        """Sign out: the cookie is cleared (the token itself stays the operator's) and the sign-in page opens. Reached
        only with the token, and as a POST from this origin (the gate refuses a foreign one): no link signs a
        person out."""
        response = redirect(request.script_root + "/login", code=303)
        response.delete_cookie(COOKIE, path=request.script_root or "/", secure=request.is_secure, httponly=True,
                               samesite="Strict")
        return response

    @app.before_request
    def require_token() -> BaseResponse | tuple[Response, int] | None:
        decision = policy.rest(request.environ, request.args.get("token") if request.path == "/" else None)
        if decision is Rest.PASS:
            return None
        if decision is Rest.SIGN_IN and policy.token:
            return _signed_in(policy.token)
        if decision is Rest.TO_SIGN_IN_PAGE:
            return redirect(request.script_root + "/login")
        offered = credential(request.environ, query=False)
        refused(f"{request.method} {request.path[:80]!r} without the token" if offered is None else
                f"{request.method} {request.path[:80]!r} with a token that is not this FanWhy's")
        response = jsonify(error="unauthorized", detail=UNAUTHORIZED)
        response.status_code = 401
        return response
