"""GPU tools' own lines, read as their sources print them: nvitop's copy of nvidia-smi's table (box-drawing bars),
gpustat (gpustat/core.py, GPUStat.print_to: the temperature, the fan's share only with -F, the utilization, the power
with -P; ``??`` for a value NVML did not give)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.fans import read
from app.fans.adapt import machine
from app.fans.facts import FanFact
from app.fans.speeds import held_at_floor
from tests.unit.test_fan_readers import explain, findings_of

GPUSTAT = ("server1  Sat Dec  5 12:00:00 2026  535.104.05\n"
           "[0] NVIDIA GeForce RTX 3090 | {t0}°C,  {fan} %, 100 %,  340 / 350 W | 22000 / 24576 MB | alice(21990M)\n"
           "[1] NVIDIA GeForce RTX 3090 | 45'C,  ?? %,   0 %,   21 / 350 W |     3 / 24576 MB |\n")


def test_gpustat_with_its_fan_column(tmp_path: Path) -> None:
    """-F's first share is the fan, the second the utilization; a card whose fan is at 0 % at 86 °C is not
    cooled, never at rest; ?? is no reading (NVML gave nothing, for whatever reason), neither 0 % nor "no fan"."""
    facts = machine(read.read(GPUSTAT.format(t0=86, fan=0))[0])
    assert [(g.index, g.temperature_c) for g in facts.gpus] == [(0, 86.0), (1, 45.0)]
    assert [(g.index, g.vendor, g.power_w, g.busy_percent) for g in facts.loads] == [
        (0, "nvidia", 340.0, 100.0), (1, "nvidia", 21.0, 0.0)]
    assert [(f.gpu, f.duty_percent) for f in facts.fans] == [(0, 0.0)]
    assert facts.gpus[1].fan_reported  # ?? is any failed NVML call: not "no fan of its own"
    code, answer = explain(GPUSTAT.format(t0=86, fan=0), tmp_path)
    assert code == 0 and findings_of(answer)[0]["kind"] == "hot-not-cooled"
    assert "at-rest" not in [f["kind"] for f in findings_of(answer)]


def test_gpustat_without_its_fan_column_reads_no_fan() -> None:
    """Without -F the one share is the utilization: no fan is read (not 100 % of a fan)."""
    text = "[0] NVIDIA GeForce RTX 3090 | 84'C, 100 % | 22000 / 24576 MB | alice(21990M)\n"
    facts = machine(read.read(text)[0])
    assert facts.fans == () and [g.temperature_c for g in facts.gpus] == [84.0]
    assert [g.busy_percent for g in facts.loads] == [100.0]


NVITOP = ("$ nvitop -1\n"
          "│ NVITOP 1.3.2       Driver Version: 535.104.05      CUDA Driver Version: 12.2 │\n"
          "│ GPU  Name        Persistence-M│ Bus-Id        Disp.A │ Volatile Uncorr. ECC │\n"
          "│   0  GeForce RTX 3090    Off  │ 00000000:01:00.0 Off │                  N/A │\n"
          "│  0%   86C    P2   340W / 350W │  22000MiB / 24576MiB │    100%      Default │\n")


def test_nvitops_table_is_read_as_nvidia_smis(tmp_path: Path) -> None:
    """nvitop draws nvidia-smi's table with box-drawing bars (│): the card at 86 °C with its fan at 0 % is not
    cooled (the paste was refused)."""
    code, answer = explain(NVITOP, tmp_path)
    assert code == 0 and findings_of(answer)[0]["kind"] == "hot-not-cooled"
    assert "nvitop" in str(answer["read_as"])


P40 = ("index, name, fan.speed [%], temperature.gpu, power.draw [W], utilization.gpu [%]\n"
       "0, Tesla P40, [N/A], {t}, 248.51 W, 100 %\n")


def test_a_hot_card_with_no_fan_of_its_own_is_said_hot(tmp_path: Path) -> None:
    """A passively cooled card ([N/A]: nvidia-smi(1), no fan reported) at 92 °C: what cools it is the airflow around
    it, and its heat is said with that (it was said only as "the hottest reading"); at 60 °C nothing more is said."""
    _, answer = explain(P40.format(t=92), tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "gpu-fan-unreported"]
    assert found and found[0]["facts"]["celsius"] == 92.0 and "92 °C, so the airflow" in str(answer["sentence"])
    _, answer = explain(P40.format(t=60), tmp_path)
    found = [f for f in findings_of(answer) if f["kind"] == "gpu-fan-unreported"]
    assert found and "celsius" not in found[0]["facts"]


def test_a_laptop_gpu_is_said_as_one(tmp_path: Path) -> None:
    """NVIDIA names its mobile parts "... Laptop GPU" (earlier "with Max-Q Design"): such a card's fan.speed is [N/A]
    (nvidia-smi(1)) because the laptop's embedded controller drives the fans that cool it; the answer says so, not
    "passively cooled by the chassis fans, or a laptop GPU", and at 93 °C points at the laptop's fans."""
    from app.fans.gpulines import gpu_line

    assert [gpu_line(n) for n in ("NVIDIA GeForce RTX 3060 Laptop GPU", "GeForce GTX 1070 with Max-Q Design",
                                  "NVIDIA RTX A2000 Laptop GPU", "NVIDIA GeForce RTX 3060", "Tesla P40")] == \
        ["laptop", "laptop", "laptop", "consumer", "datacenter"]
    csv = "name, fan.speed [%], temperature.gpu\nNVIDIA GeForce RTX 3060 Laptop GPU, [N/A], {t}\n"
    _, answer = explain(csv.format(t=93), tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "gpu-fan-unreported"]
    assert found["facts"]["line"] == "laptop" and found["facts"]["celsius"] == 93.0
    assert "a laptop's GPU has no fan the card drives" in str(answer["sentence"])
    assert "chassis" not in str(answer["sentence"])


SERVER = ("$ ipmitool sdr\nCPU1 Temp        | {cpu} degrees C      | ok\nSystem Temp      | 27 degrees C      | ok\n"
          "FAN1             | 9800 RPM          | ok\nFAN2             | 9700 RPM          | ok\n"
          "$ nvidia-smi --query-gpu=index,name,fan.speed,temperature.gpu,power.draw,utilization.gpu --format=csv\n"
          "index, name, fan.speed [%], temperature.gpu, power.draw [W], utilization.gpu [%]\n"
          "0, NVIDIA A100-PCIE-40GB, {fan}, {gpu}, 249.51 W, 100 %\n")


def test_passive_cards_are_what_a_cool_servers_fans_run_for(tmp_path: Path) -> None:
    """A100s with no fan of their own at 84 °C beside a BMC whose own readings are cool (41 °C): the chassis fans
    are the cards' only cooling and most likely run for them (likely), leading. Not where the BMC's own reading is
    warm (65 °C: it has its own reason), nor where the card is cool or has a fan of its own."""
    code, answer = explain(SERVER.format(cpu=41, fan="[N/A]", gpu=84), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("passive-cards", "likely")
    assert lead["subjects"] == ["nvidia/gpu0", "bmc/FAN1", "bmc/FAN2", "bmc/CPU1 Temp"]
    assert (lead["facts"]["gpu_c"], lead["facts"]["bmc_c"]) == (84.0, 41.0)
    with_bmc_gpu = SERVER.format(cpu=41, fan="[N/A]", gpu=84).replace(
        "FAN1 ", "GPU1 Temp        | 84 degrees C      | ok\nFAN1 ", 1)  # a GPU's heat the BMC reads is not its own
    _, answer = explain(with_bmc_gpu, tmp_path)
    assert findings_of(answer)[0]["kind"] == "passive-cards"
    for cpu, fan, gpu in ((65, "[N/A]", 84), (41, "[N/A]", 45), (41, "30 %", 84)):
        _, answer = explain(SERVER.format(cpu=cpu, fan=fan, gpu=gpu), tmp_path)
        assert "passive-cards" not in [f["kind"] for f in findings_of(answer)], (cpu, fan, gpu)


def test_golden_sentence_of_passive_cards(tmp_path: Path) -> None:
    _, answer = explain(SERVER.format(cpu=41, fan="[N/A]", gpu=84), tmp_path)
    assert str(answer["sentence"]).startswith(
        "The BMC's fans (FAN1 (BMC) and FAN2 (BMC), about 9,800 RPM) are the only cooling of GPU 0 (NVIDIA "
        "A100-PCIE-40GB) (a card with no fan of its own, at 84 °C): the card's heat is most likely what the fans run "
        "for, since the BMC's own readings are cool (the hottest, CPU1 Temp (BMC), at 41 °C).")


QUERY = ("==============NVSMI LOG==============\n\nAttached GPUs                             : 1\n"
         "GPU 00000000:01:00.0\n    Product Name                          : NVIDIA GeForce RTX 3090\n"
         "    Fan Speed                             : {fan}\n    {section}\n"
         "        Idle                              : Not Active\n"
         "        SW Power Cap                      : Not Active\n"
         "        HW Slowdown                       : {hw}\n"
         "        SW Thermal Slowdown               : {sw}\n"
         "    Temperature\n        GPU Current Temp                  : 93 C\n"
         "        GPU Slowdown Temp                 : 95 C\n")


def query(fan: str = "100 %", hw: str = "Not Active", sw: str = "Active",
          section: str = "Clocks Event Reasons") -> str:
    return QUERY.format(fan=fan, hw=hw, sw=sw, section=section)


def test_a_gpu_slowing_for_heat_is_why_its_fan_is_at_full(tmp_path: Path) -> None:
    """nvidia-smi -q's Clocks Event Reasons (Clocks Throttle Reasons before driver 535; nvidia-smi(1)): SW Thermal
    Slowdown active at 93 °C with the fan at 100 % leads, known, with the slowdown temperature; with the fan at 45 %
    the fan is held low; with no reason active it is not found. The section was not read."""
    for section in ("Clocks Event Reasons", "Clocks Throttle Reasons"):
        code, answer = explain(query(section=section), tmp_path)
        lead = findings_of(answer)[0]
        assert code == 0 and (lead["kind"], lead["confidence"]) == ("slowing-for-heat", "known"), section
        assert (lead["facts"]["reasons"], lead["facts"]["slowdown_c"], lead["facts"]["duty"]) == (
            "sw_thermal_slowdown", 95.0, 100.0)
        assert "is at its limit" in str(answer["sentence"])
    _, answer = explain(query(fan="45 %"), tmp_path)
    assert "while its fan is at only 45 %" in str(answer["sentence"])
    _, answer = explain(query(sw="Not Active"), tmp_path)
    assert "slowing-for-heat" not in [f["kind"] for f in findings_of(answer)]
    _, answer = explain(query(hw="Active", sw="Not Active"), tmp_path)
    assert findings_of(answer)[0]["facts"]["reasons"] == "hw_slowdown"
    assert findings_of(answer)[0]["confidence"] == "likely"  # HW Slowdown alone may be the power brake


def test_a_live_gpus_heat_slowdown_reaches_the_fan_facts() -> None:
    """The live sample's NVML reasons: only the heat ones (a power cap is the load's, not the cooling's)."""
    from app.fans.adapt import gpu_fact
    from tests.support.builders import gpu
    fact = gpu_fact(replace(gpu(0), throttle_reasons=("sw_power_cap", "hw_thermal_slowdown"),
                            temperature_slowdown_c=87.0))
    assert (fact.heat_slowdown, fact.slowdown_c) == (("hw_thermal_slowdown",), 87.0)


def test_the_xml_report_of_a_gpu_slowing_for_heat(tmp_path: Path) -> None:
    """nvidia-smi -q -x's <clocks_event_reasons> (<clocks_throttle_reasons> before driver 535)."""
    for group in ("event", "throttle"):
        text = (f"<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><product_name>NVIDIA GeForce RTX 3090</product_name>"
                f"<fan_speed>100 %</fan_speed><clocks_{group}_reasons>"
                f"<clocks_{group}_reason_gpu_idle>Not Active</clocks_{group}_reason_gpu_idle>"
                f"<clocks_{group}_reason_hw_thermal_slowdown>Active</clocks_{group}_reason_hw_thermal_slowdown>"
                f"</clocks_{group}_reasons><temperature><gpu_temp>93 C</gpu_temp>"
                f"<gpu_temp_slow_threshold>95 C</gpu_temp_slow_threshold></temperature></gpu></nvidia_smi_log>")
        _, answer = explain(text, tmp_path)
        lead = findings_of(answer)[0]
        assert (lead["kind"], lead["facts"]["reasons"], lead["facts"]["slowdown_c"]) == (
            "slowing-for-heat", "hw_thermal_slowdown", 95.0), group


MAX_OPERATING = ("==============NVSMI LOG==============\n\nAttached GPUs                             : 1\n"
                 "GPU 00000000:2D:00.0\n    Temperature\n        GPU Current Temp                  : {temp} C\n"
                 "        GPU Shutdown Temp                 : 102 C\n        GPU Slowdown Temp                 : 97 C\n"
                 "        GPU Max Operating Temp            : 57 C\n        GPU Target Temperature            : N/A\n"
                 "{reasons}")


def test_a_card_at_its_max_operating_temp_is_held_there_by_its_clocks(tmp_path: Path) -> None:
    """NVML: the GPU's Max Operating Temp (NVML_TEMPERATURE_THRESHOLD_GPU_MAX) is where it "can be throttled below base
    clock", and SW Thermal Slowdown reduces the clocks "because the GPU temperature is higher than Max Operating
    Temp". A card within 2 °C of it, in an nvidia-smi -q that lists no clock event reasons, is most likely held there
    (likely), with the limit and its distance to the slowdown temperature said; a card well under it is not; nor is
    one whose reasons are listed and not active (read, they say it is not slowed). Said only "the hottest reading"
    before (a laptop's MX330 held at 56 °C by a 57 °C limit)."""
    code, answer = explain(MAX_OPERATING.format(temp=56, reasons=""), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"], lead["subjects"]) == (
        "slowing-for-heat", "likely", ["nvidia/gpu0"])
    assert (lead["facts"]["max_operating_c"], lead["facts"]["celsius"], lead["facts"]["slowdown_c"]) == (
        57.0, 56.0, 97.0)
    assert answer["sentence"] == (
        "GPU 0 (NVIDIA GPU) is at 56 °C, at its Max Operating Temp of 57 °C (40 °C under its slowdown temperature, "
        "97 °C), where NVIDIA's driver lowers its clocks to keep it under (a software thermal slowdown): most likely "
        "it runs as hot as that limit lets it; its clocks are what hold it there (its fan is not read here).")
    _, answer = explain(MAX_OPERATING.format(temp=45, reasons=""), tmp_path)
    assert "slowing-for-heat" not in [f["kind"] for f in findings_of(answer)]
    listed = "    Clocks Event Reasons\n        SW Thermal Slowdown               : Not Active\n"
    _, answer = explain(MAX_OPERATING.format(temp=56, reasons=listed), tmp_path)
    assert "slowing-for-heat" not in [f["kind"] for f in findings_of(answer)]
    # -q -x's <gpu_temp_max_gpu_threshold> is the same limit
    xml = ("<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><product_name>NVIDIA GeForce RTX 3090</product_name>"
           "<temperature><gpu_temp>83 C</gpu_temp><gpu_temp_slow_threshold>92 C</gpu_temp_slow_threshold>"
           "<gpu_temp_max_gpu_threshold>83 C</gpu_temp_max_gpu_threshold></temperature></gpu></nvidia_smi_log>")
    _, answer = explain(xml, tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["max_operating_c"]) == ("slowing-for-heat", 83.0)
    # a card -q -x names by its minor number is that card, its limit with it
    _, answer = explain(xml.replace("<product_name>", "<minor_number>3</minor_number><product_name>"), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["subjects"]) == ("slowing-for-heat", ["nvidia/gpu3"])


def test_the_query_csvs_clock_event_reasons(tmp_path: Path) -> None:
    """--query-gpu's clocks_event_reasons.active (clocks_throttle_reasons.active before driver 535) is NVML's mask in
    hex (nvml.h: 0x20 SW Thermal Slowdown, 0x40 HW Thermal Slowdown, 0x4 SW Power Cap); each reason asked by name
    is "Active" or "Not Active" (nvidia-smi --help-query-gpu). A passive card slowing for heat is said so; a power cap
    alone is the load's, not the cooling's. Both were not read."""
    head = "name, temperature.gpu [C], fan.speed [%], power.draw [W], {field}\n"
    for field in ("clocks_throttle_reasons.active", "clocks_event_reasons.active"):
        _, answer = explain(head.format(field=field) + "Tesla P40, 88, [N/A], 180.52 W, 0x0000000000000020\n",
                            tmp_path)
        lead = findings_of(answer)[0]
        assert (lead["kind"], lead["facts"]["reasons"], lead["facts"].get("passive")) == (
            "slowing-for-heat", "sw_thermal_slowdown", "yes"), field
        _, answer = explain(head.format(field=field) + "Tesla P40, 88, [N/A], 250.00 W, 0x0000000000000004\n",
                            tmp_path)
        assert "slowing-for-heat" not in [f["kind"] for f in findings_of(answer)]
    named = ("index, name, temperature.gpu, fan.speed, clocks_throttle_reasons.hw_thermal_slowdown, "
             "clocks_throttle_reasons.sw_thermal_slowdown\n0, NVIDIA GeForce RTX 3090, 91, 100 %, {hw}, {sw}\n")
    _, answer = explain(named.format(hw="Active", sw="Not Active"), tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["reasons"], lead["facts"]["full"]) == (
        "slowing-for-heat", "hw_thermal_slowdown", "yes")
    _, answer = explain(named.format(hw="Not Active", sw="Not Active"), tmp_path)
    assert "slowing-for-heat" not in [f["kind"] for f in findings_of(answer)]


def test_a_cards_fan_its_tool_gives_no_value_for_is_not_only_a_fan_to_check(tmp_path: Path) -> None:
    """amd-smi metric's FAN block reads N/A on a card with no fan of its own (a data-center card) as it does where
    the driver fails: beside a hot hotspot, what to check is what cools the card, not only "that it spins"; a
    board's fan that reads N/A stays a fan to check."""
    card = ("GPU: 1\n    FAN:\n        SPEED: N/A\n        MAX: N/A\n        RPM: N/A\n        USAGE: N/A\n"
            "    TEMPERATURE:\n        EDGE: N/A\n        HOTSPOT: 88 °C\n        MEM: 79 °C\n")
    _, answer = explain(card, tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["kind"], lead["facts"]["card"], lead["facts"]["hot"]) == ("speed-not-a-reading", "yes", "yes")
    assert "check what cools it" in str(answer["sentence"]) and "check that it spins" not in str(answer["sentence"])
    board = "nct6798-isa-0290\nAdapter: ISA adapter\nfan2:          N/A\nCPUTIN:        +88.0°C\n"
    _, answer = explain(board, tmp_path)
    lead = findings_of(answer)[0]
    assert lead["kind"] == "speed-not-a-reading" and "card" not in lead["facts"]
    assert "check that it spins" in str(answer["sentence"])


def test_an_nvidia_smi_table_pasted_twice_is_each_card_once(tmp_path: Path) -> None:
    """A post with nvidia-smi's table twice (before and after, or one shown twice): the corpus' three-card table
    (nvidia-06) pasted twice is three cards, each as its last table shows it; it was six fans, each card's fan
    named twice in every finding."""
    from tests.support.corpus import every_block

    capture = next(b.capture for b in every_block() if b.key == "nvidia-06")
    _, once = explain(capture, tmp_path)
    _, twice = explain(capture + "\n" + capture, tmp_path)
    fans_once, fans_twice = once["fans"], twice["fans"]
    assert isinstance(fans_once, list) and isinstance(fans_twice, list)
    assert [f["id"] for f in fans_twice] == [f["id"] for f in fans_once] and len(fans_once) == 3
    assert [(f["kind"], f["subjects"]) for f in findings_of(twice)] == [(f["kind"], f["subjects"])
                                                                        for f in findings_of(once)]


AMD_SMI = ("+------------------------------------------------------------------------------+\n"
           "| AMD-SMI 26.1.0+e94df3ed      amdgpu version: Linuxver ROCm version: 6.4.1    |\n"
           "|-------------------------------------+----------------------------------------|\n"
           "| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |\n"
           "| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |\n"
           "|=====================================+========================================|\n"
           "| 0000:03:00.0  AMD Radeon RX 7900 XTX | N/A      71 °C   0               310 W |\n"
           "|   0       0     N/A             N/A | 99 %      {fan}         20480/24576 MB |\n"
           "+-------------------------------------+----------------------------------------+\n")


def test_amd_smis_default_table_is_each_cards_temperature_power_and_fan(tmp_path: Path) -> None:
    """amd-smi with no subcommand prints a box of two rows per GPU: its temperature and power under "Mem-Uti Temp UEC
    Power-Usage", its fan's share under "GFX-Uti Fan Mem-Usage" (N/A where the card reports none). The fan is the
    card's at that duty, its temperature the card's; N/A is no reading, never a fan at rest (the table was refused
    as no reading)."""
    code, answer = explain(AMD_SMI.format(fan="38.0 %"), tmp_path)
    turning = [f for f in findings_of(answer) if f["kind"] == "turning"]
    assert code == 0 and turning[0]["subjects"] == ["amdgpu/GPU 0 fan"]
    assert (turning[0]["facts"]["duty"], turning[0]["facts"]["source_c"]) == (38.0, 71.0)  # not GFX-Uti's 99 %
    code, answer = explain(AMD_SMI.format(fan="N/A   "), tmp_path)
    kinds = {f["kind"]: f["subjects"] for f in findings_of(answer)}
    assert code == 0 and kinds["speed-not-a-reading"] == ["amdgpu/GPU 0 fan"] and "at-rest" not in kinds


def _dcgm(metric: str, values: tuple[float, ...], model: str) -> str:
    """dcgm-exporter's exposition of one field for each GPU, its labels as the exporter writes them."""
    return "".join(f'{metric}{{gpu="{i}",UUID="GPU-{i:08d}-0000-0000-0000-000000000000",device="nvidia{i}",'
                   f'modelName="{model}",Hostname="node-1"}} {v}\n' for i, v in enumerate(values))


def test_dcgm_exporters_gpus_are_read_as_their_cards(tmp_path: Path) -> None:
    """dcgm-exporter's scrape (DCGM's fields: DCGM_FI_DEV_GPU_TEMP in °C, _FAN_SPEED in % of its maximum,
    _POWER_USAGE in W, the clock event reasons as NVML's mask) is each GPU's own readings, named by its modelName.
    Its default counters export no fan: a data-center card (A100 SXM, by its product line passive) is said as one with
    no fan of its own, the hottest named once for the cards alike; a card with a fan keeps its fan; a thermal
    slowdown bit in the reasons is the card slowing for heat. The scrape was refused."""
    a100 = "NVIDIA A100-SXM4-80GB"
    scrape = "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n" + _dcgm("DCGM_FI_DEV_GPU_TEMP", (61, 86), a100) + \
        _dcgm("DCGM_FI_DEV_POWER_USAGE", (312.5, 298.1), a100)
    code, answer = explain(scrape, tmp_path)
    (found,) = [f for f in findings_of(answer) if f["kind"] == "gpu-fan-unreported"]
    assert code == 0 and found["subjects"] == ["nvidia/gpu0", "nvidia/gpu1"]
    assert (found["facts"]["reads"], found["facts"]["line"], found["facts"]["celsius"], found["facts"]["hottest"]) == \
        ("none", "datacenter", 86.0, "nvidia/gpu1")
    assert str(answer["sentence"]).startswith("Each of GPU 0 (NVIDIA A100-SXM4-80GB) and GPU 1 (NVIDIA "
                                              "A100-SXM4-80GB) is a data-center card")
    geforce = _dcgm("DCGM_FI_DEV_GPU_TEMP", (70,), "NVIDIA GeForce RTX 4090") + \
        _dcgm("DCGM_FI_DEV_FAN_SPEED", (64,), "NVIDIA GeForce RTX 4090") + \
        _dcgm("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", (32,), "NVIDIA GeForce RTX 4090")  # 0x20: SW thermal slowdown
    facts = machine(read.read(geforce)[0])
    (gpu,) = facts.gpus
    assert (gpu.name, gpu.temperature_c, gpu.fan_percent, gpu.heat_slowdown) == \
        ("NVIDIA GeForce RTX 4090", 70.0, 64.0, ("sw_thermal_slowdown",))
    code, answer = explain(geforce, tmp_path)
    assert "gpu-fan-unreported" not in {f["kind"] for f in findings_of(answer)}


def test_cards_alike_are_said_once_with_the_hottest(tmp_path: Path) -> None:
    """An 8-GPU server's nvidia-smi (self-built, in --query-gpu's CSV form): eight cards slowing for heat with their
    fans at full, or eight data-center cards with no fan, are one finding each, every card among its subjects and the
    hottest named; the answer said the same sentence once per card (three of them, then cut). Cards unalike (one
    with its fan low) stay apart."""
    head = ("index, name, fan.speed [%], temperature.gpu, power.draw [W], utilization.gpu [%], "
            "clocks_event_reasons.active\n")
    rows = "".join(f"{i}, NVIDIA GeForce RTX 4090, {fan}, {85 + i % 3}, 440.00 W, 100 %, 0x0000000000000020\n"
                   for i, fan in enumerate(["100 %"] * 7 + ["40 %"]))
    code, answer = explain(head + rows, tmp_path)
    slowing = [f for f in findings_of(answer) if f["kind"] == "slowing-for-heat"]
    assert code == 0 and sorted(f["facts"].get("cards", 1.0) for f in slowing) == [1.0, 7.0]
    seven = next(f for f in slowing if f["facts"].get("cards") == 7.0)
    assert {k for k in seven["subjects"] if k[-1].isdigit()} == {f"nvidia/gpu{i}" for i in range(7)}
    assert (seven["subjects"][0], seven["facts"]["celsius"], seven["confidence"]) == ("nvidia/gpu2", 87.0, "known")
    assert str(answer["sentence"]).count("reports its clocks slowed for heat") == 2
    lower = head + "".join(f"{i}, NVIDIA GeForce RTX 4090, {fan}, 86, 440.00 W, 100 %, 0x0000000000000020\n"
                           for i, fan in enumerate(["40 %", "60 %"]))  # below full, each said with its own duty
    code, answer = explain(lower, tmp_path)
    slowing = [f for f in findings_of(answer) if f["kind"] == "slowing-for-heat"]
    assert sorted(f["facts"]["duty"] for f in slowing) == [40.0, 60.0]
    assert all("cards" not in f["facts"] for f in slowing)
    passive = "index, name, fan.speed [%], temperature.gpu\n" + "".join(
        f"{i}, NVIDIA H100 80GB HBM3, [N/A], {40 + 5 * i}\n" for i in range(8))
    code, answer = explain(passive, tmp_path)
    (unreported,) = [f for f in findings_of(answer) if f["kind"] == "gpu-fan-unreported"]
    assert len(unreported["subjects"]) == 8 and unreported["facts"]["gpus"] == 8.0
    assert str(answer["sentence"]).count("no fan of its own") == 1


ROCM_SMI = ("================================= Concise Info =================================\n"
            "GPU  Temp   AvgPwr  SCLK    MCLK     Fan    Perf  PwrCap  VRAM%  GPU%\n"
            "0    {t0}c  119.0W  900Mhz  1050Mhz  0%     auto  264.0W   83%   100%\n"
            "1    {t1}c  130.0W  900Mhz  1050Mhz  {f1}%  auto  264.0W   83%   100%\n"
            "================================================================================\n")


def test_a_cards_0_beside_a_twin_turning_no_warmer_is_said_with_the_twin(tmp_path: Path) -> None:
    """rocm-smi's Fan column is each card's duty (pwm1 of amdgpu's hwmon), no speed or target beside it. amdgpu's
    thermal documentation: under pwm1_enable 2 the card's firmware sets the fan from its temperature, so cards of one
    model at one temperature are asked alike but for a fan-stop's band between its start and stop temperatures (one
    started when warmer and not yet stopped). A card at 0 % while another turns at 80 % no warmer: the rest stands as
    it was judged (the passive card's 0 % too), the twin is said beside it with the check a 0 that stays needs; where
    the other card is the warmer one, or at 0 too, nothing is said of it."""
    code, answer = explain(ROCM_SMI.format(t0="57.0", t1="56.0", f1="80.0"), tmp_path)
    assert code == 0, answer
    (rest,) = [f for f in findings_of(answer) if f["kind"] == "at-rest"]
    assert rest["subjects"] == ["amdgpu/GPU 0 fan"] and rest["confidence"] == "possible", rest
    assert (rest["facts"]["design"], rest["facts"]["twin"], rest["facts"]["twin_duty"], rest["facts"]["twin_c"]) == (
        "rest-or-passive", "amdgpu/GPU 1 fan", 80.0, 56.0)
    assert str(answer["sentence"]).startswith(
        "The GPU 0 fan (amdgpu) reads 0 % with GPU 0 edge (amdgpu) at 57 °C: at rest (fan-stop), or a passively cooled "
        "card that reports 0 % for a fan it does not have; no target or speed is read to tell them apart. The GPU 1 "
        "fan (amdgpu) is at 80 % with its card at 56 °C, no warmer: cards of one model on their firmware's curve "
        "differ so only inside their fan-stop band (one started when warmer and not yet stopped); if this one stays at "
        "0 as its card warms, check that it spins (a stopped fan, or a duty the tool fails to read, shows the same "
        "0)."), \
        answer["sentence"]
    for t0, t1, f1 in (("40.0", "66.0", "80.0"), ("57.0", "56.0", "0.0")):  # the other card warmer; both at 0
        code, answer = explain(ROCM_SMI.format(t0=t0, t1=t1, f1=f1), tmp_path)
        assert all("twin" not in f["facts"] for f in findings_of(answer)), findings_of(answer)


ASSIGNED = ("$ nvidia-settings -a \"[gpu:0]/GPUFanControlState={state}\" -a \"[fan:0]/GPUTargetFanSpeed={asked}\"\n\n"
            "  Attribute 'GPUFanControlState' (host:1[gpu:0]) assigned value {state}.\n\n"
            "  Attribute 'GPUTargetFanSpeed' (host:1[fan:0]) assigned value {asked}.\n\n"
            "$ nvidia-smi --query-gpu=index,name,temperature.gpu,fan.speed,utilization.gpu --format=csv\n"
            "index, name, temperature.gpu, fan.speed [%], utilization.gpu [%]\n"
            "0, NVIDIA GeForce RTX 3090, 38, {reads} %, 0 %\n")


def test_a_geforce_asked_for_0_by_hand_runs_at_its_least_speed(tmp_path: Path) -> None:
    """nvidia-settings(1) prints "assigned value N" for each write it made: the card's fan was taken by hand
    (GPUFanControlState 1) and asked for 0 %, and nvidia-smi then reads it at 30 %. Under manual control the card's
    VGA BIOS keeps a least speed (nvfancontrol's README; nvidia-settings' 30-100 range), so a fan asked below it runs
    at it and never stops there: the floor leads, not "not at the speed asked" (the story of a fan daemon's
    maintainers: only the card's automatic policy stops it). The assignments alone (no reading) are read, not
    refused."""
    code, answer = explain(ASSIGNED.format(state=1, asked=0, reads=30), tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "firmware-floor" and lead["confidence"] == "likely"
    assert lead["facts"] == {"floor": 30.0, "controller": "manual", "held": "asked-below", "target": 0.0,
                             "floor_read": "no"}
    assert "read-back-off-target" not in [f["kind"] for f in findings_of(answer)]
    assert "automatic policy lets it stop" in str(answer["sentence"])
    facts = machine(read.read(ASSIGNED.format(state=1, asked=0, reads=30).split("\n\n$")[0])[0])
    assert [(f.target_percent, f.controller, f.duty_percent) for f in facts.fans] == [(0.0, "manual", None)]


def test_a_card_asked_below_what_no_floor_explains_is_not_said_at_its_floor(tmp_path: Path) -> None:
    """60 % is above any least speed the documents give (20 % and 30 %): asked 0 % and reading 60 %, the fan is not
    at the speed asked, no floor is guessed; handed back to its firmware (GPUFanControlState 0), a duty unlike the
    one asked is the card's own and no floor is said either."""
    code, answer = explain(ASSIGNED.format(state=1, asked=0, reads=60), tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert code == 0 and kinds[0] == "read-back-off-target" and "firmware-floor" not in kinds
    code, answer = explain(ASSIGNED.format(state=0, asked=0, reads=30), tmp_path)
    assert code == 0 and "firmware-floor" not in [f["kind"] for f in findings_of(answer)]
    # a floor the card answered (NVML's minimum, nvidia-settings' range), 0 included, is read: none is guessed
    fan = FanFact(key="nvidia/gpu0 fan", chip="nvidia", label="gpu0 fan", duty_percent=30.0, target_percent=0.0,
                  controller="manual")
    assert held_at_floor(fan) is not None and held_at_floor(replace(fan, floor_percent=0.0)) is None


NVFANCONTROL = ("INFO - NVIDIA graphics adapter #0: GeForce GTX 580\nINFO -   GPU #0 coolers: COOLER-0\n"
                "DEBUG - Temp: 45; Speed: [1260] RPM ([18]%); Load: 0%; Mode: {mode}\n"
                "DEBUG - Temp: 45; Speed: [1230] RPM ([17]%); Load: 0%; Mode: {mode}\n")


@pytest.mark.parametrize(("mode", "controller"), [("Manual", "daemon"), ("Auto", "firmware")])
def test_nvfancontrols_mode_says_who_drives_the_fan(mode: str, controller: str, tmp_path: Path) -> None:
    """nvfancontrol's debug line ends with its Mode: Manual where it drives the fan by its curve (through the
    driver's manual control), Auto where it leaves the fan to the card's own policy (its README: a fan already in
    automatic control is left alone without --force). A GTX 580 it drives (nvfancontrol's issue 38) was said "set by
    the device's own firmware"."""
    facts = machine(read.read(NVFANCONTROL.format(mode=mode))[0])
    assert [(f.duty_percent, f.controller) for f in facts.fans] == [(17.0, controller)]
    code, answer = explain(NVFANCONTROL.format(mode=mode), tmp_path)
    assert code == 0 and ("fan daemon" in str(answer["sentence"])) == (controller == "daemon")
