"""Time each NVML call FanWhy makes per tick, on a real GPU under a load (device only)."""
import time, pynvml as N, statistics, subprocess, sys
N.nvmlInit(); h=N.nvmlDeviceGetHandleByIndex(0)
load=subprocess.Popen([sys.executable,"tests/gpu/cuda_load.py","--seconds","60","--hold-gb","1"],stdout=subprocess.PIPE,text=True); load.stdout.readline(); time.sleep(2)
def t(name, f, n=30):
    xs=[]
    for _ in range(n):
        s=time.perf_counter(); 
        try: f()
        except N.NVMLError as e: pass
        xs.append((time.perf_counter()-s)*1e6)
    print(f"{name:40s} median {statistics.median(xs):8.1f} us  max {max(xs):8.1f}")
t("util", lambda: N.nvmlDeviceGetUtilizationRates(h))
t("mem v2", lambda: N.nvmlDeviceGetMemoryInfo(h, N.nvmlMemory_v2))
t("temp", lambda: N.nvmlDeviceGetTemperature(h, 0))
t("power", lambda: N.nvmlDeviceGetPowerUsage(h))
t("enforced", lambda: N.nvmlDeviceGetEnforcedPowerLimit(h))
t("clock sm", lambda: N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM))
t("clock mem", lambda: N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_MEM))
t("pstate", lambda: N.nvmlDeviceGetPerformanceState(h))
t("reasons", lambda: N.nvmlDeviceGetCurrentClocksEventReasons(h))
t("compute procs", lambda: N.nvmlDeviceGetComputeRunningProcesses(h))
t("graphics procs", lambda: N.nvmlDeviceGetGraphicsRunningProcesses(h))
t("proc util since 0", lambda: N.nvmlDeviceGetProcessUtilization(h, 0))
t("proc util since now-2s", lambda: N.nvmlDeviceGetProcessUtilization(h, int((time.time()-2)*1e6)))
t("proc util since now-0.5s", lambda: N.nvmlDeviceGetProcessUtilization(h, int((time.time()-0.5)*1e6)))
last=[0]
def inc():
    r=N.nvmlDeviceGetProcessUtilization(h, last[0]); last[0]=max(s.timeStamp for s in r)
t("proc util since last", inc)
if hasattr(N, "nvmlDeviceGetProcessesUtilizationInfo"):
    def v1():
        info=N.c_nvmlProcessesUtilizationInfo_t(); info.version=N.nvmlProcessesUtilizationInfo_v1; info.lastSeenTimeStamp=int((time.time()-1)*1e6)
        return N.nvmlDeviceGetProcessesUtilizationInfo(h, info)
    t("processes utilization info v1", v1)
t("energy", lambda: N.nvmlDeviceGetTotalEnergyConsumption(h), n=5)
load.kill()
