"""GPU vendor backends. Only this package imports pynvml or amdsmi."""
