"""The name a person knows a process by (app.core.program): the rule on command lines, then on real processes
started with python, node and java launchers, read from /proc as the collector reads them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.attribution.processes import ProcessInspector
from app.core.model import GpuProcessUsage
from app.core.program import MAX_LENGTH, program, program_of_command


@pytest.mark.parametrize(("argv", "expected"), [
    (["/usr/bin/python3", "/home/a/train.py", "--lr", "3"], "python3 train.py"),
    (["/usr/bin/python3", "-u", "-W", "ignore", "/srv/serve.py"], "python3 serve.py"),
    (["/usr/bin/python3", "/usr/local/bin/vllm", "serve", "meta-llama/Llama-3-8B"], "vllm serve"),
    (["vllm", "serve", "m"], "vllm serve"),
    # inline code is never the program's name (it may hold a secret, and says nothing in a sentence)
    (["julia", "-e", "login(\"Zq7secret\")"], "julia -e"), (["Rscript", "-e", "x <- 'Zq7secret'"], "Rscript -e"),
    (["lua5.4", "-e", "pw='Zq7secret'"], "lua5.4 -e"), (["php", "-r", "echo 'Zq7secret';"], "php -r"),
    (["bun", "-e", "fetch('Zq7secret')"], "bun -e"), (["perl", "-E", "say 'Zq7secret'"], "perl -E"),
    (["torchrun", "--nproc_per_node", "8", "train.py", "--epochs", "3"], "torchrun … train.py"),
    (["python", "-m", "torch.distributed.run", "--nproc_per_node=2", "src/train.py"], "torchrun … train.py"),
    (["accelerate", "launch", "--num_processes", "2", "finetune.py"], "accelerate launch … finetune.py"),
    (["deepspeed", "--num_gpus", "4", "-m", "trainer"], "deepspeed … -m trainer"),
    (["python", "-m", "ipykernel_launcher", "-f", "/run/user/1000/jupyter/kernel-1.json"], "jupyter kernel"),
    (["python", "-m", "vllm.entrypoints.openai.api_server"], "python -m vllm.entrypoints.openai.api_server"),
    (["python3", "-c", "import time; time.sleep(9)"], "python3 -c"),
    (["python3", "'unclosed"], "python3 'unclosed"),
    (["java", "-Xmx4g", "-Dx=1", "-jar", "/opt/app/app.jar"], "java app.jar"),
    (["java", "-cp", "a.jar:b.jar", "org.apache.spark.deploy.SparkSubmit", "--master"], "java SparkSubmit"),
    (["node", "/srv/server.js"], "node server.js"),
    (["node", "--require", "ts-node/register", "/srv/app.ts"], "node app.ts"),
    (["/usr/local/bin/ollama", "serve"], "ollama serve"),
    (["sleep", "100"], "sleep"),
    (["nginx: worker process"], "nginx: worker process"),
    (["sshd: root@pts/0"], "sshd: root@pts/0"),  # a title with a / in it: not cut after it
    # Chromium's helpers write their command line over argv as one string (seen as a program named
    # "playwright_chromiumdev_profile-9CxbRa --change-s", the text after the last / of a flag)
    (["/usr/lib/chromium/chromium --type=renderer --user-data-dir=/tmp/playwright_chromiumdev_profile-9CxbRa"
      " --change-stack-guard-on-fork=enable"], "chromium"),
])
def test_the_program_a_person_knows(argv: list[str], expected: str) -> None:
    assert program(argv) == expected


def test_no_command_line_is_the_kernels_name_and_a_long_one_is_bounded() -> None:
    assert program([], "kworker/0:1") == "kworker/0:1" and program([]) is None
    assert program_of_command(None, "python") == "python"
    assert program_of_command("python3 train.py --token '****'") == "python3 train.py"  # masked, still split
    assert len(program(["x" * 200]) or "") == MAX_LENGTH


@contextmanager
def running(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Iterator[int]:
    proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", "the process did not start"
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def read(pid: int) -> str | None:
    """The program of ``pid`` as the collector reads it from /proc (a GPU process row)."""
    inspector = ProcessInspector(top_cpu=0)
    (row,) = inspector.collect([GpuProcessUsage(pid=pid, gpu_index=0, memory_bytes=2**30, sm_percent=50.0)])
    return row.program


SLEEP_PY = "import sys, time\nprint('ready', flush=True)\ntime.sleep(60)\n"


def test_real_python_processes(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(SLEEP_PY)
    for name in ("vllm", "torchrun"):  # console scripts, as pip installs them: a shebang to the interpreter
        script = tmp_path / "bin" / name
        script.parent.mkdir(exist_ok=True)
        script.write_text(f"#!{sys.executable}\n{SLEEP_PY}")
        script.chmod(0o755)
    (tmp_path / "ipykernel_launcher.py").write_text(SLEEP_PY)  # what `jupyter` starts for a notebook's kernel
    with running([sys.executable, "-u", str(tmp_path / "train.py"), "--lr", "3"], tmp_path) as pid:
        assert read(pid) == f"{Path(sys.executable).name} train.py"
    with running([str(tmp_path / "bin" / "vllm"), "serve", "facebook/opt-125m"], tmp_path) as pid:
        assert read(pid) == "vllm serve"
    with running([str(tmp_path / "bin" / "torchrun"), "--nproc_per_node", "2", "train.py"], tmp_path) as pid:
        assert read(pid) == "torchrun … train.py"
    with running([sys.executable, "-m", "ipykernel_launcher", "-f", str(tmp_path / "kernel-1.json")], tmp_path,
                 {"PYTHONPATH": str(tmp_path)}) as pid:
        assert read(pid) == "jupyter kernel"


@pytest.mark.skipif(shutil.which("node") is None, reason="node (Debian package nodejs) not installed")
def test_a_real_node_process(tmp_path: Path) -> None:
    (tmp_path / "server.js").write_text("console.log('ready'); setTimeout(() => {}, 60000);\n")
    with running(["node", "--max-old-space-size=64", str(tmp_path / "server.js")], tmp_path) as pid:
        assert read(pid) == "node server.js"


@pytest.mark.skipif(shutil.which("java") is None, reason="java (Debian package default-jre-headless) not installed")
def test_a_real_java_process(tmp_path: Path) -> None:
    (tmp_path / "Sleep.java").write_text("public class Sleep { public static void main(String[] a) throws Exception "
                                         "{ System.out.println(\"ready\"); Thread.sleep(60000); } }\n")
    started = time.monotonic()
    with running(["java", "-Xmx32m", "-Dfanwhy.test=1", str(tmp_path / "Sleep.java")], tmp_path) as pid:
        assert read(pid) == "java Sleep.java"
    assert time.monotonic() - started < 60
