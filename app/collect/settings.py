"""Every setting FanWhy has, each declared once (app.collect.declare): its variable, flag, type, range, default
and help. Loading and checking them is app.collect.config's; docs/CONFIGURATION.md's table is made from here."""

from __future__ import annotations

from ..core.record import record
from ..core.vocabulary import BACKENDS
from ..vendors.options import VendorOptions
from .declare import setting

_SECONDS = "seconds"


@record
class Settings:
    # where and how it serves
    host: str = setting(
        "127.0.0.1", "FANWHY_HOST", "address to bind; anything but loopback needs `FANWHY_TOKEN`", flag="--host",
        metavar="ADDRESS", more="FanWhy refuses to start without one. Bound to all addresses (`0.0.0.0`, `::`), it "
                               "prints this machine's addresses to open")
    port: int = setting(8090, "FANWHY_PORT", "port", flag="--port", metavar="PORT", low=1, high=65535)
    interval_s: float = setting(1.0, "FANWHY_INTERVAL", "seconds between samples", flag="--interval",
                                metavar="SECONDS", low=0.05, high=3600, unit=_SECONDS)
    backend: str = setting(
        "auto", "FANWHY_BACKEND", "where the GPUs are read (`auto`: NVML, then amdsmi, then the basic backend)",
        flag="--backend", metavar="NAME", choices=BACKENDS)
    server: str = setting(
        "gevent", "FANWHY_SERVER", "serving model: `gevent` (a connection is a greenlet) or `threads` (a thread per "
        "connection)", flag="--server", metavar="MODEL", choices=("gevent", "threads"),
        more="Under gevent the collector and NVML stay on native threads; `threads` is gunicorn's gthread. "
             "`docs/SERVING.md` has the measurements behind the default")
    threads: int = setting(64, "FANWHY_THREADS", "`FANWHY_SERVER=threads` only: gunicorn threads, one per connection",
                           flag="--threads", metavar="N", low=4)
    trusted_proxies: tuple[str, ...] = setting(
        (), "FANWHY_TRUSTED_PROXIES", "addresses or networks (`127.0.0.1,10.0.0.0/8`) of reverse proxies whose "
        "`X-Forwarded-*` headers are believed",
        more="From them alone `X-Forwarded-For` (the rightmost address no trusted proxy wrote is the client), "
             "`-Proto`, `-Host` and `-Prefix` are believed; from anyone else they are dropped. Limits, logs, the Host "
             "allowlist and the Origin check then use the real client and the forwarded host; a trusted proxy has no "
             "per-address connection limit (it carries everyone's)")
    base_path: str = setting(
        "", "FANWHY_BASE_PATH", "the path FanWhy is served under (`/fanwhy`) when the proxy passes it whole",
        more="A proxy that strips it sends `X-Forwarded-Prefix` instead. The page, static files, REST, Socket.IO, "
             "`/metrics`, `/api/docs` and `/login` all follow it; `/fanwhy` redirects to `/fanwhy/`")
    tls_cert: str = setting("", "FANWHY_TLS_CERT", "a certificate (PEM) to serve HTTPS with; needs `FANWHY_TLS_KEY`")
    tls_key: str = setting("", "FANWHY_TLS_KEY", "the certificate's private key (PEM)")
    message_queue: str = setting(
        "", "FANWHY_MESSAGE_QUEUE", "`redis://host:6379/0`: Socket.IO events cross server processes through Redis",
        more="Needs `requirements-queue.txt`, kept out of `requirements.txt` because python-socketio imports redis "
             "whenever it is installed (~6 MiB in every server)")
    collector: bool = setting(True, "FANWHY_COLLECTOR", "`off` for a server process that only serves clients "
                                                        "(another process collects and broadcasts)")
    # who may come in
    token: str | None = setting(
        None, "FANWHY_TOKEN", "when set, required on every route and on `/socket.io` (see `docs/SECURITY.md`)",
        kind=str, from_file=True,
        more="At least 16 characters that are not spaces, no spaces or line breaks around it, and a secret: "
             "unexpanded shell text (`$(…)`, `${…}`, backticks), one repeated character, run or pattern, the "
             "placeholder of `deploy/kubernetes/secret.yaml` and anything under 64 bits by `docs/SECURITY.md`'s "
             "estimate are refused at start, saying why (`openssl rand -hex 16` makes one). For `fanwhy top --server "
             "URL` it is the token sent to that server (asked for on the terminal when unset)")
    metrics_token: str | None = setting(
        None, "FANWHY_METRICS_TOKEN", "a second token that opens `/metrics` only (for Prometheus)", kind=str,
        from_file=True, more="The same rules as `FANWHY_TOKEN`")
    allowed_hosts: tuple[str, ...] = setting(
        (), "FANWHY_ALLOWED_HOSTS", "Host names and addresses to accept, comma-separated, **added** to `localhost`, "
        "`127.0.0.1`, `::1`", shown="loopback's names; bound to the network with a token, any name",
        more="Behind a reverse proxy, the names people reach the proxy by (a trusted proxy's `X-Forwarded-Host` is "
             "checked against it). Bound to the network, it narrows \"any\" to its names and loopback's. `*`: any")
    allowed_origins: tuple[str, ...] = setting(
        (), "FANWHY_ALLOWED_ORIGINS", "other sites (`https://dash.example`) allowed to call the API and Socket.IO "
        "from a browser, comma-separated", shown="same origin only",
        more="Each gets `Access-Control-Allow-Origin` with its own value")
    rate_limit_per_s: float = setting(
        30.0, "FANWHY_RATE_LIMIT", "requests per second per client address, REST and new Socket.IO sessions alike",
        low=0, more="Bursts of twice that; `0` turns it off. `request_gpu_update` is held to 2/s per client")
    mask_patterns: tuple[str, ...] = setting(
        (), "FANWHY_MASK_PATTERNS", "extra regular expressions, separated by `||` (a pattern may hold a comma), "
        "masked in command lines", separator="||")
    names_only: bool = setting(False, "FANWHY_NAMES_ONLY", "`on`: never show command lines, only process names")
    # how many at once
    max_sessions: int = setting(
        1000, "FANWHY_MAX_SESSIONS", "open Socket.IO sessions in all", low=1,
        more="The next handshake is let in and the oldest session of the address holding the most (the loopback "
             "range counts as one) is closed")
    client_sessions: int = setting(
        16, "FANWHY_CLIENT_SESSIONS", "open Socket.IO sessions per client address (a browser tab is one)", low=1,
        more="The next from a network address gets 429, the next from a loopback address closes that address's "
             "oldest")
    client_connections: int = setting(
        64, "FANWHY_CLIENT_CONNECTIONS", "TCP connections per client address (gevent); more are closed at once",
        low=0, why=" (0: no limit)",
        more="`0`: no limit (behind a reverse proxy every client has the proxy's address: raise this and "
             "`FANWHY_CLIENT_SESSIONS`)")
    max_connections: int = setting(2000, "FANWHY_MAX_CONNECTIONS", "TCP connections in all (gunicorn's "
                                                                   "`worker_connections`)", low=1)
    header_timeout_s: float = setting(
        10.0, "FANWHY_HEADER_TIMEOUT", "seconds a client has to send a request's headers (gevent; also the keep-alive "
        "timeout; Socket.IO pings come at half of it, every 5 s at most)", low=1, high=300, unit=_SECONDS)
    body_timeout_s: float = setting(
        10.0, "FANWHY_BODY_TIMEOUT", "seconds a client has to send a request's body, first byte to last (then 408)",
        low=1, high=300, unit=_SECONDS)
    client_bodies: int = setting(4, "FANWHY_CLIENT_BODIES", "requests per client address that may be sending a body "
                                                            "at once; the next gets 429 at once", low=1)
    max_bodies: int = setting(64, "FANWHY_MAX_BODIES", "requests that may be sending a body at once, in all; the "
                              "next cuts a slow one (still arriving after 1 s, or from an address late in the last "
                              "minute) or gets 503 at once", low=1)
    min_tick_gap_s: float = setting(0.25, "FANWHY_MIN_TICK_GAP", "the least time between early ticks that clients "
                                                                 "may request (seconds)", low=0, unit=_SECONDS)
    watchdog_s: float = setting(0.0, "FANWHY_WATCHDOG", "seconds a vendor call may hang before the snapshot is "
                                                        "marked stale", low=0, shown="5 intervals, at least 5 s")
    # alerts and where they go
    alert_gpu_util_percent: float = setting(
        50.0, "FANWHY_ALERT_GPU_UTIL", "GPU utilization (%) that raises `high_gpu_usage_alert`",
        flag="--alert-gpu-util", metavar="PERCENT", low=0, high=100)
    alert_hold_s: float = setting(10.0, "FANWHY_ALERT_HOLD", "seconds the utilization must stay at or above the "
                                                             "threshold before the alert fires", flag="--alert-hold",
                                  metavar="SECONDS", low=0, unit=_SECONDS)
    alert_hysteresis_percent: float = setting(5.0, "FANWHY_ALERT_HYSTERESIS", "the alert resolves below threshold "
                                                                              "minus this (%)", low=0, high=100)
    alerts: str = setting(
        "", "FANWHY_ALERTS", "change an alert rule, e.g. `temperature.threshold=80` or `power.enabled=0`; "
        "comma-separated", flag="--alert", metavar="RULE.FIELD=VALUE", repeat=True,
        more="Any rule's `threshold`, `hold`, `hysteresis`, `cooldown`, `severity`, `enabled`; rules: "
             "`gpu_utilization`, `temperature`, `memory`, `power`, `throttling`, `xid`, `new_process`, `fan` (a fan "
             "with an alarm: failed, off its target, or at full speed for no heat; held 30 s by default, "
             "`fan.hold=120` to wait longer, `fan.enabled=0` to silence it). Each `--alert` is added to the "
             "variable's")
    notify: str = setting(
        "", "FANWHY_NOTIFY", "where alerts go when no tab is open: `KIND:URL` targets separated by commas",
        more="KIND one of `webhook` (FanWhy's JSON: title, text, alerts), `ntfy` (plain text with "
             "Title/Priority/Tags headers, e.g. `ntfy:https://ntfy.sh/my-topic`), `slack` and `discord` (their "
             "incoming-webhook payloads). See *Notifications* below")
    notify_group_s: float = setting(10.0, "FANWHY_NOTIFY_GROUP", "alert events within this many seconds go out as "
                                                                 "one message", low=0, high=3600, unit=_SECONDS)
    notify_per_minute: float = setting(6.0, "FANWHY_NOTIFY_PER_MINUTE", "at most this many messages a minute per "
                                                                        "target", low=0.1, high=600)
    # what is read, and from where
    top_cpu_processes: int = setting(5, "FANWHY_TOP_CPU", "how many top CPU processes to list beside the GPU users",
                                     low=0)
    host_proc: str = setting(
        "/proc", "FANWHY_HOST_PROC", "the host's /proc when FanWhy runs in a container: NVML's host PIDs are "
        "resolved there", more="`-v /proc:/host/proc:ro -e FANWHY_HOST_PROC=/host/proc`")
    sys_root: str = setting(
        "/sys", "FANWHY_SYS_ROOT", "sysfs root: the basic backend's DRM cards, and hwmon (the board's, laptop's and "
        "amdgpu's fans and the host's temperatures)", more="In a container: `-v /sys:/host/sys:ro -e "
                                                          "FANWHY_SYS_ROOT=/host/sys`")
    etc_root: str = setting(
        "/etc", "FANWHY_ETC_ROOT", "where the fan daemons' configurations are read: `fancontrol`, `thinkfan.yaml` (or "
        "a `thinkfan.conf`), `fan2go/fan2go.yaml`, `fw-fanctrl/config.json`, `i8kmon.conf`, `zcfan.conf`, "
        "`nfancurve.conf`, "
        "`amdfan.yml` (or amdgpu-fan's `amdgpu-fan.yml`), `lact/config.yaml`, `nbfc/nbfc.json` (with the model "
        "configuration it selects, under the root's `var/lib/nbfc/configs` or `usr/share/nbfc/configs`)",
        more="A declared source and curve win over learned ones. In a container: `-v /etc:/host/etc:ro -e "
             "FANWHY_ETC_ROOT=/host/etc` (NBFC's model configurations are read beside that root: mount "
             "`/usr/share/nbfc` and `/var/lib/nbfc` under its parent too)")
    docker_socket: str = setting("/var/run/docker.sock", "FANWHY_DOCKER_SOCKET", "Docker Engine API (or Podman's "
                                 "compatible socket) for container names, images and GPU access; empty to disable")
    bmc: bool = setting(
        True, "FANWHY_BMC", "read the chassis fans and the inlet/exhaust air from the BMC (`ipmitool sdr elist`) when "
        "`ipmitool` and an IPMI device (`/dev/ipmi0`) are there", more="`off` never runs it. `/api/fans` says why "
                                                                       "the BMC is not read")
    bmc_interval_s: float = setting(
        10.0, "FANWHY_BMC_INTERVAL", "seconds between BMC reads", low=2, high=3600, unit=_SECONDS,
        why=" (a BMC answers slowly)", more="A BMC answers in seconds, so it is never read every tick; the reads run "
                                            "on a thread of their own: a slow BMC never holds a tick")
    bmc_timeout_s: float = setting(5.0, "FANWHY_BMC_TIMEOUT", "the hard timeout of one BMC read (the process group "
                                                              "is killed past it)", low=0.5, high=60, unit=_SECONDS)
    bmc_command: str = setting(
        "", "FANWHY_BMC_COMMAND", "a command that prints an `ipmitool sdr` listing, instead of the local `ipmitool "
        "sdr elist`", more="A BMC over the network: `ipmitool -I lanplus -H bmc.example -U admin -E sdr elist`, its "
                           "password from `IPMI_PASSWORD` with `-E`, never on the command line. Run with the same "
                           "interval, timeout and output cap (4 MiB, 20,000 lines)")
    nvidia_smi: str = setting("nvidia-smi", "FANWHY_NVIDIA_SMI", "the nvidia-smi binary (the basic backend's)")
    nvidia_smi_timeout_s: float = setting(5.0, "FANWHY_NVIDIA_SMI_TIMEOUT", "nvidia-smi's hard timeout",
                                          low=0.1, high=600, unit=_SECONDS)
    sim_gpus: int = setting(2, "FANWHY_SIM_GPUS", "the simulated backend's GPUs", low=1, high=16)
    sim_peak: float = setting(0.5, "FANWHY_SIM_PEAK", "the peak share of a core each simulated GPU's worker burns",
                              low=0.01, high=1)
    # what is kept
    db: str = setting(
        "", "FANWHY_DB", "the SQLite history; `none` turns history off. One FanWhy writes a file (it holds a lock on "
                         "`<file>.lock` while it runs): a second one on the same file is refused with one line",
        shown="`~/.local/share/fanwhy/history.db` (`$XDG_DATA_HOME`; the demo: `demo-history.db` beside it)")
    retention_hours: float = setting(168.0, "FANWHY_RETENTION_HOURS", "how long per-minute history is kept (full "
                                                                      "rate is kept for the last hour)", low=1,
                                     high=24 * 366, unit="hours")
    db_max_mb: float = setting(
        512.0, "FANWHY_DB_MAX_MB", "size cap of the whole history, recordings included", low=1,
        more="Past it the oldest tenth goes first, and `/api/health` says so (degraded) for 10 minutes")
    # the fleet
    prometheus_url: str = setting("", "FANWHY_PROMETHEUS_URL", "the Prometheus whose HTTP API the fleet view "
                                                               "(`/fleet`, `/api/fleet`) reads")
    seed_metrics: bool = setting(True, "FANWHY_SEED_METRICS", "`/metrics` also serves the earlier projects' metric "
                                                              "names beside `fanwhy_*`")
    exporter_port: int = setting(9201, "EXPORTER_PORT", "the port of `fanwhy exporter`", low=1, high=65535)
    scrape_interval_s: float = setting(10.0, "SCRAPE_INTERVAL", "seconds between collections of `fanwhy exporter`",
                                       low=0.05, high=3600, unit=_SECONDS)

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
