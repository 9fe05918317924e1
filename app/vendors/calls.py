"""The one call path to a vendor's GPU library (CONTRIBUTING.md): every call the NVML and amdsmi backends make goes
through ``Calls.get``. A value, or None and the reason in the GPU's ``unsupported`` map (not supported, no
permission, a function this library or driver lacks: logged once). Errors that mean the GPU or the library itself
failed raise ``GpuFailed``: the backend turns that GPU into an error row (and NVML is re-initialised). Each library
says how its errors read in a ``Dialect`` (``nvml_calls.NVML``, ``amd.AMDSMI``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeAlias

from ..core.record import record

log = logging.getLogger(__name__)
# A vendor's Python module (pynvml, amdsmi) or a test's fake: they carry no type hints, so what they answer is Any.
Library: TypeAlias = Any


class GpuFailed(Exception):
    """The GPU or its library failed (lost, not initialised, the driver gone): not a missing metric."""


@record
class Dialect:
    """How a library's errors read: which exceptions its calls raise, the code of one, and what each code means
    (by the names the library gives its codes; a name the installed version lacks is left out)."""

    library: str  # as a reason names it: "NVML", "amdsmi"
    package: str  # the Python package that wraps it, as "not in this ..." names it
    errors: Callable[[Library], tuple[type[BaseException], ...]]  # the library -> the exceptions its calls raise
    code: Callable[[BaseException], int | None]
    codes: Callable[[Library, tuple[str, ...]], frozenset[int]]  # the library, names -> their codes
    fatal: tuple[str, ...]
    not_supported: tuple[str, ...]
    no_permission: tuple[str, ...]
    function_missing: tuple[str, ...] = ()  # the driver lacks this function (the library has it)
    detail: Callable[[BaseException], str] = lambda error: type(error).__name__  # after "<library> error: "


class Calls:
    """The one wrapper every call to ``lib`` goes through. ``lib``: the library's module (or a test's fake); None
    before it is loaded (no call is made then)."""

    def __init__(self, lib: Library, dialect: Dialect):
        self.lib = lib
        self.dialect = dialect
        self._errors = dialect.errors(lib) if lib is not None else ()
        self._fatal = dialect.codes(lib, dialect.fatal) if lib is not None else frozenset()
        self._not_supported = dialect.codes(lib, dialect.not_supported) if lib is not None else frozenset()
        self._no_permission = dialect.codes(lib, dialect.no_permission) if lib is not None else frozenset()
        self._missing = dialect.codes(lib, dialect.function_missing) if lib is not None else frozenset()
        self._missing_logged: set[str] = set()

    def get(self, unsupported: dict[str, str], metric: str, fn_name: str, *args: object) -> Library:
        """Call ``lib.<fn_name>(*args)``; on a non-fatal error return None and record why."""
        fn: Callable[..., Library] | None = getattr(self.lib, fn_name, None)
        if fn is None:
            unsupported[metric] = f"not available: {fn_name} is not in this {self.dialect.package}"
            return None
        try:
            return fn(*args)
        except self._errors as error:
            unsupported[metric] = self.reason(error, fn_name, metric)
            return None

    def reason(self, error: BaseException, fn_name: str, metric: str) -> str:
        """Why a metric is missing; raises GpuFailed when the error means the GPU or the library failed."""
        code = self.dialect.code(error)
        if code is not None and code in self._fatal:
            raise GpuFailed(f"{type(error).__name__}: {error}") from error
        if code is not None and code in self._not_supported:
            return "not supported by this GPU"
        if code is not None and code in self._no_permission:
            return "no permission"
        if code is not None and code in self._missing:
            if fn_name not in self._missing_logged:
                self._missing_logged.add(fn_name)
                log.info("%s function %s not found in this driver; %s stays empty", self.dialect.library, fn_name,
                         metric)
            return f"not available: {fn_name} is not in this driver"
        return f"{self.dialect.library} error: {self.dialect.detail(error)}"
