"""What a paste shows runs on its GPUs (app.cli.replay_work): nvidia-smi's Processes table said beside the fan
answer, each GPU's processes with its load, or memory in use with none listed (nvidia-smi lists only the processes of
its own PID namespace: in a container, none of the host's; nvidia-docker's FAQ). The table's rows as nvidia-smi prints
them with and without its GI/CI columns, a Windows row's N/A memory included."""

from __future__ import annotations

from pathlib import Path

from app.cli.replay_work import NO_PROCESSES
from app.collect.nvidia_captures import SmiProcess, processes
from tests.support.explained import explained
from tests.unit.test_gpu_tool_pastes import AMD_SMI

TABLE = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0  On |                  N/A |
| 30%   35C    P8             21W /  350W |     {used0}MiB /  24576MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GeForce RTX 3090        Off |   00000000:02:00.0 Off |                  N/A |
| 87%   83C    P2            340W /  350W |   20112MiB /  24576MiB |    100%      Default |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
{rows}+-----------------------------------------------------------------------------------------+
"""
ROW = "|    {gpu}   N/A  N/A     {pid}      {kind}   {name:<40}  {mem:>8} |\n"
NONE = "|  No running processes found                                                             |\n"


def test_the_processes_on_a_busy_gpu_are_named_with_its_load(tmp_path: Path) -> None:
    """The largest by memory first, three at most and how many more; a GPU with none listed and little memory in use
    (a display's) is not spoken of; the rows are in the JSON as nvidia-smi gave them."""
    rows = "".join(ROW.format(gpu=g, pid=p, kind=k, name=n, mem=m) for g, p, k, n, m in (
        (1, 12345, "C", "python", "20100MiB"), (1, 2222, "C", "/usr/bin/ffmpeg", "300MiB"),
        (1, 3333, "G", "/usr/lib/xorg/Xorg", "4MiB"), (1, 4444, "C+G", "steam", "900MiB")))
    answer = explained(tmp_path, TABLE.format(used0="512", rows=rows))
    assert answer["processes"] == ("On GPU 1 (100 % busy, 340 W of 350 W), nvidia-smi lists `python` (PID 12345, "
                                   "compute, 20,100 MiB), `steam` (PID 4444, compute and graphics, 900 MiB), "
                                   "`/usr/bin/ffmpeg` (PID 2222, compute, 300 MiB) and 1 more.")
    assert answer["gpu_processes"][0] == {"gpu": 1, "pid": 12345, "kind": "C", "name": "python",
                                          "memory_mib": 20100.0}


def test_memory_in_use_with_no_process_listed_is_said_as_unseen(tmp_path: Path) -> None:
    """"No running processes found" beside 20 GiB in use: the processes are not in nvidia-smi's PID namespace (a
    container's nvidia-smi lists none of the host's); with only a display's 512 MiB, nothing is unseen."""
    hidden = explained(tmp_path, TABLE.format(used0="512", rows=NONE))
    assert hidden["processes"].startswith("GPU 1 (100 % busy, 340 W of 350 W) has 20,112 MiB in use and no process "
                                          "listed: nvidia-smi lists only the processes of its own PID namespace")
    assert "GPU 0" not in hidden["processes"] and hidden["gpu_processes"] == []
    idle = TABLE.format(used0="512", rows=NONE).replace("20112MiB", "  300MiB")
    assert explained(tmp_path, idle)["processes"] == "nvidia-smi lists no process on the GPUs it shows."


def test_nvidia_smis_older_rows_and_windows_rows_are_read() -> None:
    """Before MIG the table had no GI/CI columns; under Windows' WDDM a row's memory is N/A."""
    older = ("NVIDIA-SMI 470.82\n| Processes:                                                                  |\n"
             "|    0      1234      G   /usr/lib/xorg/Xorg                          150MiB |\n"
             "|    0     54321      C   /opt/conda/bin/python3.9                  10943MiB |\n"
             "|    0   N/A  N/A      7788    C+G   C:\\Windows\\explorer.exe       N/A      |\n")
    assert processes(older) == (SmiProcess(0, 1234, "G", "/usr/lib/xorg/Xorg", 150.0),
                                SmiProcess(0, 54321, "C", "/opt/conda/bin/python3.9", 10943.0),
                                SmiProcess(0, 7788, "C+G", "C:\\Windows\\explorer.exe", None))
    assert processes("| Processes: |\n|    0      1234      G   Xorg   150MiB |\n") is None  # not nvidia-smi's


ROCM = ("============================ ROCm System Management Interface ============================\n"
        "====================================== Concise Info ======================================\n"
        "GPU  Temp (DieEdge)  AvgPwr  SCLK     MCLK     Fan     Perf  PwrCap  VRAM%  GPU%\n"
        "0    78.0c           285.0W  2500Mhz  1249Mhz  86.27%  auto  303.0W   91%   {busy}%\n"
        "==========================================================================================\n")


def test_without_a_processes_table_each_gpus_load_is_said_as_the_paste_shows_it(tmp_path: Path) -> None:
    """No Processes table, but the paste shows how busy each GPU was and what it drew (nvidia-smi's GPU-Util and
    Pwr:Usage/Cap: the share of its last sample period a kernel ran, nvidia-smi(1)): that load is said, with the
    processes behind it not in the paste; a paste with no GPU load in it keeps the line that processes are not read."""
    no_table = TABLE.format(used0="512", rows="").split("\n\n")[0] + "\n"
    assert explained(tmp_path, no_table)["processes"] == (
        "When this was taken: GPU 0 (0 % busy, 21 W of 350 W) and GPU 1 (100 % busy, 340 W of 350 W). The processes "
        "behind a GPU's load are not in this paste.")
    csv = ("index, name, temperature.gpu, power.draw [W], power.limit [W], utilization.gpu [%], fan.speed [%]\n" +
           "".join(f"{i}, NVIDIA GeForce RTX 3090, 78, 3{i}0.00 W, 350.00 W, 9{i} %, 86 %\n" for i in range(5)))
    assert explained(tmp_path, csv)["processes"] == (
        "When this was taken: GPU 0 (90 % busy, 300 W of 350 W), GPU 1 (91 % busy, 310 W of 350 W), GPU 2 (92 % busy, "
        "320 W of 350 W) and 2 more. The processes behind a GPU's load are not in this paste.")
    sensors = "coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +45.0°C\n\nnct6798-isa-0290\nfan2: 900 RPM\n"
    assert explained(tmp_path, sensors)["processes"] == NO_PROCESSES


def test_an_amd_cards_share_busy_and_power_are_its_load(tmp_path: Path) -> None:
    """rocm-smi's GPU% and amd-smi's GFX-Uti are amdgpu's gpu_busy_percent (Documentation/gpu/amdgpu: how busy the
    GPU is, as a percentage), its power column what it draws and PwrCap its limit; rocm-smi -a says the same as
    "GPU use (%)". A busy card's load is said, an idle card's too: 0 % is a reading, not none."""
    assert explained(tmp_path, ROCM.format(busy=100))["gpu_loads"] == [
        {"index": 0, "vendor": "amd", "busy_percent": 100.0, "power_w": 285.0, "power_limit_w": 303.0}]
    assert explained(tmp_path, ROCM.format(busy=100))["processes"] == (
        "When this was taken: GPU 0 (100 % busy, 285 W of 303 W). The processes behind a GPU's load are not in this "
        "paste.")
    assert explained(tmp_path, ROCM.format(busy=0))["processes"].startswith("When this was taken: GPU 0 (0 % busy, ")
    detail = ("GPU[0]\t\t: Temperature (Sensor edge) (C): 69.0\nGPU[0]\t\t: Fan Level: 124 (48.63)%\n"
              "GPU[0]\t\t: Average Graphics Package Power (W): 212.0\nGPU[0]\t\t: GPU use (%): 97\n")
    assert explained(tmp_path, detail)["processes"].startswith("When this was taken: GPU 0 (97 % busy, 212 W).")
    amd_smi = AMD_SMI.format(fan="38.0 %")
    assert explained(tmp_path, amd_smi)["processes"].startswith("When this was taken: GPU 0 (99 % busy, 310 W).")


def test_gpustat_and_dcgm_exporter_give_the_load_they_print(tmp_path: Path) -> None:
    """gpustat's utilization and ``-P``'s "340 / 350 W" (gpustat/core.py: power.draw / enforced.power.limit), and
    dcgm-exporter's DCGM_FI_DEV_GPU_UTIL and _POWER_USAGE (dcgm_fields.h: GPU utilization in %, power usage in W)."""
    gpustat = "[0] NVIDIA GeForce RTX 3090 | 84'C,  55 %, 100 %,  340 / 350 W | 22000 / 24576 MB |\n"
    assert explained(tmp_path, gpustat)["processes"].startswith("When this was taken: GPU 0 (100 % busy, 340 W of "
                                                                 "350 W).")
    scrape = "".join(f'DCGM_FI_DEV_{metric}{{gpu="{i}",modelName="NVIDIA A100-SXM4-80GB"}} {value}\n'
                     for metric, values in (("GPU_TEMP", (61, 86)), ("POWER_USAGE", (312.5, 298.1)),
                                            ("GPU_UTIL", (99, 0))) for i, value in enumerate(values))
    assert explained(tmp_path, scrape)["processes"].startswith("When this was taken: GPU 0 (99 % busy, 312 W) and "
                                                                "GPU 1 (0 % busy, 298 W).")
