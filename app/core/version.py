"""FanWhy's version: one place, shown by `fanwhy --version`, /api/health and `fanwhy_build_info`."""

__version__ = "0.9.0"
