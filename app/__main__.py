"""The command line: ``fanwhy`` (or ``python -m app``) serves the dashboard; ``snapshot`` answers in the terminal;
``exporter`` serves only Prometheus metrics and the JSON API."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Callable, Sequence

from .collect.config import DECLARED, ConfigError, load_settings
from .collect.declare import shown
from .collect.settings import Settings
from .core.version import __version__

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
_EXPORTER_SETTING = {"port": "exporter_port", "interval_s": "scrape_interval_s"}


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
        own = _EXPORTER_SETTING.get(setting, setting) if command == "exporter" else setting
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


def parser() -> argparse.ArgumentParser:
    formatter = argparse.RawDescriptionHelpFormatter
    main = argparse.ArgumentParser(
        prog="fanwhy", formatter_class=formatter, epilog=EXIT_CODES,
        description="FanWhy: why is my fan running? Serves a live dashboard of the GPUs, the processes and "
                    "containers behind their load, and the reason in a sentence (http://127.0.0.1:8090/).")
    main.add_argument("--version", action="version", version=f"fanwhy {__version__}")
    main.add_argument("--print-completion", choices=("bash", "zsh"), metavar="SHELL",
                      help="print the completion script for bash or zsh, e.g. fanwhy --print-completion bash > "
                           "~/.local/share/bash-completion/completions/fanwhy")
    main.add_argument("--print-man", action="store_true", help="print the man page (fanwhy --print-man | man -l -)")
    _settings_flags(main, "serve")
    commands = main.add_subparsers(dest="command", metavar="COMMAND", title="commands (default: serve)")
    serve = commands.add_parser("serve", help="serve the dashboard (the default)", formatter_class=formatter,
                                epilog=EXIT_CODES, description="Serve the dashboard, the REST API, Socket.IO and "
                                                               "/metrics on FANWHY_HOST:FANWHY_PORT.")
    _settings_flags(serve, "serve")
    snap = commands.add_parser("snapshot", help="answer once in the terminal: the verdict, GPUs, top processes",
                               formatter_class=formatter, epilog=exit_codes("snapshot"),
                               description="Print why the fans run now: the verdict as a sentence, then the GPUs "
                                           "and the top processes. Writes no history.")
    snap.add_argument("--json", action="store_true", help="print the snapshot as JSON (what /api/gpu/metrics serves)")
    snap.add_argument("--watch", nargs="?", type=_seconds, const=2.0, metavar="SECONDS",
                      help="repeat every SECONDS (above 0, default 2) in place until Ctrl-C; with --json, one line "
                           "each")
    snap.add_argument("--processes", type=_count, default=8, metavar="N", help="processes to list (default 8)")
    _settings_flags(snap, "snapshot")
    job = commands.add_parser("run", help="run a command and print its receipt: energy, power, heat, throttling",
                              formatter_class=formatter,
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
    top = commands.add_parser("top", help="a live full-screen view in the terminal (for SSH), like nvitop",
                              formatter_class=formatter, epilog=exit_codes("top") + "\n\n" + _top_keys(),
                              description="A live view in the terminal: the verdict and the fan chain at the top, "
                                          "then the GPUs with a short history, the fans, and the processes (GPU and "
                                          "CPU, with their container or pod); alerts as they fire. Collects here, "
                                          "or follows a running FanWhy with --server.")
    top.add_argument("--server", dest="follow", metavar="URL",
                     help="follow a running FanWhy (http://HOST:PORT) instead of collecting here; its token from "
                          "FANWHY_TOKEN, or asked for")
    top.add_argument("--readonly", action="store_true", help="never signal a process (T and k do nothing)")
    _settings_flags(top, "top")
    replay = commands.add_parser("explain", help="explain another machine's fans from captured text",
                                 formatter_class=formatter, epilog=exit_codes("explain"),
                                 description="Print the fan part of the verdict, with the fan table, for the machine "
                                             "the FILEs were captured on, as FanWhy would say it there: sensors -j, "
                                             "sensors -u or sensors text, hwmon listings (grep -r . "
                                             "/sys/class/hwmon/hwmon*/), ipmitool sdr, sdr elist or sensor "
                                             "listings, nvidia-smi's table, fancontrol, thinkfan and fan2go "
                                             "configurations. Several files of one machine combine. Processes are "
                                             "not read from a capture: the answer says so.")
    replay.add_argument("files", nargs="+", type=Path, metavar="FILE", help="a capture of one machine's sensors")
    replay.add_argument("--json", action="store_true", help="print the fans and the sentence as JSON")
    exporter = commands.add_parser("exporter", help="serve only /metrics and the JSON API, for Prometheus",
                                   formatter_class=formatter, epilog=exit_codes("exporter"),
                                   description="Serve only /metrics and the JSON API on EXPORTER_PORT (9201), "
                                               "collecting every SCRAPE_INTERVAL (10 s); no page, no history.")
    _settings_flags(exporter, "exporter")
    return main


def _top_keys() -> str:
    from .cli.topkeys import HELP

    return "keys:\n" + "\n".join("  " + line for line in HELP[2:])


def _flags_given(args: argparse.Namespace) -> dict[str, str]:
    """setting -> the flag that set it, under the command's own names (the exporter's port is EXPORTER_PORT)."""
    command = args.command or "serve"
    # a repeated flag's values join the variable's: an error in them may be either's, so it keeps the variable's name
    flags = {setting: flag for setting, flag in FLAG_OF.items()
             if hasattr(args, setting) and not DECLARED[setting].repeat}
    if command == "exporter":
        flags = {_EXPORTER_SETTING.get(setting, setting): flag for setting, flag in flags.items()}
    return flags


def _refuse_foreign(args: argparse.Namespace) -> None:
    """``fanwhy --port 1 snapshot``: a flag given before a command that does not take it is refused, as after it."""
    command = args.command or "serve"
    foreign = [flag for setting, flag in FLAG_OF.items()
               if hasattr(args, setting) and setting not in COMMAND_FLAGS[command]]
    if foreign:
        raise ConfigError(f"{', '.join(foreign)} does not apply to `fanwhy {command}` (see fanwhy {command} --help)")


def _settings(args: argparse.Namespace) -> Settings:
    command = args.command or "serve"
    _refuse_foreign(args)
    overrides = {setting: getattr(args, setting) for setting in FLAG_OF if hasattr(args, setting)}
    for setting, values in list(overrides.items()):
        if DECLARED[setting].repeat:  # each --alert is added to FANWHY_ALERTS' list
            env = os.environ.get(DECLARED[setting].env, "")
            overrides[setting] = ",".join(filter(None, [env, *values]))
    if command == "exporter":
        overrides = {_EXPORTER_SETTING.get(setting, setting): value for setting, value in overrides.items()}
    return load_settings(**overrides)


def snapshot(settings: Settings, as_json: bool = False, watch: float | None = None, processes: int = 8) -> int:
    """One answer, fast (app.cli.start): the CPU times of the machine and of every process are read first thing,
    so one collection after start-up has every rate (CPU % over the start-up itself; per-process SM % from the
    samples NVML has buffered). With ``watch``, one answer every ``watch`` seconds until interrupted. No XID
    event thread for a one-shot answer: it could not see an event in that time, and stopping it costs its 0.5 s poll."""
    from .cli.start import started

    collector = started(settings, watch=watch is not None)
    if isinstance(collector, int):
        return collector
    from .cli.terminal import render  # imported already, while the backend opened (app.cli.start)
    frame = collector.wait_frame(0, collector.watchdog_s + 1)
    if frame is None:
        collector.stop(join_s=1.0)
        print(f"fanwhy: {collector.hung or 'no snapshot in time'}", file=sys.stderr)
        return 5
    if watch is not None:
        collector.set_interval(max(0.2, watch))
    tty = sys.stdout.isatty()
    try:
        while True:
            if as_json:
                sys.stdout.write(json.dumps(frame.view, indent=None if watch is not None else 2) + "\n")
            else:
                sys.stdout.write(("\x1b[H\x1b[2J" if watch is not None and tty else "")
                                 + render(frame.snapshot, processes) + ("" if tty or watch is None else "\n"))
            sys.stdout.flush()
            if watch is None:
                return 0
            frame = collector.wait_frame(frame.seq, collector.interval_s + collector.watchdog_s + 1) or frame
    finally:
        # A one-shot answer leaves NVML to the process's exit (nvmlShutdown took ~0.1 s on an H100)
        collector.stop(close_backend=watch is not None, join_s=1.0)


def served_settings(settings: Settings, mode: str) -> Settings:
    """What a server of ``mode`` runs with: the exporter's own port and interval (EXPORTER_PORT, SCRAPE_INTERVAL,
    or its --port and --interval), and no history."""
    if mode == "exporter":
        return dataclasses.replace(settings, port=settings.exporter_port, interval_s=settings.scrape_interval_s,
                                   db="none")
    return settings


def _serve(settings: Settings, mode: str) -> int:
    from .cli.preflight import check_backend, check_history, check_port
    from .collect.assemble import check_assembly
    from .serving import serve

    settings = served_settings(settings, mode)
    check_assembly(settings)
    check_history(settings)
    check_port(settings.host, settings.port, "exporter_port" if mode == "exporter" else "port")
    check_backend(settings)
    return serve(settings, mode=mode)


def main(argv: Sequence[str] | None = None) -> int:
    return _main(parser().parse_args(argv))


def _main(args: argparse.Namespace) -> int:
    if getattr(args, "print_completion", None) or getattr(args, "print_man", False):
        from .cli.completion import render

        sys.stdout.write(render(args.print_completion or "man", parser()))
        return 0
    command = args.command or "serve"
    quiet = command in ("snapshot", "run")  # the terminal answer is the output; the server's log is for its operator
    # top owns the screen: a log line would be painted over it (what goes wrong is in its title instead)
    level = logging.CRITICAL if command == "top" else logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=level,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if command == "explain":  # another machine's captures: no setting of this one applies
        from .cli.replay import run as replay

        try:
            _refuse_foreign(args)
        except ConfigError as error:
            print(f"fanwhy: {error}", file=sys.stderr)
            return 2
        return replay(list(args.files), args.json)
    flags = _flags_given(args)
    try:
        settings = _settings(args)
        collects = command in ("snapshot", "run") or (command == "top" and not args.follow)
        if collects and settings.backend in ("auto", "nvidia"):
            from .vendors import nvml_early

            nvml_early.start()  # NVML opens on a thread while the collector's modules are imported
        if command == "snapshot":
            return snapshot(settings, args.json, args.watch, args.processes)
        if command == "top":
            from .cli.top import main as top

            return top(settings, args.follow, settings.interval_s, args.readonly)
        if command == "run":
            from .cli.run import run as run_job

            argv = list(args.command_argv)
            return run_job(settings, argv[1:] if argv[:1] == ["--"] else argv, args.json)
        return _serve(settings, command)
    except ConfigError as error:
        # imported here: a one-shot answer reads its CPU baseline before the collector's imports
        from .cli.preflight import BackendFailed, PortUnavailable

        print(f"fanwhy: {error.named(flags)}", file=sys.stderr)
        return 4 if isinstance(error, BackendFailed) else 3 if isinstance(error, PortUnavailable) else 2


def run() -> None:
    """The console entry point: exit codes as documented; a closed pipe and Ctrl-C end quietly."""
    one_shot = False
    try:
        args = parser().parse_args()
        one_shot = args.command == "snapshot" and args.watch is None
        code = _main(args)
        sys.stdout.flush()
    except BrokenPipeError:
        code = 0
    except KeyboardInterrupt:
        code = 130 if "--watch" not in sys.argv else 0
    if code == 0 or code == 130:
        # stdout may be a closed pipe: point it at /dev/null so the interpreter's final flush cannot fail
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if one_shot:
        # The answer is out and nothing is left to save (no history, NVML left to the exit): skip the interpreter's
        # teardown of every module, ~25 ms of a one-shot answer on an H100 host.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
