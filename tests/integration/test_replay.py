"""``fanwhy explain FILE...``: another machine's captures read by the live readers, the fan sentence as FanWhy would
say it there; an unknown or damaged file is one line and exit 2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.replay import run
from app.cli.replay_work import NO_PROCESSES
from tests.support.corpus import CORPUS, blocks

ROOT = Path(__file__).resolve().parent.parent.parent
BY_KEY = {b.key: b for b in blocks()}


def capture(tmp: Path, key: str) -> Path:
    path = tmp / f"{key}.txt"
    path.write_text(BY_KEY[key].capture)
    return path


def explained(*paths: Path) -> dict:
    import io

    out = io.StringIO()
    assert run(list(paths), as_json=True, out=out) == 0
    return json.loads(out.getvalue())


def test_the_corpus_has_its_48_machines_with_their_sources() -> None:
    assert len(BY_KEY) == 48 and all(b.source for b in BY_KEY.values())
    assert (CORPUS / "README.md").exists()


def test_an_ipmitool_listing_names_the_two_dead_rotors(tmp_path: Path) -> None:
    """Dell R320: Fan3B and Fan4B at 0 RPM with status cr, the other eight healthy."""
    answer = explained(capture(tmp_path, "servers-bmc-01"))
    faults = [f for f in answer["findings"] if f["kind"] == "fan-fault"]
    assert sorted(s for f in faults for s in f["subjects"]) == ["bmc/Fan3B", "bmc/Fan4B"]
    assert answer["findings"][0]["kind"] == "fan-fault" and "no-fault" not in {f["kind"] for f in answer["findings"]}
    assert answer["sentence"].startswith("The BMC reports the Fan3B (BMC) and Fan4B (BMC) failed (status cr, reading "
                                         "0 RPM): failed or missing fans")
    states = {f["name"]: f["state"] for f in answer["fans"]}
    assert states["Fan3B (BMC)"] == states["Fan4B (BMC)"] == "failed"
    assert sum(s == "running" for s in states.values()) == 8
    assert answer["processes"] == NO_PROCESSES


def test_sensors_u_keeps_the_fans_and_drops_the_placeholder(tmp_path: Path) -> None:
    """ASUS B450-E: Tsensor 1 at 216 °C is a placeholder; CPU Fan and CPU OPT have fans on them."""
    answer = explained(capture(tmp_path, "desktop-superio-01"))
    temps = {t["label"]: t["temperature_c"] for t in answer["temperatures"]}
    assert "Tsensor 1 Temperature" not in temps and all(t < 127 for t in temps.values())
    running = [f["name"] for f in answer["fans"] if f["state"] == "running"]
    assert running == ["CPU Fan (asuswmisensors fan1)", "CPU OPT (asuswmisensors fan7)"]


def test_sensors_text_and_sensors_j_of_one_machine_read_alike(tmp_path: Path) -> None:
    """The ASUS laptop block holds both: cpu_fan 2,400 RPM and gpu_fan 2,600 RPM either way."""
    text = BY_KEY["laptops-08"].capture
    plain, as_json = text.split("[user@host ~]$ sensors -j asus-isa-0000")
    (tmp_path / "plain.txt").write_text(plain)
    (tmp_path / "json.txt").write_text(as_json)
    speeds = [{f["name"]: f["rpm"] for f in explained(tmp_path / name)["fans"]} for name in ("plain.txt", "json.txt")]
    assert speeds[0] == speeds[1] == {"cpu_fan (asus fan1)": 2400, "gpu_fan (asus fan2)": 2600}


def test_an_hwmon_listing_and_its_fancontrol_configuration_combine(tmp_path: Path) -> None:
    listing = tmp_path / "hwmon.txt"
    listing.write_text("/sys/class/hwmon/hwmon2/name:nct6775\n/sys/class/hwmon/hwmon2/fan2_input:1400\n"
                       "/sys/class/hwmon/hwmon2/pwm2:204\n/sys/class/hwmon/hwmon2/pwm2_enable:1\n"
                       "/sys/class/hwmon/hwmon2/temp2_input:71000\n/sys/class/hwmon/hwmon2/temp2_label:CPUTIN\n")
    config = tmp_path / "fancontrol"
    config.write_text("INTERVAL=10\nDEVPATH=hwmon2=devices/platform/nct6775.656\nDEVNAME=hwmon2=nct6775\n"
                      "FCTEMPS=hwmon2/pwm2=hwmon2/temp2_input\nFCFANS=hwmon2/pwm2=hwmon2/fan2_input\n"
                      "MINTEMP=hwmon2/pwm2=40\nMAXTEMP=hwmon2/pwm2=80\nMINSTART=hwmon2/pwm2=60\n"
                      "MINSTOP=hwmon2/pwm2=30\nMINPWM=hwmon2/pwm2=30\n")
    answer = explained(listing, config)
    (fan,) = answer["fans"]
    assert fan["source"] == "nct6775 CPUTIN" and fan["source_c"] == 71.0 and fan["floor_percent"] is not None
    lead = answer["findings"][0]  # fancontrol's curve at 71 °C: 30/255 at 40 °C to 255 at 80 °C asks for about 80 %
    assert lead["kind"] == "daemon-curve" and round(lead["facts"]["asks"]) == 80 and lead["facts"]["duty"] == 80
    assert "fancontrol drives nct6775 pwm2 from CPUTIN (nct6775)" in answer["sentence"]
    assert "at 71 °C now it asks for about 80 %" in answer["sentence"]
    listing.write_text(listing.read_text().replace("pwm2:204", "pwm2:153"))  # 60 %: not what fancontrol asks
    lead = explained(listing, config)["findings"][0]
    assert (lead["kind"], lead["confidence"], lead["facts"]["duty"]) == ("daemon-not-followed", "likely", 60)


@pytest.mark.parametrize(("text", "why"), [
    ("hello world\n", "not a capture FanWhy reads"),
    ("", "empty"),
    ('{"nct6798-isa-0290": {"fan1": {"fan1_input": 12', "not whole JSON"),
])
def test_an_unknown_or_damaged_file_is_one_line_and_exit_2(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    done = subprocess.run([sys.executable, "-m", "app", "explain", str(path)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and why in done.stderr and "Traceback" not in done.stderr


def test_a_file_too_large_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(50 << 20)
    done = subprocess.run([sys.executable, "-m", "app", "explain", str(path)], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 2 and "larger than 4 MiB" in done.stderr


def test_the_terminal_answer_says_a_capture_has_no_processes(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "app", "explain", str(capture(tmp_path, "servers-bmc-01"))],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("The BMC reports the Fan3B (BMC)") and NO_PROCESSES in lines
    assert any(line.startswith("FAN ") and "FOUND" in line for line in lines)  # the fan wing's table: it answers
    assert any(line.startswith("Fan3B (BMC)") and line.endswith("FAILED") for line in lines)
    assert any(line.startswith("Fan1A (BMC)") and line.endswith("running") for line in lines)


def test_no_replayed_block_claims_an_idle_curve_or_calls_a_stalled_fan_at_rest(tmp_path: Path) -> None:
    """Across every block FanWhy reads: never "idle curve"; "at rest" only when every fan's duty asks for nothing
    (or it has no duty and may stop); a floor named only where one was read."""
    read = 0
    for key, block in BY_KEY.items():
        path = tmp_path / f"{key}.txt"
        path.write_text(block.capture)
        import io

        out, err = io.StringIO(), io.StringIO()
        if run([path], as_json=True, out=out, err=err) != 0:
            continue
        read += 1
        answer = json.loads(out.getvalue())
        sentence = answer["sentence"]
        assert "idle curve" not in sentence, key
        live = [f for f in answer["fans"] if f["state"] != "dead"]
        if re.search(r"are at rest \(|rests? \(fan-stop\)", sentence):  # a claim of rest, not "at rest, or ..."
            assert all(f["state"] == "stopped" for f in live), (key, sentence)
        if "floor" in sentence.replace("no idle floor is known", ""):
            assert any(f["floor_percent"] is not None for f in live), (key, sentence)
        if "that is its lowest speed" in sentence:  # a floor shown by the capture: asked for 0 % and still turning
            assert any(f["percent"] == 0 and f["rpm"] and f["floor_rpm"] == f["rpm"] for f in live), (key, sentence)
        if re.search(r"(?<!probably )following ", sentence):  # a source stated, not guessed
            assert any(f["source_from"] in ("declared", "design", "learned") for f in live), (key, sentence)
    assert read >= 45  # the corpus's 48 less the three that are not captures FanWhy reads


def test_the_corpus_page_in_docs_is_current() -> None:
    from tests.support.corpus_table import DOC, table

    assert DOC.read_text() == table(), "run: python -m tests.support.corpus_table"


def test_a_capture_cannot_write_outside_its_replay_folder(tmp_path: Path) -> None:
    """Paths in a capture are the capture's words, not the reader's: nothing is written outside the replay."""
    outside = tmp_path / "outside"
    path = tmp_path / "hostile.txt"
    path.write_text("/sys/class/hwmon/hwmon1/name:nct6798\n/sys/class/hwmon/hwmon1/fan1_input:900\n"
                    f"/sys/class/hwmon/hwmon1/device/gpu_od/../../../../../../../../{outside}:x\n"
                    f"/sys/class/hwmon/hwmon1/../../../../../../../../{outside}2:x\n"
                    f"==> /sys/class/hwmon/hwmon1/../../../../../../../{outside}3 <==\nx\n")
    answer = explained(path)
    assert [f["rpm"] for f in answer["fans"]] == [900]
    assert not any(p.name.startswith("outside") for p in tmp_path.iterdir())


def test_nvidia_smis_table_gives_each_card_and_its_fan(tmp_path: Path) -> None:
    """4 × GTX 1080 Ti: two idle cards at 30-31 %, the busy one at 51 % (68 °C, 76 W) is the one heard."""
    answer = explained(capture(tmp_path, "nvidia-06"))
    assert {f["name"]: f["percent"] for f in answer["fans"]} == {"GPU 0 fan 0": 30.0, "GPU 1 fan 0": 31.0,
                                                                  "GPU 2 fan 0": 51.0}
    lead = answer["findings"][0]  # the one heard: the fastest, with its own card's temperature beside it
    assert (lead["kind"], lead["subjects"][0], lead["facts"]["duty"], lead["facts"]["source_c"]) == \
        ("turning", "nvidia/gpu2 fan 0", 51.0, 68.0), lead
    assert answer["sentence"].startswith("The fan 0 of GPU 2 is at 51 % duty"), answer["sentence"]


def test_a_laptop_ecs_fans_at_0_rpm_are_not_empty_headers(tmp_path: Path) -> None:
    """Dell G16 (dell_ddv): the EC keeps both fans stopped below ~70 °C and dell_smm reports their speed. 0 RPM there
    is a state, not a missing fan: at rest, by the design its documentation gives."""
    answer = explained(capture(tmp_path, "laptops-07"))
    assert all(f["state"] == "stopped" for f in answer["fans"]) and len(answer["fans"]) == 2
    rests = [f for f in answer["findings"] if f["kind"] == "at-rest"]  # Dell's EC stops its fans while cool
    assert sorted(s for f in rests for s in f["subjects"]) == ["dell_ddv/CPU Fan", "dell_ddv/Video Fan"]
    assert all(f["facts"]["source_c"] < f["facts"]["below_c"] == 70 for f in rests)
    assert not {"headers-read-zero", "empty-slots"} & {f["kind"] for f in answer["findings"]}
    assert "at rest" in answer["sentence"] and "BMC" not in answer["sentence"]


def test_a_dell_fan_at_0_rpm_beside_a_hot_cpu_is_not_called_probably_at_rest(tmp_path: Path) -> None:
    """Dell's EC rests its fans while the machine is cool: at 85 °C a 0 RPM is as likely a silent tachometer (fails
    when the rule ignores the temperature)."""
    path = capture(tmp_path, "laptops-07")
    path.write_text(path.read_text().replace("CPU:          +66.0°C", "CPU:          +85.0°C"))
    answer = explained(path)
    assert "85 °C" in answer["sentence"] and "probably at rest" not in answer["sentence"]
    lead = answer["findings"][0]
    assert lead["kind"] == "hot-not-cooled" and "at-rest" not in {f["kind"] for f in answer["findings"]}


def test_a_capture_on_standard_input_is_read_as_a_file(tmp_path: Path) -> None:
    """`fanwhy explain -` reads the paste from standard input (`xclip -o | fanwhy explain -`), as the same file."""
    text = capture(tmp_path, "servers-bmc-01").read_text()
    piped = subprocess.run([sys.executable, "-m", "app", "explain", "-"], input=text, capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[0].startswith("The BMC reports the Fan3B (BMC)")
    junk = subprocess.run([sys.executable, "-m", "app", "explain", "-"], input="hello world\n", capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert junk.returncode == 2, junk.stderr
    # named as standard input, never by the scratch folder explain kept it in
    assert junk.stderr == ("fanwhy explain: standard input: not a capture FanWhy reads: no fan, pump, speed or "
                           "temperature reading was found in it\n"), junk.stderr
    empty = subprocess.run([sys.executable, "-m", "app", "explain", "-"], input="", capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
    assert (empty.returncode, empty.stderr) == (2, "fanwhy explain: standard input: empty\n")


def test_every_answer_fits_the_terminal_and_keeps_each_probably(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """In a terminal of 72 columns every line of every corpus machine's answer fits in its cells (prose wrapped,
    table cells cut with an ellipsis) and every "(probably)" of the whole answer is still there; into a pipe
    nothing is cut."""
    import io

    from app.core.cells import width

    for key in sorted(BY_KEY):
        path = capture(tmp_path, key)
        monkeypatch.delenv("COLUMNS", raising=False)
        whole = io.StringIO()
        run([path], out=whole, err=io.StringIO())
        monkeypatch.setenv("COLUMNS", "72")
        narrow = io.StringIO()
        run([path], out=narrow, err=io.StringIO())
        lines = narrow.getvalue().splitlines()
        assert all(width(line) <= 72 for line in lines), (key, [line for line in lines if width(line) > 72])
        assert narrow.getvalue().count("(probably)") == whole.getvalue().count("(probably)"), key
        assert "…" not in whole.getvalue() or "…" in BY_KEY[key].capture, key
