"""The name a person knows a process by: the program, not its interpreter.

``python3 /home/a/train.py --lr 3`` is ``python3 train.py``; ``/usr/bin/python3 /usr/local/bin/vllm serve m`` (a
console script) is ``vllm serve``; ``torchrun --nproc_per_node 8 train.py`` is ``torchrun … train.py``;
``python -m ipykernel_launcher -f k.json`` is ``jupyter kernel``; ``java -Xmx4g -jar app.jar`` is ``java app.jar``;
``node /srv/server.js`` is ``node server.js``; a native program is its name and its subcommand (``ollama serve``).
One rule, used by every view: the process table, the verdict, "Most GPU energy", the terminal and notifications.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import ProcessSample

MAX_LENGTH = 48
_INTERPRETER = re.compile(r"^(python[\d.]*|pythonw|pypy[\d.]*|node|nodejs|ruby[\d.]*|perl[\d.]*|php[\d.]*|bash|sh|"
                          r"zsh|dash|deno|bun|Rscript|julia|lua[\d.]*)$")
# launchers that start a script (often on every GPU): the script is the job
_LAUNCHERS = frozenset({"torchrun", "deepspeed", "accelerate", "mpirun", "mpiexec", "srun", "horovodrun", "colossalai"})
_LAUNCHER_MODULES = {"torch.distributed.run": "torchrun", "torch.distributed.launch": "torchrun",
                     "deepspeed.launcher.runner": "deepspeed", "accelerate.commands.launch": "accelerate"}
_KERNELS = frozenset({"ipykernel_launcher", "ipykernel", "jupyter_kernel"})
# an interpreter's options that take the next word as their value
_TAKES_VALUE = {"python": frozenset({"-W", "-X", "-Q"}), "php": frozenset({"-d", "-c", "-z"}),
                "node": frozenset({"-r", "--require", "--import", "--loader", "--title"}),
                "java": frozenset({"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules",
                                   "--add-opens", "--add-exports", "-javaagent"})}
# the options after which an interpreter's next word is inline code: its text says nothing in a sentence and may
# hold a secret, so the program is the interpreter and the option (also with FANWHY_NAMES_ONLY)
_EVAL = {"php": ("-r",), "perl": ("-e", "-E"), "julia": ("-e", "-E", "--eval"), "Rscript": ("-e",), "lua": ("-e",),
         "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",), "ruby": ("-e",)}
_EVAL_DEFAULT = ("-c", "-e", "--eval", "-p", "--print")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]{1,23}$")
_SCRIPT = re.compile(r"\.(py|pyw|js|mjs|cjs|ts|rb|pl|php|sh|jl|R|lua)$")


def program(argv: Sequence[str], comm: str | None = None) -> str | None:
    """The program ``argv`` runs, as a person would name it; ``comm`` (the kernel's name) when argv is empty."""
    if not argv:
        return comm or None
    if len(argv) == 1 and " " in argv[0]:  # the process wrote one string over its arguments (setproctitle)
        if not argv[0].startswith("/"):
            return argv[0][:MAX_LENGTH]  # a title ("nginx: worker process", "sshd: root@pts/0"): kept whole
        # a command line (Chromium's helpers: the path, then the flags): its words, not the text after its last /
        argv = _split(argv[0])
    return _named(tuple(argv))[:MAX_LENGTH]


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:  # an unbalanced quote: what the words are is still readable
        return line.split()


def display_name(proc: ProcessSample) -> str:
    """A process row's program (read with it), or the rule applied to its command line, or its name, or its PID."""
    return proc.program or program_of_command(proc.command, proc.name) or f"PID {proc.pid}"


def program_of_command(command: str | None, comm: str | None = None) -> str | None:
    """The same from a shell-quoted (and masked) command line."""
    if not command:
        return comm or None
    return _from_command(command, comm)


@lru_cache(maxsize=2048)
def _from_command(command: str, comm: str | None) -> str | None:
    return program(_split(command), comm)


@lru_cache(maxsize=2048)
def _named(argv: tuple[str, ...]) -> str:
    head = os.path.basename(argv[0]) or argv[0]
    rest = argv[1:]
    if head == "java" or head.startswith("java"):
        return _java(head, rest)
    if _INTERPRETER.match(head):
        return _interpreted(head, rest)
    if head in _LAUNCHERS:
        return _launched(head, rest)
    return _with_subcommand(head, rest)


def _words(rest: Sequence[str], takes: frozenset[str]) -> Iterator[tuple[int, str]]:
    """The words after an interpreter with their places, the value of an option that takes one skipped."""
    i = 0
    while i < len(rest):
        yield i, rest[i]
        i += 2 if rest[i] in takes else 1


def _interpreted(head: str, rest: Sequence[str]) -> str:
    family = "node" if head.startswith("node") else "python" if head.startswith(("python", "pypy")) else \
        "php" if head.startswith("php") else re.sub(r"[\d.]+$", "", head)
    for i, word in _words(rest, _TAKES_VALUE.get(family, frozenset())):
        if word in _EVAL.get(family, _EVAL_DEFAULT):
            return f"{head} {word}"  # inline code
        if word == "-m" and family == "python" and i + 1 < len(rest):
            return _module(head, rest[i + 1], rest[i + 2:])
        if not word.startswith("-"):
            return _script(head, word, rest[i + 1:])
    return head


def _module(head: str, module: str, rest: Sequence[str]) -> str:
    if module in _KERNELS:
        return "jupyter kernel"
    if module in _LAUNCHER_MODULES:
        return _launched(_LAUNCHER_MODULES[module], rest)
    return f"{head} -m {module}"


def _script(head: str, path: str, rest: Sequence[str]) -> str:
    name = os.path.basename(path) or path
    if _SCRIPT.search(name) or "/" not in path:
        return f"{head} {name}"
    # a file from a folder with no extension: a console script (vllm, jupyter-lab, torchrun) is the program
    if name in _LAUNCHERS:
        return _launched(name, rest)
    return _with_subcommand(name, rest)


def _launched(launcher: str, rest: Sequence[str]) -> str:
    """``torchrun … train.py``: the launcher and the script it starts on each worker."""
    words = list(rest)
    if launcher == "accelerate" and words[:1] == ["launch"]:
        launcher, words = "accelerate launch", words[1:]
    for i, word in enumerate(words):
        if word == "-m" and i + 1 < len(words):
            return f"{launcher} … -m {words[i + 1]}"
        if not word.startswith("-") and _SCRIPT.search(word):
            return f"{launcher} … {os.path.basename(word)}"
    return launcher


def _java(head: str, rest: Sequence[str]) -> str:
    for i, word in _words(rest, _TAKES_VALUE["java"]):
        if word == "-jar" and i + 1 < len(rest):
            return f"{head} {os.path.basename(rest[i + 1])}"
        if word in ("-m", "--module") and i + 1 < len(rest):
            return f"{head} {rest[i + 1].rsplit('/', 1)[-1].rsplit('.', 1)[-1]}"
        if word.startswith("-"):
            continue
        if word.endswith(".java"):  # the source-file launcher
            return f"{head} {os.path.basename(word)}"
        return f"{head} {word.rsplit('.', 1)[-1]}"  # a main class: its simple name
    return head


def _with_subcommand(name: str, rest: Sequence[str]) -> str:
    """``vllm serve``, ``ollama runner``: a bare word after the program is its subcommand."""
    if rest and _SUBCOMMAND.match(rest[0]):
        return f"{name} {rest[0]}"
    return name
