"""Packaging: the Dockerfile's steps, the compose stack, the service unit. No Docker engine runs here, so the
image's Python environment is built the way its Dockerfile builds it: a clean venv from requirements.txt."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import requests
import yaml

from tests.support.servers import free_port, start_server, stop, wait_healthy

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def test_the_dockerfile_copies_what_exists_and_sets_the_nvidia_environment() -> None:
    text = dockerfile()
    for source in re.findall(r"^COPY (\S+) ", text, re.M):
        assert (ROOT / source).exists(), source
    assert "NVIDIA_VISIBLE_DEVICES=all" in text and "NVIDIA_DRIVER_CAPABILITIES=utility" in text
    assert re.search(r"^USER 10001:10001$", text, re.M)  # numeric: runAsNonRoot can check it
    assert re.search(r"^ARG BASE=python:3\.12-slim$", text, re.M) and re.search(r"^FROM \$\{BASE\}$", text, re.M)
    assert 'HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["python", "-m", "app.healthcheck"]' in text
    assert "--pid=host" in text and "FANWHY_HOST_PROC=/host/proc" in text and "docker.sock:ro" in text
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignored[1] == "*" and "!app/" in ignored and ".venv" not in "".join(ignored[2:])  # only what the image needs


@pytest.mark.parametrize("case", ["port", "allowed-hosts", "tls", "exporter", "token-file"])
def test_the_healthcheck_follows_the_port_tls_exporter_mode_and_the_allowlist(tmp_path: Path, case: str) -> None:
    """``python -m app.healthcheck`` with the environment the server runs with: a pass, and a fail when it is down."""
    port = free_port()
    env = {"FANWHY_TOKEN": "health-7c2e9a4f1b8d3065"}
    check_env = {**os.environ, **env, "FANWHY_PORT": str(port)}
    args: list[str] = []
    if case == "allowed-hosts":
        env["FANWHY_ALLOWED_HOSTS"] = "dashboard.example"
    if case == "tls":
        cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=x",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True, timeout=60)
        env.update(FANWHY_TLS_CERT=str(cert), FANWHY_TLS_KEY=str(key))
    if case == "exporter":
        args = ["exporter"]
        env["EXPORTER_PORT"] = str(port)
        check_env = {**os.environ, **env, "FANWHY_PORT": "1", "FANWHY_HEALTH_MODE": "exporter"}
    if case == "token-file":
        (tmp_path / "token").write_text(env.pop("FANWHY_TOKEN"))
        env["FANWHY_TOKEN_FILE"] = str(tmp_path / "token")
        check_env = {k: v for k, v in check_env.items() if k != "FANWHY_TOKEN"}
    check_env.update(env)
    proc = start_server(port, *args, **env)
    try:
        deadline = __import__("time").monotonic() + 30
        ok = None
        while __import__("time").monotonic() < deadline:
            ok = subprocess.run([sys.executable, "-m", "app.healthcheck"], env=check_env, cwd=ROOT, timeout=30,
                                capture_output=True, text=True)
            if ok.returncode == 0:
                break
            __import__("time").sleep(0.3)
        assert ok is not None and ok.returncode == 0, ok.stderr if ok else ""
    finally:
        stop(proc)
    down = subprocess.run([sys.executable, "-m", "app.healthcheck"], env=check_env, cwd=ROOT, timeout=30,
                          capture_output=True, text=True)
    assert down.returncode == 1 and "fanwhy health check" in down.stderr


@pytest.mark.skipif(os.environ.get("FANWHY_SKIP_VENV_BUILD") == "1", reason="FANWHY_SKIP_VENV_BUILD=1")
def test_the_image_environment_builds_from_requirements_and_serves(tmp_path: Path) -> None:
    """What `RUN pip install -r requirements.txt` and `COPY app static templates` produce, then `python -m app`."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          "-r", str(ROOT / "requirements.txt")], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-2000:]
    image = tmp_path / "opt-fanwhy"
    for part in ("app", "static", "templates"):
        shutil.copytree(ROOT / part, image / part)
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1",
           "FANWHY_SIM_PEAK": "0.1", "FANWHY_PORT": str(port), "FANWHY_DB": str(tmp_path / "h.db")}
    proc = subprocess.Popen([str(venv / "bin" / "python"), "-m", "app"], cwd=image, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}")
        assert health["backend"] == "simulated"
    finally:
        output = stop(proc)
    assert "Traceback" not in output


def test_the_compose_stack_references_what_is_shipped() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    assert set(compose["services"]) == {"fanwhy", "prometheus", "grafana"}
    fanwhy = compose["services"]["fanwhy"]
    assert fanwhy["pid"] == "host" and fanwhy["ports"] == ["127.0.0.1:8090:8090"]
    assert "FANWHY_TOKEN" in fanwhy["environment"]
    # one source of truth for the scrape token: one file (deploy/fanwhy-metrics-token) that FanWhy reads as a secret
    # and Prometheus as its credentials file, mounted where its config names it
    prometheus = compose["services"]["prometheus"]
    assert fanwhy["secrets"] == ["fanwhy_metrics_token"]
    assert compose["secrets"]["fanwhy_metrics_token"]["file"] == "./fanwhy-metrics-token"
    assert fanwhy["environment"]["FANWHY_METRICS_TOKEN_FILE"] == "/run/secrets/fanwhy_metrics_token"
    assert "./fanwhy-metrics-token:/etc/prometheus/fanwhy-metrics-token:ro" in prometheus["volumes"]
    assert "./prometheus/alerts.yml:/etc/prometheus/prometheus/alerts.yml:ro" in prometheus["volumes"]
    assert "environment" not in prometheus  # Prometheus does not expand variables in its config
    # Prometheus starts once FanWhy is ready (the image's health check: 200 once it has a snapshot, 503 before)
    assert prometheus["depends_on"] == {"fanwhy": {"condition": "service_healthy"}}
    scrape = yaml.safe_load((DEPLOY / "prometheus-compose.yml").read_text())["scrape_configs"][0]
    assert scrape["authorization"]["credentials_file"] == "fanwhy-metrics-token"
    assert "credentials" not in scrape["authorization"]
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("."):
                assert (DEPLOY / source).exists(), source
    provisioning = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/fanwhy.yml").read_text())
    assert provisioning["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian package prometheus) not installed")
@pytest.mark.parametrize("name", ["prometheus-compose.yml", "prometheus.yml"])
def test_the_shipped_prometheus_configs_pass_promtool_where_they_stand(name: str) -> None:
    """In the repository as it is (promtool checks that the token and rule files exist): the token file is shipped
    with a placeholder that FanWhy refuses, and the rules are found at the path compose mounts them under."""
    result = subprocess.run(["promtool", "check", "config", str(DEPLOY / name)], capture_output=True, text=True,
                            timeout=30, cwd="/")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 8 rules found" in result.stdout + result.stderr


def test_the_shipped_token_file_is_a_placeholder_fanwhy_refuses() -> None:
    from app.collect.config import ConfigError, load_settings

    token = DEPLOY / "fanwhy-metrics-token"
    with pytest.raises(ConfigError, match="placeholder"):
        load_settings({"FANWHY_METRICS_TOKEN_FILE": str(token)})


def test_the_service_unit(tmp_path: Path) -> None:
    """Its settings, and ``systemd-analyze verify`` of the unit as installed (ExecStart and WorkingDirectory pointed
    at this checkout: /opt/fanwhy is not here) with no complaint at all: fails on a misspelled directive, which the
    check that let any message through where /opt/fanwhy was missing did not."""
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]  # keep the unit's key case, as documented
    unit.read(DEPLOY / "fanwhy.service")
    service = unit["Service"]
    assert service["DynamicUser"] == "yes" and service["ExecStart"].endswith("python -m app")
    assert service["StateDirectory"] == "fanwhy" and "FANWHY_DB=%S/fanwhy/history.db" in service["Environment"]
    assert service["NoNewPrivileges"] == "yes" and unit["Install"]["WantedBy"] == "multi-user.target"
    if shutil.which("systemd-analyze"):
        installed = tmp_path / "fanwhy.service"
        text = (DEPLOY / "fanwhy.service").read_text()
        assert "ExecStart=/opt/fanwhy/.venv/bin/python -m app" in text and "WorkingDirectory=/opt/fanwhy\n" in text
        installed.write_text(text.replace("/opt/fanwhy/.venv/bin/python", str(Path(sys.executable).resolve()))
                             .replace("WorkingDirectory=/opt/fanwhy\n", f"WorkingDirectory={ROOT}\n"))
        result = subprocess.run(["systemd-analyze", "verify", str(installed)], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0 and "fanwhy.service" not in result.stderr, result.stderr


def test_a_wheel_installs_a_fanwhy_command_that_serves_the_page(tmp_path: Path) -> None:
    """`pip install .` as pip and pipx do it: a wheel built from this checkout, installed with its dependencies into
    a fresh venv, run from a folder that is not the clone, so the page's files must come from the package."""
    from app.core.version import __version__

    wheels = tmp_path / "wheels"
    source = tmp_path / "source"  # a copy: setuptools keeps build/ between builds, and a stale one leaks into wheels
    skip = shutil.ignore_patterns(".git", ".venv", ".whl", "build", "*.egg-info", "mutants", ".*_cache", ".hypothesis",
                                  "__pycache__")
    shutil.copytree(ROOT, source, ignore=skip)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--disable-pip-version-check", str(source), "-w", str(wheels)], capture_output=True,
                           text=True, timeout=300, cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("fanwhy-*.whl")
    assert wheel.name == f"fanwhy-{__version__}-py3-none-any.whl"
    page_files = page_files_in_the_repository()
    with zipfile.ZipFile(wheel) as archive:
        packed = {name.removeprefix("fanwhy/") for name in archive.namelist()
                  if name.startswith(("fanwhy/static/", "fanwhy/templates/"))}
    assert page_files - packed == set()  # every file the page is served from travels in the wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          str(wheel)], capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stderr[-2000:]
    fanwhy = str(venv / "bin" / "fanwhy")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1",
           "FANWHY_SIM_PEAK": "0.1", "FANWHY_DB": str(tmp_path / "h.db")}
    version = subprocess.run([fanwhy, "--version"], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert version.stdout.strip() == f"fanwhy {__version__}"
    snapshot = subprocess.run([fanwhy, "snapshot", "--json"], capture_output=True, text=True, cwd=elsewhere, env=env,
                              timeout=60)
    assert snapshot.returncode == 0 and '"simulated"' in snapshot.stdout, snapshot.stderr[-1000:]
    port = free_port()
    proc = subprocess.Popen([fanwhy], cwd=elsewhere, env={**env, "FANWHY_PORT": str(port)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        health = wait_healthy(url)
        assert health["version"] == __version__
        page = requests.get(url + "/", timeout=5)
        assert page.status_code == 200 and "history.js" in page.text
        for path in sorted(f for f in page_files if f.startswith("static/")):
            assert requests.get(f"{url}/{path}", timeout=5).status_code == 200, path
        assert requests.get(url + "/favicon.ico", timeout=5).status_code == 200
        metrics = requests.get(url + "/metrics", timeout=5).text
        assert 'fanwhy_build_info{python="' in metrics and f'version="{__version__}"' in metrics
        site = subprocess.run([str(venv / "bin" / "python"), "-c", "import fanwhy.application as a; print(a.PAGE)"],
                              capture_output=True, text=True, cwd=elsewhere, timeout=60).stdout.strip()
        assert site.startswith(str(venv))  # the installed package's files, not the clone's
        # the package is installed as `fanwhy`: no top-level `app` in site-packages to collide with another's
        no_app = subprocess.run([str(venv / "bin" / "python"), "-c", "import app"], capture_output=True, text=True,
                                cwd=elsewhere, timeout=60)
        assert no_app.returncode != 0 and "No module named 'app'" in no_app.stderr
        assert not list((venv / "lib").glob("python3*/site-packages/app"))
        module = subprocess.run([str(venv / "bin" / "python"), "-m", "fanwhy", "--version"], capture_output=True,
                                text=True, cwd=elsewhere, env=env, timeout=60)
        assert module.stdout.strip() == f"fanwhy {__version__}", module.stderr[-1000:]
        # bash's completion, from the installed command
        script = subprocess.run([str(venv / "bin" / "fanwhy"), "--print-completion", "bash"], capture_output=True,
                                text=True, cwd=elsewhere, env=env, timeout=60).stdout
        assert completions(script, "fanwhy sn") == ["snapshot"]
    finally:
        output = stop(proc)
    assert "Traceback" not in output


def page_files_in_the_repository() -> set[str]:
    """The files of static/ and templates/ that git tracks (what a clone serves), licences and notes included."""
    listed = subprocess.run(["git", "ls-files", "static", "templates"], cwd=ROOT, capture_output=True, text=True,
                            check=True, timeout=60).stdout.split()
    assert "static/favicon.ico" in listed and "templates/index.html" in listed
    return set(listed)


def completions(script: str, line: str) -> list[str]:
    """What bash's completion offers for the last word of ``line``, with ``script`` loaded (as bash-completion
    would load it): the function `complete` registered for fanwhy, called as bash calls it on Tab."""
    words = line.split(" ")
    program = script + f"""
COMP_WORDS=({" ".join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
COMP_LINE={line!r}
fn=$(complete -p fanwhy | sed -E 's/.*-F ([^ ]+).*/\\1/')
"$fn"
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze (package systemd) not found")
def test_the_service_unit_scores_at_most_3_in_systemd_analyze_security(tmp_path: Path) -> None:
    result = subprocess.run(["systemd-analyze", "security", "--offline=true", str(DEPLOY / "fanwhy.service")],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip("this systemd-analyze has no --offline mode")
    found = re.search(r"Overall exposure level for fanwhy\.service: (\d+\.\d+)", result.stdout)
    assert found, result.stdout[-2000:] + result.stderr[-2000:]
    assert float(found.group(1)) <= 3.0, result.stdout
    settings = [line for line in (DEPLOY / "fanwhy.service").read_text().splitlines() if not line.startswith("#")]
    assert "DeviceAllow=char-nvidia-frontend rw" in settings  # NVML's devices stay open
    kept_open = ("ProtectProc=", "ProcSubset=", "PrivateUsers=", "PrivateDevices=")  # attribution and NVML need them
    assert not [s for s in settings if s.startswith(kept_open)]


def test_the_lock_pins_every_requirement_with_hashes() -> None:
    """requirements.lock (pip-compile --generate-hashes) agrees with requirements.txt, and every entry has a hash:
    `make run` and the image install it with --require-hashes."""
    lock = (ROOT / "requirements.lock").read_text()
    entries = re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+) \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", lock, re.M)
    pinned = {name.lower().replace("_", "-"): version for name, version, _ in entries}
    assert len(entries) == len(re.findall(r"^[A-Za-z0-9_.\-]+==", lock, re.M)) >= 15  # every entry carries hashes
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^]]*\])?==(\S+)", line.strip())
        if found:
            assert pinned.get(found.group(1).lower().replace("_", "-")) == found.group(2), line
    assert "--require-hashes -r requirements.lock" in (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements.lock" in dockerfile()
    assert "file://" not in lock and "--extra-index-url" not in lock  # nothing of this machine's pip setup
