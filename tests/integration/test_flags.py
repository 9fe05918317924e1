"""Every flag a command lists changes what it does; a flag that would change nothing there is not listed, and is
refused (exit 2) when given anyway, before or after the command's name."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.main import COMMAND_FLAGS, FLAG_OF, _settings, parser, served_settings
from app.collect.assemble import alert_rules
from app.collect.config import ConfigError, load_settings
from app.collect.settings import Settings
from tests.support.servers import free_port, start_server, stop, wait_healthy

# a value for each flag, other than its default, and the setting a command runs with that it must change
VALUES = {"host": "0.0.0.0", "port": "18123", "interval_s": "2.5", "backend": "simulated", "server": "threads",
          "threads": "7", "alert_gpu_util_percent": "77", "alert_hold_s": "9", "alerts": "temperature.threshold=70"}
# the exporter keeps its own port and interval (EXPORTER_PORT, SCRAPE_INTERVAL): a flag sets those
SERVED = {("exporter", "port"): "port", ("exporter", "interval_s"): "interval_s"}
CASES = [(command, setting) for command, settings in COMMAND_FLAGS.items() for setting in settings
         if setting in FLAG_OF]


def effective(argv: list[str]) -> Settings:
    args = parser().parse_args(argv)
    return served_settings(_settings(args), args.command or "serve")


@pytest.mark.parametrize(("command", "setting"), CASES)
def test_each_listed_flag_changes_what_the_command_runs_with(command: str, setting: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FANWHY_TOKEN", "a-token-long-enough-for-0.0.0.0")  # a public --host needs one
    default = effective([command])
    changed = effective([command, FLAG_OF[setting], VALUES[setting]])
    field = SERVED.get((command, setting), setting)
    assert getattr(changed, field) != getattr(default, field)
    kind = type(getattr(default, field))
    assert getattr(changed, field) == kind(VALUES[setting])


OWN_MEANING = {("top", "server")}  # a command's own flag of the same name (top --server URL)


@pytest.mark.parametrize(("command", "setting"),
                         [(c, s) for c in COMMAND_FLAGS for s in FLAG_OF if s not in COMMAND_FLAGS[c]])
def test_a_flag_a_command_does_not_take_is_not_listed_and_is_refused(command: str, setting: str,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    files = ["capture.txt"] if command == "explain" else []  # explain's FILE... is required
    if (command, setting) in OWN_MEANING:  # top --server URL: a server to follow, not the serving model
        assert parser().parse_args([command, FLAG_OF[setting], "http://127.0.0.1:8090"]).follow
    else:
        with pytest.raises(SystemExit) as after:
            parser().parse_args([command, *files, FLAG_OF[setting], VALUES[setting]])
        assert after.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=f"{FLAG_OF[setting]} does not apply to `fanwhy {command}`"):
        _settings(parser().parse_args([FLAG_OF[setting], VALUES[setting], command, *files]))  # before the command
    with pytest.raises(SystemExit):
        parser().parse_args([command, "--help"])
    listed = capsys.readouterr().out
    own = (command, setting) in OWN_MEANING
    assert (f"{FLAG_OF[setting]} MODEL" not in listed) if own else (FLAG_OF[setting] not in listed)


def test_alert_changes_are_taken_only_where_alerts_are_evaluated() -> None:
    for argv in (["--alert", "temperature.threshold=70"], ["exporter", "--alert", "temperature.threshold=70"]):
        assert alert_rules(_settings(parser().parse_args(argv)))["temperature"].threshold == 70.0
    with pytest.raises(SystemExit):
        parser().parse_args(["snapshot", "--alert", "temperature.threshold=70"])


@pytest.mark.parametrize("watch", ["0", "-1", "nan", "inf", "soon"])
def test_watch_needs_seconds_above_zero(watch: str) -> None:
    done = subprocess.run([sys.executable, "-m", "app", "snapshot", "--watch", watch], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 2 and "--watch" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("processes", ["0", "-3", "many"])
def test_processes_needs_a_count_above_zero(processes: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        parser().parse_args(["snapshot", "--processes", processes])
    assert refused.value.code == 2 and "--processes" in capsys.readouterr().err
    assert parser().parse_args(["snapshot", "--processes", "3"]).processes == 3


@pytest.mark.parametrize("variable", ["FANWHY_TOKEN", "FANWHY_METRICS_TOKEN"])
def test_the_published_placeholder_token_is_refused(variable: str) -> None:
    """deploy/kubernetes/secret.yaml's placeholder: anyone can read it, so a server with it would be public."""
    placeholder = "replace-me-with-32-hex-characters"
    with pytest.raises(ConfigError, match="placeholder"):
        load_settings({variable: placeholder, "FANWHY_HOST": "0.0.0.0"})
    with pytest.raises(ConfigError, match="placeholder"):
        load_settings({variable: placeholder.upper()})
    assert load_settings({variable: "9f86d081884c7d659a2feaa0c55ad015"}).host == "127.0.0.1"
    shipped = (Path(__file__).parent.parent.parent / "deploy/kubernetes/secret.yaml").read_text()
    assert placeholder in shipped  # the placeholder this refuses is the one shipped


def test_the_exporters_interval_flag_is_what_it_collects_at() -> None:
    port = free_port()
    proc = start_server(port, "exporter", "--port", str(port), "--interval", "2", FANWHY_INTERVAL="1")
    try:
        health = wait_healthy(f"http://127.0.0.1:{port}")
        assert health["interval_s"] == 2.0
    finally:
        stop(proc)


def test_the_settings_dataclass_still_has_each_flag() -> None:
    names = {f.name for f in dataclasses.fields(Settings)}
    assert set(FLAG_OF) <= names and {"exporter_port", "scrape_interval_s"} <= names
