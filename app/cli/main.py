"""The command line's commands: ``fanwhy`` (or ``python -m app``) serves the dashboard; ``snapshot`` answers in the
terminal; ``exporter`` serves only Prometheus metrics and the JSON API; ``top``, ``run`` and ``explain``. The entry
point is app.__main__.run, which reads a one-shot's CPU baseline (app.cli.early) before this module is imported."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import select
import signal
import sys
from pathlib import Path
from typing import Sequence

from ..collect.config import DECLARED, ConfigError, load_settings
from ..collect.settings import Settings
from ..core.cells import shown, shown_lines
from .arguments import COMMAND_FLAGS, EXPORTER_SETTING, FLAG_OF, parser

__all__ = ["COMMAND_FLAGS", "FLAG_OF", "main", "parser", "run", "served_settings", "snapshot"]


def _flags_given(args: argparse.Namespace) -> dict[str, str]:
    """setting -> the flag that set it, under the command's own names (the exporter's port is EXPORTER_PORT)."""
    command = args.command or "serve"
    # a repeated flag's values join the variable's: an error in them may be either's, so it keeps the variable's name
    flags = {setting: flag for setting, flag in FLAG_OF.items()
             if hasattr(args, setting) and not DECLARED[setting].repeat}
    if command == "exporter":
        flags = {EXPORTER_SETTING.get(setting, setting): flag for setting, flag in flags.items()}
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
        overrides = {EXPORTER_SETTING.get(setting, setting): value for setting, value in overrides.items()}
    return load_settings(**overrides)


def snapshot(settings: Settings, as_json: bool = False, watch: float | None = None, processes: int = 8) -> int:
    """One answer, fast (app.cli.start): the CPU times of the machine and of every process are read first thing,
    so one collection after start-up has every rate (CPU % over the start-up itself; per-process SM % from the
    samples NVML has buffered). With ``watch``, one answer every ``watch`` seconds until interrupted. No XID
    event thread for a one-shot answer: it could not see an event in that time, and stopping it costs its 0.5 s poll."""
    from .start import started

    collector = started(settings, watch=watch is not None)
    if isinstance(collector, int):
        return collector
    from .terminal import render  # imported already, while the backend opened (app.cli.start)
    frame = collector.wait_frame(0, collector.watchdog_s + 1)
    if frame is None:
        collector.stop(join_s=1.0)
        print(f"fanwhy: {shown(collector.hung or 'no snapshot in time')}", file=sys.stderr)
        return 5
    if watch is not None:
        collector.set_interval(max(0.2, watch))
    tty = sys.stdout.isatty()
    if as_json:
        import json  # here: a text answer does without it
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
        # A one-shot answer leaves NVML to the process's exit (nvmlShutdown is slow, and the exit does it)
        collector.stop(close_backend=watch is not None, join_s=1.0)


def served_settings(settings: Settings, mode: str) -> Settings:
    """What a server of ``mode`` runs with: the exporter's own port and interval (EXPORTER_PORT, SCRAPE_INTERVAL,
    or its --port and --interval), and no history."""
    if mode == "exporter":
        return dataclasses.replace(settings, port=settings.exporter_port, interval_s=settings.scrape_interval_s,
                                   db="none")
    return settings


def _serve(settings: Settings, mode: str) -> int:
    from ..collect.assemble import check_assembly
    from ..serving import serve
    from .preflight import check_backend, check_history, check_packages, check_port

    settings = served_settings(settings, mode)
    check_packages(settings)
    check_assembly(settings)
    check_history(settings)
    check_port(settings.host, settings.port, "exporter_port" if mode == "exporter" else "port")
    check_backend(settings)
    return serve(settings, mode=mode)


STDIN_LIMIT = (4 << 20) + 1  # one byte past what a capture file may hold: a larger paste is refused as a file is


def _ended(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _stdin_file(folder: Path) -> Path:
    """Standard input as a file named ``stdin`` (what an error about it names), at most ``STDIN_LIMIT`` bytes."""
    path = folder / "stdin"
    path.write_bytes(read_stdin(STDIN_LIMIT))
    return path


STDIN_POLL_S = 0.25  # the longest a signal that came just before a read waits for its handler


def read_stdin(limit: int) -> bytes:
    """Up to ``limit`` bytes of standard input, read only when ``select`` says some are there, waiting at most
    ``STDIN_POLL_S`` at a time. A blocking read() is interrupted only by a signal that comes while it waits: one that
    comes after Python last looked for signals and before the read began leaves the read waiting for input that may
    never come, its handler (explain's SIGTERM) never run; a loaded machine once left an explain so for a minute.
    Between waits Python runs any handler due."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # no descriptor (a test's stand-in): read it as it reads
        return sys.stdin.buffer.read(limit)
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        if not select.select([fd], [], [], STDIN_POLL_S)[0]:
            continue
        chunk = os.read(fd, min(1 << 16, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class ShownFormatter(logging.Formatter):
    """Log lines as the terminal shows untrusted text: a process's or a fan's name never acts on the terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return shown_lines(super().format(record))


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    return _main(parser(argv).parse_args(argv))


def _main(args: argparse.Namespace) -> int:
    if getattr(args, "print_completion", None) or getattr(args, "print_man", False):
        from .completion import render

        sys.stdout.write(render(args.print_completion or "man", parser()))
        return 0
    command = args.command or "serve"
    quiet = command in ("snapshot", "run")  # the terminal answer is the output; the server's log is for its operator
    # top owns the screen: a log line would be painted over it (what goes wrong is in its title instead)
    level = logging.CRITICAL if command == "top" else logging.WARNING if quiet else logging.INFO
    handler = logging.StreamHandler()
    handler.setFormatter(ShownFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if command == "explain":  # another machine's captures: no setting of this one applies
        from .replay import run as replay

        try:
            _refuse_foreign(args)
        except ConfigError as error:
            print(f"fanwhy: {shown(error)}", file=sys.stderr)
            return 2
        from ..core.scratch import scratch
        from .replay import EXPLAIN_PREFIX

        signal.signal(signal.SIGTERM, _ended)  # the scratch folder goes with a terminated explain (kill -9: the next)
        with scratch(EXPLAIN_PREFIX) as folder:  # "-": the capture on standard input
            files = [_stdin_file(folder) if str(p) == "-" else p for p in args.files]
            return replay(files, args.json)
    flags = _flags_given(args)
    try:
        settings = _settings(args)
        if command == "run" and settings.backend in ("auto", "nvidia"):
            from ..vendors import nvml_early

            nvml_early.start()  # NVML opens on a thread while the collector's modules are imported (snapshot and
            # top start it in app.cli.start, after reading their CPU baseline)
        if command == "snapshot":
            return snapshot(settings, args.json, args.watch, args.processes)
        if command == "top":
            from .top import main as top

            return top(settings, args.follow, settings.interval_s, args.readonly)
        if command == "run":
            from .run import run as run_job

            argv = list(args.command_argv)
            return run_job(settings, argv[1:] if argv[:1] == ["--"] else argv, args.json)
        return _serve(settings, command)
    except ConfigError as error:
        # imported here: a one-shot answer reads its CPU baseline before the collector's imports
        from .preflight import BackendFailed, PortUnavailable

        print(f"fanwhy: {shown(error.named(flags))}", file=sys.stderr)
        return 4 if isinstance(error, BackendFailed) else 3 if isinstance(error, PortUnavailable) else 2


def run() -> None:
    """The command line as a program (app.__main__.run): exit codes as documented; a closed pipe and Ctrl-C end
    quietly."""
    one_shot = False
    try:
        args = parser(sys.argv[1:]).parse_args()
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
        # teardown of every module, a noticeable part of a one-shot answer.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

