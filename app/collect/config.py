"""Settings from FANWHY_* environment variables (the same names as ``python -m app`` flags)."""

from __future__ import annotations

import importlib.util
import ipaddress
import math
import os
import re
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Mapping

from ..core.tokens import weakness
from ..core.vocabulary import BACKENDS
from ..vendors.options import VendorOptions

if TYPE_CHECKING:
    from ..verdict.alerts import Rule, RuleValue

# a path prefix (FANWHY_BASE_PATH, or X-Forwarded-Prefix from a trusted proxy): /fanwhy, /tools/fanwhy; no empty,
# "." or ".." segment, no trailing /
BASE_PATH = re.compile(r"(/(?!\.+(?:/|$))[A-Za-z0-9._~-]+)+")
MIN_PUBLIC_TOKEN = 16  # characters of FANWHY_TOKEN needed to bind anything but loopback
MAKE_TOKEN = "Make one with: openssl rand -hex 16 (or: python3 -c 'import secrets; print(secrets.token_hex(16))')"


class ConfigError(ValueError):
    """A setting has a value FanWhy cannot use; the message names it (by its environment variable), and
    ``setting`` is the Settings field, so a command line can name the flag the user actually typed."""

    def __init__(self, message: str, setting: str | None = None):
        super().__init__(message)
        self.setting = setting

    def named(self, flags: Mapping[str, str]) -> str:
        """The message, with the environment variable replaced by the flag when the value came from a flag."""
        message = str(self)
        if self.setting is not None and self.setting in flags:
            env, flag = ENV_NAMES.get(self.setting, "\0"), flags[self.setting]
            message = message.replace(f"{env}=", f"{flag} ").replace(env, flag)
        return message


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8090
    interval_s: float = 1.0
    backend: str = "auto"
    token: str | None = None
    threads: int = 64
    server: str = "gevent"
    max_sessions: int = 1000
    client_sessions: int = 16
    client_connections: int = 64
    max_connections: int = 2000
    header_timeout_s: float = 10.0
    body_timeout_s: float = 10.0
    client_bodies: int = 4
    max_bodies: int = 64
    top_cpu_processes: int = 5
    alert_gpu_util_percent: float = 50.0
    alert_hold_s: float = 10.0
    alert_hysteresis_percent: float = 5.0
    sys_root: str = "/sys"
    nvidia_smi: str = "nvidia-smi"
    nvidia_smi_timeout_s: float = 5.0
    sim_gpus: int = 2
    sim_peak: float = 0.5
    min_tick_gap_s: float = 0.25
    alerts: Mapping[str, Mapping[str, RuleValue]] = field(default_factory=dict)  # FANWHY_ALERTS, parsed
    db: str = ""
    retention_hours: float = 168.0
    db_max_mb: float = 512.0
    host_proc: str = "/proc"
    exporter_port: int = 9201
    scrape_interval_s: float = 10.0
    message_queue: str = ""
    collector: bool = True
    prometheus_url: str = ""
    metrics_token: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()  # addresses or networks whose X-Forwarded-* headers are believed
    base_path: str = ""  # the path FanWhy is served under behind a proxy, e.g. /fanwhy
    rate_limit_per_s: float = 30.0
    tls_cert: str = ""
    tls_key: str = ""
    mask_patterns: tuple[str, ...] = ()
    names_only: bool = False
    notify: tuple[tuple[str, str], ...] = ()  # FANWHY_NOTIFY: (kind, URL) per target, parsed
    seed_metrics: bool = True
    notify_group_s: float = 10.0
    notify_per_minute: float = 6.0
    watchdog_s: float = 0.0
    docker_socket: str = "/var/run/docker.sock"
    etc_root: str = "/etc"  # where the fan daemons' configurations are read (the host's /etc, in a container)
    bmc: bool = True  # read the chassis fans from the BMC (ipmitool), when the tool and the IPMI device exist
    bmc_interval_s: float = 10.0
    bmc_timeout_s: float = 5.0
    bmc_command: str = ""  # a command that prints an ipmitool sdr listing (a BMC over the LAN); "": ipmitool's own

    @property
    def watchdog_timeout_s(self) -> float:
        """How long a vendor call may take before the snapshot is marked stale (FANWHY_WATCHDOG, else
        5 intervals and at least 5 s)."""
        return self.watchdog_s if self.watchdog_s > 0 else max(5.0, 5 * self.interval_s)

    @property
    def vendor_options(self) -> VendorOptions:
        """What the backends are built with (app.vendors.factory), from these settings."""
        return VendorOptions(sys_root=self.sys_root, nvidia_smi=self.nvidia_smi,
                             nvidia_smi_timeout_s=self.nvidia_smi_timeout_s, sim_gpus=self.sim_gpus,
                             sim_peak=self.sim_peak)

    def alert_rules(self) -> dict[str, Rule]:
        """The alert rules: defaults, then FANWHY_ALERT_GPU_UTIL/HOLD/HYSTERESIS, then FANWHY_ALERTS."""
        from ..verdict.alerts import build_rules

        overrides = {rule: dict(fields) for rule, fields in self.alerts.items()}
        utilization = {"threshold": self.alert_gpu_util_percent, "hold_s": self.alert_hold_s,
                       "hysteresis": self.alert_hysteresis_percent}
        overrides["gpu_utilization"] = {**utilization, **overrides.get("gpu_utilization", {})}
        return build_rules(overrides)

    def validate(self) -> Settings:
        """This settings object, or ConfigError naming the first setting that is wrong and what would do."""
        for name, low, high, message in _RANGES:
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(message.format(value=value), name)
        for name, choices, message in _CHOICES:
            if getattr(self, name) not in choices:
                raise ConfigError(message.format(value=getattr(self, name)), name)
        self._check_tokens()
        self._check_proxy()
        self._check_alerts_and_masks()
        self._check_files()
        self._check_packages()
        if not is_loopback(self.host) and len(self.token or "") < MIN_PUBLIC_TOKEN:
            raise ConfigError(
                f"refusing to bind {self.host}: anything but loopback needs FANWHY_TOKEN of at least "
                f"{MIN_PUBLIC_TOKEN} characters, or keep FANWHY_HOST=127.0.0.1. {MAKE_TOKEN}", "host")
        return self

    def _check_tokens(self) -> None:
        """A token is a secret someone types or pastes: no spaces around it (a pasted newline, a quoted blank), at
        least MIN_PUBLIC_TOKEN characters that are not spaces (16 spaces are not a secret), not a placeholder
        published in this project's files (deploy/kubernetes/secret.yaml's, the docs' examples), and a secret by
        app.core.tokens' rule (no unexpanded shell text, no repeated character or run, at least 64 bits)."""
        for name in FROM_FILE:
            value = getattr(self, name)
            if value is None:
                continue
            variable = ENV_NAMES[name]
            if value.strip().lower() in PUBLISHED_TOKENS or value.strip().lower().startswith("replace-me"):
                raise ConfigError(f"{variable} is the placeholder published in FanWhy's files, not a secret. "
                                  f"{MAKE_TOKEN}", name)
            if value != value.strip():
                raise ConfigError(f"{variable} must not begin or end with spaces or line breaks: remove them", name)
            if sum(not c.isspace() for c in value) < MIN_PUBLIC_TOKEN:
                raise ConfigError(f"{variable} needs at least {MIN_PUBLIC_TOKEN} characters that are not spaces. "
                                  f"{MAKE_TOKEN}", name)
            reason = weakness(value)
            if reason is not None:
                raise ConfigError(f"{variable} is not a secret: it {reason}. {MAKE_TOKEN}", name)

    def _check_alerts_and_masks(self) -> None:
        try:
            self.alert_rules()
        except ValueError as error:
            raise ConfigError(f"FANWHY_ALERTS: {error}") from None
        from ..core.redact import compile_patterns

        try:
            compile_patterns(self.mask_patterns)
        except ValueError as error:
            raise ConfigError(f"FANWHY_MASK_PATTERNS: {error}") from None

    def _check_proxy(self) -> None:
        for item in self.trusted_proxies:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ConfigError(f"FANWHY_TRUSTED_PROXIES: {item!r} is not an address or a network (e.g. "
                                  "127.0.0.1 or 10.0.0.0/8)", "trusted_proxies") from None
        if self.base_path and not BASE_PATH.fullmatch(self.base_path):
            raise ConfigError(f"FANWHY_BASE_PATH must be a path such as /fanwhy (letters, digits, - _ . / after a "
                              f"leading /, no trailing /), got {self.base_path!r}", "base_path")

    def _check_files(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("FANWHY_TLS_CERT and FANWHY_TLS_KEY go together")
        for path in filter(None, (self.tls_cert, self.tls_key)):
            if not os.path.isfile(path):
                raise ConfigError(f"TLS file {path!r} does not exist")
        if not os.path.isdir(self.host_proc):
            raise ConfigError(f"FANWHY_HOST_PROC={self.host_proc!r} is not a directory (mount the host's /proc there)")

    def _check_packages(self) -> None:
        if self.message_queue and not self.message_queue.startswith(("redis://", "rediss://")):
            raise ConfigError("FANWHY_MESSAGE_QUEUE must be a redis:// URL")
        if self.message_queue and importlib.util.find_spec("redis") is None:
            raise ConfigError("FANWHY_MESSAGE_QUEUE needs the redis package: pip install -r requirements-queue.txt "
                              "(make run does it when FANWHY_MESSAGE_QUEUE is set)")
        if self.server == "gevent" and importlib.util.find_spec("gevent") is None:
            raise ConfigError("FANWHY_SERVER=gevent needs the gevent package (pip install -r requirements.txt), "
                              "or set FANWHY_SERVER=threads")


# Numbers that must lie in a range: (setting, lowest, highest, the message; {value} is the value given).
_RANGES: tuple[tuple[str, float, float, str], ...] = (
    ("interval_s", 0.05, 3600, "FANWHY_INTERVAL must be between 0.05 and 3600 seconds, got {value}"),
    ("port", 1, 65535, "FANWHY_PORT must be 1-65535, got {value}"),
    ("alert_gpu_util_percent", 0, 100, "FANWHY_ALERT_GPU_UTIL must be 0-100"),
    ("exporter_port", 1, 65535, "EXPORTER_PORT must be 1-65535, got {value}"),
    ("retention_hours", 1, 24 * 366, "FANWHY_RETENTION_HOURS must be between 1 and 8784"),
    ("threads", 4, math.inf, "FANWHY_THREADS must be at least 4"),
    ("max_sessions", 1, math.inf, "FANWHY_MAX_SESSIONS must be at least 1"),
    ("client_sessions", 1, math.inf, "FANWHY_CLIENT_SESSIONS must be at least 1"),
    ("max_connections", 1, math.inf, "FANWHY_MAX_CONNECTIONS must be at least 1"),
    ("client_connections", 0, math.inf, "FANWHY_CLIENT_CONNECTIONS must be 0 (no limit) or more"),
    ("header_timeout_s", 1, 300, "FANWHY_HEADER_TIMEOUT must be between 1 and 300 seconds"),
    ("body_timeout_s", 1, 300, "FANWHY_BODY_TIMEOUT must be between 1 and 300 seconds"),
    ("client_bodies", 1, math.inf, "FANWHY_CLIENT_BODIES must be at least 1"),
    ("max_bodies", 1, math.inf, "FANWHY_MAX_BODIES must be at least 1"),
    ("notify_group_s", 0, 3600, "FANWHY_NOTIFY_GROUP must be between 0 and 3600 seconds"),
    ("notify_per_minute", 0.1, 600, "FANWHY_NOTIFY_PER_MINUTE must be between 0.1 and 600"),
    ("bmc_interval_s", 2, 3600, "FANWHY_BMC_INTERVAL must be between 2 and 3600 seconds (a BMC answers slowly)"),
    ("bmc_timeout_s", 0.5, 60, "FANWHY_BMC_TIMEOUT must be between 0.5 and 60 seconds"),
)
# Words that must be one of a few.
_CHOICES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("server", ("gevent", "threads"), "FANWHY_SERVER must be gevent or threads, got {value!r}"),
    ("backend", BACKENDS, "FANWHY_BACKEND must be one of " + ", ".join(BACKENDS) + "; got {value!r}"),
)


# setting -> environment variable
ENV_NAMES = {
    "host": "FANWHY_HOST", "port": "FANWHY_PORT", "interval_s": "FANWHY_INTERVAL",
    "backend": "FANWHY_BACKEND", "token": "FANWHY_TOKEN", "threads": "FANWHY_THREADS",
    "server": "FANWHY_SERVER", "max_sessions": "FANWHY_MAX_SESSIONS", "client_sessions": "FANWHY_CLIENT_SESSIONS",
    "client_connections": "FANWHY_CLIENT_CONNECTIONS", "max_connections": "FANWHY_MAX_CONNECTIONS",
    "header_timeout_s": "FANWHY_HEADER_TIMEOUT", "body_timeout_s": "FANWHY_BODY_TIMEOUT",
    "client_bodies": "FANWHY_CLIENT_BODIES", "max_bodies": "FANWHY_MAX_BODIES",
    "top_cpu_processes": "FANWHY_TOP_CPU", "alert_gpu_util_percent": "FANWHY_ALERT_GPU_UTIL",
    "alert_hold_s": "FANWHY_ALERT_HOLD", "alert_hysteresis_percent": "FANWHY_ALERT_HYSTERESIS",
    "sys_root": "FANWHY_SYS_ROOT", "nvidia_smi": "FANWHY_NVIDIA_SMI",
    "nvidia_smi_timeout_s": "FANWHY_NVIDIA_SMI_TIMEOUT", "sim_gpus": "FANWHY_SIM_GPUS",
    "sim_peak": "FANWHY_SIM_PEAK", "min_tick_gap_s": "FANWHY_MIN_TICK_GAP",
    "alerts": "FANWHY_ALERTS", "host_proc": "FANWHY_HOST_PROC", "db": "FANWHY_DB",
    "retention_hours": "FANWHY_RETENTION_HOURS", "db_max_mb": "FANWHY_DB_MAX_MB",
    "docker_socket": "FANWHY_DOCKER_SOCKET", "exporter_port": "EXPORTER_PORT",
    "scrape_interval_s": "SCRAPE_INTERVAL", "message_queue": "FANWHY_MESSAGE_QUEUE", "collector": "FANWHY_COLLECTOR",
    "prometheus_url": "FANWHY_PROMETHEUS_URL", "metrics_token": "FANWHY_METRICS_TOKEN",
    "allowed_hosts": "FANWHY_ALLOWED_HOSTS", "allowed_origins": "FANWHY_ALLOWED_ORIGINS",
    "trusted_proxies": "FANWHY_TRUSTED_PROXIES", "base_path": "FANWHY_BASE_PATH",
    "rate_limit_per_s": "FANWHY_RATE_LIMIT", "tls_cert": "FANWHY_TLS_CERT", "tls_key": "FANWHY_TLS_KEY",
    "mask_patterns": "FANWHY_MASK_PATTERNS", "names_only": "FANWHY_NAMES_ONLY", "watchdog_s": "FANWHY_WATCHDOG",
    "notify": "FANWHY_NOTIFY", "seed_metrics": "FANWHY_SEED_METRICS", "notify_group_s": "FANWHY_NOTIFY_GROUP",
    "notify_per_minute": "FANWHY_NOTIFY_PER_MINUTE", "etc_root": "FANWHY_ETC_ROOT", "bmc": "FANWHY_BMC",
    "bmc_interval_s": "FANWHY_BMC_INTERVAL", "bmc_timeout_s": "FANWHY_BMC_TIMEOUT", "bmc_command": "FANWHY_BMC_COMMAND",
}


def is_wildcard(host: str) -> bool:
    """A bind to every address of the machine (0.0.0.0, ::), not to one of them."""
    return host in ("0.0.0.0", "::", "[::]", "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


_SWITCH = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}
# Lists in one variable: the separator of each (a mask pattern may hold a comma, so patterns are split at "||").
_SEPARATORS = {"mask_patterns": "||"}


def _switch(name: str, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    value = _SWITCH.get(str(raw).strip().lower())
    if value is None:
        raise ConfigError(f"{ENV_NAMES.get(name, name)} must be on or off, got {raw!r}", name)
    return value


def _items(name: str, raw: object) -> tuple[str, ...]:
    if isinstance(raw, (tuple, list)):
        return tuple(str(item) for item in raw)
    return tuple(filter(None, (item.strip() for item in str(raw).split(_SEPARATORS.get(name, ",")))))


def _parsed(name: str, raw: object) -> object:
    """FANWHY_ALERTS (rule overrides) and FANWHY_NOTIFY (targets), parsed from their text once, at load."""
    if not isinstance(raw, str):
        return raw  # already parsed (a test, or a caller that built it)
    from ..verdict.alerts import parse_overrides
    from ..verdict.notify import parse_targets

    try:
        return parse_overrides(raw) if name == "alerts" else tuple(parse_targets(raw))
    except ValueError as error:
        raise ConfigError(f"{ENV_NAMES[name]}: {error}", name) from None


def _convert(name: str, raw: object, kind: str) -> object:
    """A setting's text (environment, flag) as its type, once, at load: on/off as a bool, a list as a tuple."""
    if raw is None:
        return raw
    if kind == "bool":
        return _switch(name, raw)
    if kind == "tuple[str, ...]":
        return _items(name, raw)
    if name in ("alerts", "notify"):
        return _parsed(name, raw)
    convert = {"int": int, "float": float, "str": str, "str | None": str}[kind]
    if isinstance(raw, convert):
        return raw
    try:
        return convert(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{ENV_NAMES.get(name, name)}={raw!r} is not a valid {convert.__name__}", name) from None


# Secrets that may also come from a file (FANWHY_TOKEN_FILE=/run/secrets/...): one source of truth shared with the
# Prometheus that scrapes (credentials_file), and no secret in the process environment.
FROM_FILE = ("token", "metrics_token")
# tokens that appear in this project's files as examples: anyone can read them, so none of them is a secret
PUBLISHED_TOKENS = frozenset({"replace-me-with-32-hex-characters"})


def _read_secret(variable: str, path: str, setting: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read().strip()
    except OSError as error:
        raise ConfigError(f"{variable}={path!r} cannot be read: {error.strerror}", setting) from None
    if not value:
        raise ConfigError(f"{variable}={path!r} is empty", setting)
    return value


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Defaults, then the environment, then explicit overrides (command-line flags)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}  # checked by _convert, one type per field
    for f in fields(Settings):
        kind = str(f.type)
        raw = overrides.get(f.name)
        if raw is None and ENV_NAMES[f.name] in env and env[ENV_NAMES[f.name]] != "":
            raw = env[ENV_NAMES[f.name]]
        if raw is None and f.name in FROM_FILE and env.get(ENV_NAMES[f.name] + "_FILE"):
            raw = _read_secret(ENV_NAMES[f.name] + "_FILE", env[ENV_NAMES[f.name] + "_FILE"], f.name)
        if raw is not None:
            values[f.name] = _convert(f.name, raw, kind)
    return replace(Settings(), **values).validate()
