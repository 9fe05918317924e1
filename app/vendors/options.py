"""What the backends are built with (``factory.default_builders``): the vendors' own options, typed, handed down
from the settings (``Settings.vendor_options``) so that this layer reads no setting by name."""

from __future__ import annotations

from ..core.record import record


@record
class VendorOptions:
    sys_root: str = "/sys"  # FANWHY_SYS_ROOT: where sysfs is (a container with the host's mounted, a test tree)
    nvidia_smi: str = "nvidia-smi"  # the basic backend's nvidia-smi, where NVML is not usable from Python
    nvidia_smi_timeout_s: float = 5.0
    sim_gpus: int = 2  # the demo's simulated GPUs
    sim_peak: float = 0.5  # the share of a core each simulated GPU's worker burns at its busiest
