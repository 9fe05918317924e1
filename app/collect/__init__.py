"""The collector and what it is configured by: settings from ``FANWHY_*``, the host sampler (CPU, memory,
sensors), power and energy per process, the snapshot's JSON view, the one collector thread and its frames, and the
collector assembled from settings (no Flask: the terminal answer uses it).

Engine layer: may import core, vendors, attribution and the other engine packages (verdict, store); never web."""
