"""Hardening: hosts, origins, tokens, limits, masking everywhere, a hung NVML call, socket churn, slow clients."""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import requests
import socketio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import scenario
from tests.support.children import start_sleeping
from tests.support.population import exact_sleeper, size
from tests.support.receivers import Receiver
from tests.support.servers import asking, free_port, start_server, stop, wait_for
from tests.unit.test_redact import secret_argv

SECRET = "hunter2-very-secret"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8090", "192.0.2.7", "[2001:db8::1]:80"])
def test_an_unknown_host_is_refused(client: Any, host: str) -> None:
    response = client.get("/api/gpu/summary", headers={"Host": host})
    assert response.status_code == 400 and response.get_json()["error"] == "unknown Host"


@pytest.mark.parametrize("host", ["localhost:8090", "127.0.0.1:8090", "[::1]:8090", "LOCALHOST"])
def test_loopback_names_are_accepted(client: Any, host: str) -> None:
    assert client.get("/api/gpu/summary", headers={"Host": host}).status_code == 200


def test_the_host_allowlist_adds_to_loopbacks_names(make_app: Any, fake_nvml: Any) -> None:
    """FANWHY_ALLOWED_HOSTS adds a proxy's names; loopback's stay (setting it once locked the local user out)."""
    app = make_app(nvidia_selection(fake_nvml), start=False, allowed_hosts=("gpu-box.lab", "10.1.2.3"))
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    assert client.get("/api/health", headers={"Host": "gpu-box.lab:8090"}).status_code in (200, 503)
    assert client.get("/api/health", headers={"Host": "10.1.2.3"}).status_code in (200, 503)
    assert client.get("/api/health", headers={"Host": "localhost"}).status_code in (200, 503)
    refused = client.get("/api/health", headers={"Host": "evil.example"})
    assert refused.status_code == 400 and "FANWHY_ALLOWED_HOSTS" in refused.json["detail"]


def test_no_response_allows_any_origin(client: Any) -> None:
    for url in ("/", "/api/gpu/summary", "/metrics", "/static/app.js", "/api/nope"):
        with client.get(url, headers={"Origin": "http://evil.example"}) as response:
            assert "Access-Control-Allow-Origin" not in response.headers, url
            assert response.headers["X-Frame-Options"] == "DENY"
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_an_oversized_body_is_413_json(client: Any) -> None:
    response = client.post("/api/recordings", data=b"{" + b" " * (128 * 1024) + b"}",
                           content_type="application/json")
    assert response.status_code == 413 and response.is_json


def test_rest_is_rate_limited_per_client(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, rate_limit_per_s=5.0)
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    codes = [client.get("/api/gpu/summary").status_code for _ in range(30)]
    assert codes[:10] == [200] * 10 and 429 in codes
    limited = client.get("/api/gpu/summary")
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "1"
    other = client.get("/api/gpu/summary", environ_base={"REMOTE_ADDR": "127.0.0.2"})
    assert other.status_code == 200  # another client has its own budget


def test_request_gpu_update_is_rate_limited_per_client(live_server: Any) -> None:
    client = socketio.Client(reconnection=False)
    client.connect(live_server.url, transports=["polling"], wait_timeout=5)
    try:
        answers = [client.call("request_gpu_update", timeout=5) for _ in range(12)]
    finally:
        client.disconnect()
    assert all("seq" in a for a in answers[:5])
    assert {"error": "rate limited", "detail": "at most 2 requests a second per client"} in answers[5:]


def test_an_allowed_origin_list(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    server = serve(make_app(nvidia_selection(fake_nvml), allowed_origins=("https://dash.example",)))
    ok = requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling", headers={"Origin": "https://dash.example"},
                      timeout=5)
    assert ok.status_code == 200
    assert ok.headers.get("Access-Control-Allow-Origin") == "https://dash.example"  # that one, never '*'
    bad = requests.get(f"{server.url}/socket.io/?EIO=4&transport=polling", headers={"Origin": "http://evil.example"},
                       timeout=5)
    assert bad.status_code == 403 and bad.json()["error"] == "foreign Origin"
    assert "Access-Control-Allow-Origin" not in bad.headers


def test_a_metrics_token_opens_metrics_only(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, token="main-token", metrics_token="scrape-token")
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    scrape = {"Authorization": "Bearer scrape-token"}
    assert client.get("/metrics", headers=scrape).status_code == 200
    assert client.get("/api/gpu/summary", headers=scrape).status_code == 401
    assert client.get("/metrics", headers={"Authorization": "Bearer main-token"}).status_code == 200


def test_the_login_form_sets_the_cookie(make_app: Any, fake_nvml: Any) -> None:
    app = make_app(nvidia_selection(fake_nvml), start=False, token="main-token")
    app.extensions["fanwhy"].collector.collect()
    client = app.test_client()
    form = client.get("/login").get_data(as_text=True)
    assert 'type="password"' in form and 'action="login"' in form
    response = client.post("/login", data={"token": "main-token"})
    assert response.status_code == 302
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/").status_code == 200 and client.get("/api/gpu/summary").status_code == 200


def test_sign_out_clears_the_cookie_only_for_this_origin(make_app: Any, serve: Any, fake_nvml: Any) -> None:
    """POST /logout with the session cookie: 303 to the sign-in page and the cookie expired (same name, path and
    flags); a foreign site's form (another Origin) is refused before it signs anyone out; without the token, 401."""
    live = serve(make_app(nvidia_selection(fake_nvml), token="main-token"))
    cookie = {"Cookie": "fanwhy_token=main-token"}
    foreign = requests.post(f"{live.url}/logout", headers={**cookie, "Origin": "http://evil.example"}, timeout=5,
                            allow_redirects=False)
    assert foreign.status_code == 403 and "Set-Cookie" not in foreign.headers
    assert requests.post(f"{live.url}/logout", timeout=5, allow_redirects=False).status_code == 401
    out = requests.post(f"{live.url}/logout", headers={**cookie, "Origin": live.url}, timeout=5, allow_redirects=False)
    assert out.status_code == 303 and out.headers["Location"].endswith("/login")
    expired = out.headers["Set-Cookie"]
    assert expired.startswith("fanwhy_token=;") and "Max-Age=0" in expired and "HttpOnly" in expired
    assert "SameSite=Strict" in expired and "Path=/" in expired


def test_socket_io_stack_is_pinned_above_its_known_cves() -> None:
    def parse(text: str) -> tuple[int, ...]:
        return tuple(int(p) for p in text.split(".")[:3])

    assert parse(version("python-engineio")) >= (4, 13, 2)
    assert parse(version("python-socketio")) >= (5, 16, 2)
    pins = (Path(__file__).resolve().parent.parent.parent / "requirements.txt").read_text()
    assert "python-engineio==" in pins and "python-socketio==" in pins


def every_output(server: Any, caplog: pytest.LogCaptureFixture, hook: Receiver,
                 pids: Sequence[int] = ()) -> dict[str, str]:
    """What leaves FanWhy: REST (each of ``pids`` through its own route too: its whole command line), a Socket.IO
    update, /metrics, a notification, the logs (every level: a server logs at INFO, an operator may turn DEBUG on)
    and the history file. ``caplog`` must have captured from before the server started (``capture_every_level``)."""
    client = socketio.Client(reconnection=False)
    payloads: list[Any] = []
    client.on("gpu_status_update", payloads.append)
    client.connect(server.url, transports=["polling"], wait_timeout=5)
    wait_for(lambda: bool(payloads))
    client.disconnect()
    assert payloads, "no socket payload to check"
    outputs = {
        "metrics": requests.get(f"{server.url}/api/gpu/metrics", timeout=5).text,
        "processes": requests.get(f"{server.url}/api/gpu/processes", timeout=5).text,
        "summary": requests.get(f"{server.url}/api/gpu/summary", timeout=5).text,
        "prometheus": requests.get(f"{server.url}/metrics", timeout=5).text,
        "socket": json.dumps(payloads),
        "notifications": _notifications(hook),
        "logs": caplog.text,
        "process detail": json.dumps([requests.get(f"{server.url}/api/gpu/processes/{pid}", timeout=5).json()
                                      for pid in pids]),
    }
    history = server.app.extensions["fanwhy"].history
    history.flush()
    with sqlite3.connect(history.path) as db:
        outputs["history"] = json.dumps([db.execute(f"SELECT * FROM {t}").fetchall()
                                         for t in ("proc_raw", "events", "gpu_raw")])
    return outputs


def _notifications(hook: Receiver) -> str:
    """The webhook bodies of the alerts the busy fake GPU fired (at least one)."""
    wait_for(lambda: hook.requests, timeout=15)
    return json.dumps([r["body"].decode() for r in hook.requests])


def notifying(hook: Receiver) -> dict[str, Any]:
    """Settings that send every alert at once to ``hook``."""
    return {"notify": f"webhook:{hook.url()}", "notify_group_s": 0.1, "alert_hold_s": 0.0}


def capture_every_level(caplog: pytest.LogCaptureFixture) -> None:
    """Every record, DEBUG up, of every logger: a secret logged at INFO (raw argv, say) is a leak too."""
    caplog.set_level(logging.DEBUG)


def test_secrets_are_masked_in_every_output(make_app: Any, serve: Any, tmp_path: Path, receiver: Receiver,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """Fails when the raw command line is logged, at any level (its mutant: a log.info of argv in the reader of
    /proc/PID/cmdline)."""
    capture_every_level(caplog)
    proc = start_sleeping(f"--password={SECRET}", "--token", SECRET, f"HF_TOKEN={SECRET}",
                          f"postgres://bob:{SECRET}@db/x", "nohup", "sshpass", "-p", SECRET, "ssh", "h",
                          f'{{"password": "{SECRET}"}}', f"https://{SECRET}@github.com/x/y")
    try:
        fake = scenario("h100_load")
        fake.run_on(0, proc.pid)
        server = serve(make_app(nvidia_selection(fake), top_cpu_processes=0, **notifying(receiver)))
        outputs = every_output(server, caplog, receiver)
        command = next(p for p in json.loads(outputs["processes"])["processes"] if p["pid"] == proc.pid)["command"]
        assert "--password=****" in command and "--token ****" in command and "HF_TOKEN=****" in command
        assert "bob:****@db" in command and "sshpass -p ****" in command and '"password": "****"' in command
        assert "https://****@github.com" in command
        for name, text in outputs.items():
            assert SECRET not in text, f"the secret leaked through {name}"
    finally:
        proc.kill()
        proc.wait()


# The shapes that leaked through every output, one real process each (a secret by what it is, not by client)
ISSUED: list[tuple[list[str], str]] = [(argv, argv_secret) for argv_secret, argv in [
    ("Zq8openssl", ["openssl", "passwd", "-6", "Zq8openssl"]),
    ("Zq8mkpasswd", ["mkpasswd", "-m", "sha-512", "Zq8mkpasswd"]),
    ("Zq8slap", ["slappasswd", "-s", "Zq8slap"]), ("Zq8caddy", ["caddy", "hash-password", "--plaintext", "Zq8caddy"]),
    ("Zq8mosq", ["mosquitto_passwd", "-b", "f", "u", "Zq8mosq"]),
    ("Zq8skopeo", ["skopeo", "--src-creds", "u:Zq8skopeo"]),
    ("Zq8buildah", ["buildah", "push", "--creds", "u:Zq8buildah"]), ("Zq8etcd", ["etcdctl", "--user", "root:Zq8etcd"]),
    ("Zq8trans", ["transmission-remote", "-n", "u:Zq8trans"]), ("Zq8ttyd", ["ttyd", "-c", "user:Zq8ttyd"]),
    ("Zq8httpie", ["http", "-a", "u:Zq8httpie", "x.org"]), ("Zq8cookie", ["curl", "-b", "sessionid=Zq8cookie"]),
    ("Zq8smb", ["smbclient", "//h/share", "Zq8smb"]), ("Zq8isql", ["isql", "DSN", "user", "Zq8isql"]),
    ("Zq8pdftk", ["pdftk", "in.pdf", "input_pw", "Zq8pdftk"]), ("Zq8ngrok", ["ngrok", "authtoken", "Zq8ngrok"]),
    ("Zq8domain", ["smbmap", "dom/admin:Zq8domain@10.0.0.1"]),
    ("Zq8sqlby", ["mysql", "-e", "CREATE USER u IDENTIFIED BY 'Zq8sqlby'"]),
    ("Zq8sqlpw", ["psql", "-c", "ALTER ROLE u WITH PASSWORD 'Zq8sqlpw'"]), ("Zq8ldap", ["ldapmodify", "-wZq8ldap"]),
    ("Zq8rar", ["rar", "a", "-hpZq8rar", "x.rar"]), ("Zq8swaks", ["swaks", "-ap", "Zq8swaks"]),
    ("Zq8sendemail", ["sendemail", "-xp", "Zq8sendemail"]), ("Zq8msmtp", ["msmtp", "--passwordeval=echo Zq8msmtp"]),
    ("Zq8node", ["node", "-e", "login('admin','Zq8node')"]), ("xoxb-123456789012", ["notify", "xoxb-123456789012"]),
]]


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(cases=st.lists(secret_argv(), min_size=8, max_size=8))
def test_generated_secrets_of_real_processes_leave_through_no_output(cases: list[tuple[list[str], str]],
                                                                    make_app: Any, serve: Any,
                                                                    caplog: pytest.LogCaptureFixture,
                                                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    """Real processes whose command lines carry secrets of every known shape (wrappers in front, JSON, a token
    as a URL's user, setters; and the shapes that once leaked: PGPASSWORD=, --accessToken=, redis://:pw@, a
    quoted `mysql --password=`, `nohup sshpass -p`, `timeout 10 curl -u`, `sudo mysql -p`), each named as its
    program (argv[0] is mysql, curl, nohup ...) while a small sleeper stands behind it, each command line exactly
    as drawn."""
    cases = [*cases, (["postgres", "PGPASSWORD=Zq6issuePg"], "Zq6issuePg"),
             (["java", "--accessToken=Zq6issueAccess"], "Zq6issueAccess"),
             (["celery", "redis://:Zq6issueRedis@db:6379/0"], "Zq6issueRedis"),
             (["bash", "-c", "mysql --password=Zq6issueMysql db"], "Zq6issueMysql"),
             (["nohup", "sshpass", "-p", "Zq7sshpass", "ssh", "h"], "Zq7sshpass"),
             (["timeout", "10", "curl", "-u", "bob:Zq7curl", "http://x"], "Zq7curl"),
             (["sudo", "mysql", "-pZq7mysql", "db"], "Zq7mysql"),
             (["aws", "configure", "set", "aws_secret_access_key", "Zq7aws"], "Zq7aws"),
             *ISSUED]
    exact = exact_sleeper(str(tmp_path_factory.mktemp("sleeper")))
    # each command line exactly as drawn: a "-c code" put after the program (Python sleeping behind it) would move a
    # positional secret (openssl passwd -6 X) to where no hasher puts it
    procs = [subprocess.Popen(argv, executable=exact) for argv, _ in cases]
    try:
        fake = scenario("h100_load")
        fake.set(0, "compute_processes", [{"pid": p.pid, "usedGpuMemory": 2**28, "gpuInstanceId": 0,
                                           "computeInstanceId": 0} for p in procs])
        caplog.clear()
        capture_every_level(caplog)
        receiver = Receiver()
        app = make_app(nvidia_selection(fake), top_cpu_processes=0, **notifying(receiver))
        server = serve(app)
        try:
            outputs = every_output(server, caplog, receiver, [p.pid for p in procs])
        finally:
            app.extensions["fanwhy"].stop()
            receiver.close()
        shown = {p["pid"]: p["command"] for p in json.loads(outputs["processes"])["processes"]}
        assert all(p.pid in shown for p in procs), "every generated process is listed"
        for argv, secret in cases:
            for name, text in outputs.items():
                assert secret not in text, f"{argv}: the secret leaked through {name}"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_extra_mask_patterns_and_names_only(make_app: Any) -> None:
    proc = start_sleeping("--db", "acct-12345-xyz")
    try:
        fake = scenario("h100_load")
        fake.run_on(0, proc.pid, sm_percent=None)
        app = make_app(nvidia_selection(fake), start=False, mask_patterns=(r"acct-\d+-\w+",))
        app.extensions["fanwhy"].collector.collect()
        rows = app.test_client().get("/api/gpu/processes?kind=gpu").get_json()["processes"]
        row = next(r for r in rows if r["pid"] == proc.pid)
        assert "acct-12345" not in row["command"] and "--db ****" in row["command"]
        names = make_app(nvidia_selection(scenario("h100_load")), start=False, names_only=True)
        fake_two = names.extensions["fanwhy"].collector.backend._nvml
        fake_two.run_on(0, proc.pid, sm_percent=None)
        names.extensions["fanwhy"].collector.collect()
        rows = names.test_client().get("/api/gpu/processes?kind=gpu").get_json()["processes"]
        row = next(r for r in rows if r["pid"] == proc.pid)
        assert row["command"] is None and row["name"]
    finally:
        proc.kill()
        proc.wait()


def test_a_hung_nvml_call_keeps_the_api_answering_with_a_stale_flag(make_app: Any, serve: Any) -> None:
    release = threading.Event()
    fake = scenario("h200x2_load")
    server = serve(make_app(nvidia_selection(fake), watchdog_s=0.5))
    server.collector.wait_frame(2, timeout=5)
    fake.set(1, "temperature", lambda *_: (release.wait(30), 57)[1])  # NVML stuck for up to 30 s
    try:
        wait_for(lambda: requests.get(f"{server.url}/api/gpu/summary", timeout=5).json()["stale"])
        started = time.monotonic()
        body = requests.get(f"{server.url}/api/gpu/summary", timeout=5).json()
        assert time.monotonic() - started < 0.2
        assert body["stale"] is True and body["data_age_s"] >= 0.5 and body["gpu_count"] == 2
        health = requests.get(f"{server.url}/api/health", timeout=5)
        assert health.json()["stale"] is True
        assert any("did not answer" in r or "running for" in r for r in health.json()["reasons"])
        assert threading.active_count() < 100  # no pile of stuck threads
    finally:
        release.set()
    wait_for(lambda: requests.get(f"{server.url}/api/gpu/summary", timeout=5).json()["stale"] is False)


def test_a_one_shot_snapshot_ends_in_time_when_nvml_hangs(monkeypatch: Any, capsys: Any) -> None:
    """`python -m app snapshot` waits for the collector thread with a deadline: it never freezes."""
    from app.cli.main import snapshot
    from app.collect import assemble
    from app.collect.collector import Collector
    from app.collect.settings import Settings

    release = threading.Event()
    fake = scenario("h200x2_load")
    fake.set(0, "temperature", lambda *_: (release.wait(30), 57)[1])
    monkeypatch.setattr(assemble, "build_collector", lambda settings, selection=None: Collector(
        nvidia_selection(fake), interval_s=0.2, watchdog_s=0.5))
    started = time.monotonic()
    try:
        assert snapshot(Settings(db="none", interval_s=0.2)) == 5
        assert time.monotonic() - started < 3.0
        assert "a vendor call has been running for" in capsys.readouterr().err
    finally:
        release.set()


def test_a_one_shot_snapshot_ends_in_time_when_the_backend_never_opens(monkeypatch: Any, capsys: Any) -> None:
    """The backend opens on a thread of its own: a driver that never answers (nvmlInit stuck) ends the command after
    the watchdog with exit 5 and a sentence, not a hang."""
    from app.cli.main import snapshot
    from app.collect.settings import Settings
    from app.vendors import factory
    from app.vendors.base import Backend

    release = threading.Event()

    class Stuck(Backend):
        name = "simulated"

        def open(self) -> None:
            release.wait(30)

    monkeypatch.setattr(factory, "default_builders", lambda settings=None: {"simulated": Stuck})
    started = time.monotonic()
    try:
        assert snapshot(Settings(db="none", backend="simulated", watchdog_s=0.5)) == 5
        assert time.monotonic() - started < 3.0
        err = capsys.readouterr().err
        assert "opening the simulated backend has not finished in 0.5 s" in err and "driver may be stuck" in err
    finally:
        release.set()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_optional_tls_through_gunicorn(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    port = free_port()
    proc = start_server(port, FANWHY_TLS_CERT=str(cert), FANWHY_TLS_KEY=str(key))
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = requests.get(f"https://127.0.0.1:{port}/api/health", verify=str(cert),
                                        timeout=asking(deadline))
                break
            except (requests.ConnectionError, requests.Timeout):
                assert time.monotonic() < deadline, "TLS server did not start"
                time.sleep(0.2)
        assert response.status_code in (200, 503)
        assert response.headers["Strict-Transport-Security"].startswith("max-age=")
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
    finally:
        output = stop(proc)
    assert f"FanWhy is serving https://127.0.0.1:{port}/" in output


def test_the_openapi_document_is_valid_typed_and_named() -> None:
    from openapi_spec_validator import validate

    from app.web.openapi import SPEC as TYPED

    SPEC: Any = TYPED  # read as a document: each path below exists (validate checks its shape)
    validate(SPEC)  # raises on an invalid OpenAPI 3.1 document
    ids = [op["operationId"] for methods in SPEC["paths"].values() for op in methods.values()]
    assert len(ids) == len(set(ids)) and all(ids)
    schemas = SPEC["components"]["schemas"]
    assert {"Snapshot", "SnapshotView", "GpuSample", "ProcessSample", "Verdict", "Cause", "Alert"} <= set(schemas)
    assert "alert_events" not in schemas["SnapshotView"]["properties"]  # the view leaves them to Socket.IO
    metrics = SPEC["paths"]["/api/gpu/metrics"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert metrics == {"$ref": "#/components/schemas/SnapshotView"}
    assert schemas["GpuSample"]["properties"]["pstate"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}


def test_schemathesis_finds_no_server_error(make_app: Any, fake_nvml: Any, serve: Any) -> None:
    """Generated requests against every operation of the real server over HTTP: no 5xx, and every answer matches
    its documented schema."""
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import response_schema_conformance

    app = make_app(nvidia_selection(fake_nvml), rate_limit_per_s=0.0)
    app.extensions["fanwhy"].collector.wait_frame(0, timeout=5)
    live = serve(app)
    schema = schemathesis.openapi.from_url(f"{live.url}/api/openapi.json")
    failures = []
    def run(op: Any) -> None:
        @settings(max_examples=size(25), deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=op.as_strategy())
        def check(case: Any) -> None:
            response = case.call()
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} {case.query}: {response.status_code}")
            content_type = (response.headers.get("content-type") or [""])[0]
            assert content_type.startswith(("application/json", "text/plain", "text/html")), content_type
            if response.status_code < 500:
                case.validate_response(response, checks=[response_schema_conformance])

        check()

    for operation in schema.get_all_operations():
        op = operation.ok()  # type: ignore[union-attr]  # the shipped schema has no invalid operation
        if op.path != "/api/gpu/available":  # its `wait` would hold the run for minutes; see test_seed_apis.py
            run(op)
    assert failures == []
