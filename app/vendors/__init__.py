"""GPU vendor backends: one per GPU library (NVML, amdsmi), a basic one (sysfs, DRM fdinfo, nvidia-smi) and a
simulated one, behind one contract (``base.Backend``), picked by ``factory``. Only this package imports pynvml or
amdsmi.

Vendors layer: may import core and the other vendor modules, nothing else."""
