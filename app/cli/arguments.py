"""The command line's parser: each command with its flags, each flag from its setting's declaration
(app.collect.settings), the exit codes each command's --help lists. ``parser(argv)`` builds only the command
``argv`` names, where it names one first."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Callable, Sequence, TypeAlias

from ..collect.config import DECLARED
from ..collect.declare import shown
from ..collect.settings import Settings
from ..core.version import __version__

# (code, what it means, the commands it can end); a command's --help lists only its own
_EXIT_CODES: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (0, "done (a closed pipe, as in `fanwhy snapshot | head`, also ends quietly with 0)", ("snapshot",)),
    (0, "done", ("serve", "exporter", "explain")),
    (0, "left with q, Ctrl-C, SIGTERM or SIGHUP (the terminal is given back as it was)", ("top",)),
    (2, "a setting or argument is wrong: the message names it and what to do",
     ("serve", "exporter", "snapshot", "run", "top")),
    (2, "not a terminal (top needs one; for a pipe: fanwhy snapshot --watch)", ("top",)),
    (2, "a file cannot be read as a capture: the message names it and what is read", ("explain",)),
    (3, "the port cannot be listened on (in use, privileged, not an address of this machine)", ("serve", "exporter")),
    (4, "the backend named by --backend / FANWHY_BACKEND cannot start on this machine",
     ("serve", "exporter", "snapshot", "run", "top")),
    (5, "no snapshot in time (a GPU call hung: the driver may be stuck)", ("snapshot", "top")),
    (6, "--server never gave a snapshot (not there, the token refused, not a FanWhy): the message says which",
     ("top",)),
    (130, "interrupted (Ctrl-C) before the first answer", ("snapshot",)),
)


def exit_codes(command: str) -> str:
    """The exit codes ``command`` can end with, as its --help lists them."""
    lines = [f"  {code:<4}{text}" for code, text, commands in _EXIT_CODES if command in commands]
    return "\n".join(["exit codes:", *lines])


EXIT_CODES = exit_codes("serve")

# The settings a flag can set, as each is declared (app.collect.settings): setting -> its flag
FLAG_OF = {name: said.flag for name, said in DECLARED.items() if said.flag is not None}
# The flags each command lists, and so takes: a flag that would change nothing there is not offered (argparse then
# refuses it, exit 2). snapshot answers once with its own pace (--watch); run samples every --interval; the exporter
# serves with threads, always.
COMMAND_FLAGS: dict[str, tuple[str, ...]] = {
    "serve": tuple(FLAG_OF),
    "exporter": ("host", "port", "interval_s", "backend", "threads", "alert_gpu_util_percent", "alert_hold_s",
                 "alerts"),
    "snapshot": ("backend",),
    "run": ("interval_s", "backend"),
    "top": ("interval_s", "backend"),
    "explain": (),
}
# a setting the exporter keeps apart from the dashboard's (its own environment variable)
EXPORTER_SETTING = {"port": "exporter_port", "interval_s": "scrape_interval_s"}


def _flag_help(setting: str) -> str:
    """A flag's --help, from its setting's declaration: what it does, its variable and its default."""
    said, item = DECLARED[setting], next(f for f in dataclasses.fields(Settings) if f.name == setting)
    text = said.help.replace("`", "").replace("%", "%%")
    if said.choices:
        text = f"{'|'.join(said.choices)}: {text}"
    if said.repeat:
        return f"{text}; repeatable (added to {said.env})"
    return f"{text} ({said.env}, default {shown(item).replace('`', '')})"


def _settings_flags(parser: argparse.ArgumentParser, command: str) -> None:
    group = parser.add_argument_group("settings (each also an environment variable)")
    for setting, flag in FLAG_OF.items():
        if setting not in COMMAND_FLAGS[command]:
            continue
        said = DECLARED[setting]
        own = EXPORTER_SETTING.get(setting, setting) if command == "exporter" else setting
        if said.repeat:
            group.add_argument(flag, dest=setting, action="append", metavar=said.metavar,
                               default=argparse.SUPPRESS, help=_flag_help(own))
        else:
            group.add_argument(flag, dest=setting, type=_reader(setting), metavar=said.metavar,
                               default=argparse.SUPPRESS, help=_flag_help(own))


def _reader(setting: str) -> Callable[[str], object]:
    """A flag's type: its setting's reader, whose refusal argparse prints (exit 2) with the flag's name."""
    read = DECLARED[setting].read

    def typed(text: str) -> object:
        try:
            return read(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    typed.__name__ = setting
    return typed


_FORMATTER = argparse.RawDescriptionHelpFormatter
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # what add_subparsers gives


def _seconds(text: str) -> float:
    """A positive number of seconds (--watch)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text} must be a number of seconds above 0 (e.g. 2)")
    return value


def _count(text: str) -> int:
    """A whole number above 0 (--processes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be 1 or more")
    return value


def _add_serve(commands: Subparsers) -> None:
    serve = commands.add_parser("serve", help="serve the dashboard (the default)", formatter_class=_FORMATTER,
                                epilog=EXIT_CODES, description="Serve the dashboard, the REST API, Socket.IO and "
                                                               "/metrics on FANWHY_HOST:FANWHY_PORT.")
    _settings_flags(serve, "serve")


def _add_snapshot(commands: Subparsers) -> None:
    snap = commands.add_parser("snapshot", help="answer once in the terminal: the verdict, GPUs, top processes",
                               formatter_class=_FORMATTER, epilog=exit_codes("snapshot"),
                               description="Print why the fans run now: the verdict as a sentence, then the GPUs "
                                           "and the top processes. Writes no history.")
    snap.add_argument("--json", action="store_true", help="print the snapshot as JSON (what /api/gpu/metrics serves)")
    snap.add_argument("--watch", nargs="?", type=_seconds, const=2.0, metavar="SECONDS",
                      help="repeat every SECONDS (above 0, default 2) in place until Ctrl-C; with --json, one line "
                           "each")
    snap.add_argument("--processes", type=_count, default=8, metavar="N", help="processes to list (default 8)")
    _settings_flags(snap, "snapshot")


def _add_run(commands: Subparsers) -> None:
    job = commands.add_parser("run", help="run a command and print its receipt: energy, power, heat, throttling",
                              formatter_class=_FORMATTER,
                              epilog=exit_codes("run") + "\n  otherwise: the command's own exit code",
                              usage="fanwhy run [--json] [--interval SECONDS] [--backend NAME] -- COMMAND [ARGS...]",
                              description="Run COMMAND as a child and watch what it and its children do on every "
                                          "GPU and on the CPU; when it exits, print its receipt on standard error, "
                                          "like time: its energy (the GPUs' idle apart), peak and mean power, "
                                          "peak temperature, seconds throttled by reason, XID errors, CPU seconds "
                                          "and the seconds the fans ran above their idle floor. The exit code is "
                                          "the command's.")
    job.add_argument("--json", action="store_true", help="print the receipt as JSON (on standard error)")
    job.add_argument("command_argv", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS...]",
                     help="the command and its arguments, after --")
    _settings_flags(job, "run")


def _add_top(commands: Subparsers) -> None:
    top = commands.add_parser("top", help="a live full-screen view in the terminal (for SSH), like nvitop",
                              formatter_class=_FORMATTER, epilog=exit_codes("top") + "\n\n" + _top_keys(),
                              description="A live view in the terminal: the verdict and the fan chain at the top, "
                                          "then the GPUs with a short history, the fans, and the processes (GPU and "
                                          "CPU, with their container or pod); alerts as they fire. Collects here, "
                                          "or follows a running FanWhy with --server.")
    top.add_argument("--server", dest="follow", metavar="URL",
                     help="follow a running FanWhy (http://HOST:PORT) instead of collecting here; its token from "
                          "FANWHY_TOKEN, or asked for")
    top.add_argument("--readonly", action="store_true", help="never signal a process (T and k do nothing)")
    _settings_flags(top, "top")


def _add_explain(commands: Subparsers) -> None:
    replay = commands.add_parser("explain", help="explain another machine's fans from captured text",
                                 formatter_class=_FORMATTER, epilog=exit_codes("explain"),
                                 description="Print why the fans run, with the fan table and the findings behind "
                                             "it, for the machine the FILEs were captured on: any paste of labelled "
                                             "readings (sensors text, -u or -j; inxi's Sensors lines; tlp-stat -t; "
                                             "nbfc status; fw-fanctrl print; framework_tool --thermal; tailor_hwcaps; "
                                             "OpenCorsairLink; ectool's temps all "
                                             "(with the EC's fan table), "
                                             "pwmgetfanrpm and kelvin; hddtemp; vcgencmd measure_temp; auto-cpufreq's "
                                             "table; HWiNFO's summary copied as text; Everest's and AIDA64's "
                                             "report; glances' sensors; psutil's sensors; "
                                             "'label: value unit' lines; "
                                             "path:value listings such as grep -r . /sys/class/hwmon/hwmon*/, "
                                             "grep . /sys/class/thermal/*/* or "
                                             "OpenBMC's sensors; hpasmcli show fans and show temp; "
                                             "iLO's Fans page copied as text; "
                                             "amd-smi's default table; "
                                             "racadm getsensorinfo; omreport chassis fans; iLO's show "
                                             "/system1/fan1; "
                                             "a LibreHardwareMonitor report; HWMonitor's saved report; "
                                             "| tables such as ipmitool sensor, sdr (or their -c CSV), "
                                             "FreeIPMI's ipmi-sensors and "
                                             "ipmiutil; ipmitool sensor get; nvidia-smi --query-gpu CSV (its -l "
                                             "loop in turn) and dmon; node_exporter's, dcgm-exporter's and "
                                             "ipmi_exporter's metrics; "
                                             "rocm-smi "
                                             "and rocm-smi -a; JSON from sensors -j, liquidctl, Redfish, "
                                             "whole, as Python printed it or cut short), "
                                             "nvidia-smi's table, -q (whole or -d sections) and -q -x, a shell "
                                             "session of cat of hwmon and thermal files, "
                                             "/proc/acpi/ibm/fan and thermal, "
                                             "ipmitool sel list, "
                                             "liquidctl "
                                             "status and its set commands, fancontrol, thinkfan (YAML or legacy), "
                                             "fan2go, fw-fanctrl, i8kmon, zcfan, nfancurve, amdgpu-fan or amdfan, LACT "
                                             "and NBFC configurations, "
                                             "fancontrol's listing as it starts, fan2go detect, sensors-detect's "
                                             "summary, the logs of "
                                             "thinkfan, fan2go, "
                                             "nvfancontrol, smfc, Dell_iDRAC_fan_controller (and Dell's fan "
                                             "commands typed into ipmitool raw), "
                                             "hddfancontrol, "
                                             "i8kmon -v and "
                                             "fancontrol, pwmconfig's listing, test and exits, amd-smi metric, "
                                             "/proc/i8k, "
                                             "i8kctl and i8kfan, dell-bios-fan-control, the BSDs' sysctl sensors, "
                                             "tegrastats, smartctl, turbostat, "
                                             "acpi -t and -c, smc -f, "
                                             "osx-cpu-temp, ipmicfg "
                                             "-sdr, FreeIPMI's comma-separated output, gpustat, nvitop's table, "
                                             "the msi-ec driver's files, the platform profile (asusctl's too), the "
                                             "kernel's log of a CPU slowed for heat, a thermal zone at its critical "
                                             "trip or nouveau at its heat "
                                             "thresholds, an iDRAC's fan settings (racadm "
                                             "System.ThermalSettings) and a Supermicro BMC's fan mode; a forum's "
                                             "markup, a reply's quote marks, a terminal's colour codes and a file's "
                                             "encoding (UTF-16, a byte-order mark) are dropped. Several snapshots in "
                                             "one "
                                             "paste are "
                                             "read in turn (of a paste past 256 KiB, its first 64 KiB and its last "
                                             "192 KiB); several files of one machine combine. What runs on a GPU "
                                             "is read from nvidia-smi's Processes table where the paste holds one; "
                                             "otherwise the answer says each GPU's load where the paste prints it, "
                                             "and that the processes are not in a capture.")
    replay.add_argument("files", nargs="+", type=Path, metavar="FILE",
                        help="a capture of one machine's sensors (- reads it from standard input)")
    replay.add_argument("--json", action="store_true", help="print the fans and the sentence as JSON")


def _add_exporter(commands: Subparsers) -> None:
    exporter = commands.add_parser("exporter", help="serve only /metrics and the JSON API, for Prometheus",
                                   formatter_class=_FORMATTER, epilog=exit_codes("exporter"),
                                   description="Serve only /metrics and the JSON API on EXPORTER_PORT (9201), "
                                               "collecting every SCRAPE_INTERVAL (10 s); no page, no history.")
    _settings_flags(exporter, "exporter")


# each command's parser, in the order --help lists them
_COMMANDS: dict[str, Callable[[Subparsers], None]] = {
    "serve": _add_serve, "snapshot": _add_snapshot, "run": _add_run, "top": _add_top, "explain": _add_explain,
    "exporter": _add_exporter,
}


def parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given ``argv`` whose first word names a command, only that command's parser is
    built under the main one: no flag of the main parser can stand before it, and the command's own parser reads
    the rest as the full one would (a one-shot answer builds 2 parsers of 7; argparse makes a help formatter and
    asks gettext for the words of each argument it is given)."""
    only = argv[0] if argv and argv[0] in _COMMANDS else None
    main = argparse.ArgumentParser(
        prog="fanwhy", formatter_class=_FORMATTER, epilog=EXIT_CODES,
        description="FanWhy: why is my fan running? Serves a live dashboard of the GPUs, the processes and "
                    "containers behind their load, and the reason in a sentence (http://127.0.0.1:8090/).")
    main.add_argument("--version", action="version", version=f"fanwhy {__version__}")
    main.add_argument("--print-completion", choices=("bash", "zsh"), metavar="SHELL",
                      help="print the completion script for bash or zsh, e.g. fanwhy --print-completion bash > "
                           "~/.local/share/bash-completion/completions/fanwhy")
    main.add_argument("--print-man", action="store_true", help="print the man page (fanwhy --print-man | man -l -)")
    if only is None:
        _settings_flags(main, "serve")
    commands = main.add_subparsers(dest="command", metavar="COMMAND", title="commands (default: serve)")
    for command, add in _COMMANDS.items():
        if only in (None, command):
            add(commands)
    return main


def _top_keys() -> str:
    from .topkeys import help_lines

    return "keys:\n" + "\n".join("  " + line for line in help_lines(76))
