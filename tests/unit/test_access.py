"""The access policy (app/web/access.py), case by case: the one place that decides who may pass, with which
credential, from which Host; the gate, the body pools and the REST routes only ask it (their own tests drive it
through real requests)."""

from __future__ import annotations

import pytest

from app.collect.config import load_settings
from app.web.access import AccessPolicy, Rest

TOKEN, METRICS = "tok-7f3a-5b1c-9d2e", "scrape-91c-44ab-70ee"
POLICY = AccessPolicy(TOKEN, METRICS, frozenset({"localhost", "127.0.0.1", "::1"}))
OPEN = AccessPolicy(None, None, frozenset({"localhost", "127.0.0.1", "::1"}))


def env(path: str = "/", method: str = "GET", bearer: str | None = None, cookie: str | None = None,
        query: str = "", host: str = "127.0.0.1:8090") -> dict[str, str]:
    environ = {"PATH_INFO": path, "REQUEST_METHOD": method, "QUERY_STRING": query, "HTTP_HOST": host}
    if bearer is not None:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {bearer}"
    if cookie is not None:
        environ["HTTP_COOKIE"] = f"fanwhy_token={cookie}"
    return environ


@pytest.mark.parametrize(("environ", "page_token", "decision"), [
    (env("/api/gpu/summary", bearer=TOKEN), None, Rest.PASS),
    (env("/api/gpu/summary", cookie=TOKEN), None, Rest.PASS),
    (env("/api/gpu/summary", query=f"token={TOKEN}"), None, Rest.REFUSE),  # a query token only opens the page
    (env("/api/gpu/summary", bearer="wrong"), None, Rest.REFUSE),
    (env("/"), TOKEN, Rest.SIGN_IN),
    (env("/"), "wrong", Rest.TO_SIGN_IN_PAGE),
    (env("/"), None, Rest.TO_SIGN_IN_PAGE),
    (env("/", method="POST"), None, Rest.REFUSE),
    (env("/login"), None, Rest.PASS),
    (env("/static/app.css"), None, Rest.PASS),
    (env("/static/app.js"), None, Rest.REFUSE),  # only what the sign-in page is drawn with
    (env("/metrics", bearer=METRICS), None, Rest.PASS),
    (env("/api/gpu/summary", bearer=METRICS), None, Rest.REFUSE),  # the scrape token opens /metrics only
    (env("/socket.io/"), None, Rest.PASS),  # decided by the gate
])
def test_a_rest_request_meets_what_the_policy_decides(environ: dict[str, str], page_token: str | None,
                                                      decision: Rest) -> None:
    assert POLICY.rest(environ, page_token) is decision


def test_without_a_token_everything_passes_but_metrics_asks_for_its_own() -> None:
    assert OPEN.rest(env("/api/gpu/summary")) is Rest.PASS and OPEN.rest(env("/metrics")) is Rest.PASS
    scrape_only = AccessPolicy(None, METRICS, OPEN.hosts)
    assert scrape_only.rest(env("/metrics")) is Rest.REFUSE
    assert scrape_only.rest(env("/metrics", bearer=METRICS)) is Rest.PASS
    assert scrape_only.rest(env("/api/gpu/summary")) is Rest.PASS


def test_the_host_is_one_of_its_names_or_the_request_carries_the_token_in_a_header() -> None:
    assert POLICY.host_admits(env(host="localhost:8090"))
    assert not POLICY.host_admits(env(host="evil.example:8090"))
    assert not POLICY.host_admits(env(host="evil.example:8090", cookie=TOKEN))  # a browser adds a cookie by itself
    assert POLICY.host_admits(env(host="gpu-7:8090", bearer=TOKEN))  # a scraper by whatever name it resolves
    assert POLICY.host_admits(env("/metrics", host="gpu-7:8090", bearer=METRICS))
    assert not POLICY.host_admits(env("/api/gpu/summary", host="gpu-7:8090", bearer=METRICS))
    networked = AccessPolicy.of(load_settings({"FANWHY_HOST": "0.0.0.0", "FANWHY_TOKEN": TOKEN}))
    assert networked.hosts == {"*"} and networked.host_admits(env(host="anything:8090"))


def test_socket_io_and_the_body_pools() -> None:
    assert POLICY.socket_admits(env("/socket.io/", query=f"EIO=4&token={TOKEN}"))
    assert not POLICY.socket_admits(env("/socket.io/", query="EIO=4"))
    assert POLICY.body_pool(env("/api/recordings", method="POST", bearer=TOKEN)) == "main"
    assert POLICY.body_pool(env("/login", method="POST")) == "login"
    assert POLICY.body_pool(env("/socket.io/", method="POST")) == "socket"
    assert POLICY.body_pool(env("/api/recordings", method="POST", query=f"token={TOKEN}")) is None
    assert POLICY.signs_in(TOKEN) and not POLICY.signs_in("wrong") and not OPEN.signs_in("")
