// FanWhy page: renders each snapshot pushed over Socket.IO. Every untrusted string (process
// names, command lines, GPU names) goes in through textContent, never as HTML.
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  const cards = new Map();
  const state = { lastTimestamp: null };

  function fmtBytes(bytes) {
    if (bytes === null || bytes === undefined) return "N/A";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let value = bytes, unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return value.toFixed(unit >= 3 && value < 100 ? 1 : 0) + " " + units[unit];
  }
  const fmt = (value, suffix, digits) =>
    value === null || value === undefined ? null : Number(value).toFixed(digits || 0) + suffix;

  // A missing value reads "N/A" with the reason on hover (and for screen readers).
  function setValue(el, text, reason) {
    if (text === null) {
      el.textContent = reason ? "N/A: " + shortReason(reason) : "N/A";
      el.title = reason || "";
      el.classList.add("na");
    } else {
      el.textContent = text;
      el.title = "";
      el.classList.remove("na");
    }
  }
  function shortReason(reason) {
    if (reason.indexOf("passively cooled") >= 0) return "passively cooled";
    return reason.length > 40 ? reason.slice(0, 38) + "…" : reason;
  }

  function setConnection(text, kind) {
    const el = $("#connection");
    el.textContent = text;
    el.className = "pill pill-" + kind;
  }

  function gpuCard(gpu) {
    const key = gpu.uuid || "index-" + gpu.index;
    let card = cards.get(key);
    if (!card) {
      card = $("#gpu-card").content.firstElementChild.cloneNode(true);
      card.dataset.gpu = String(gpu.index);
      cards.set(key, card);
      $("#gpus").appendChild(card);
    }
    return card;
  }

  function renderGpu(gpu) {
    const card = gpuCard(gpu);
    const f = (name) => card.querySelector('[data-f="' + name + '"]');
    const why = gpu.unsupported || {};
    f("title").textContent = "GPU " + gpu.index + " · " + (gpu.name || "unknown");
    f("pstate").textContent = gpu.pstate || "";
    const err = f("error");
    err.hidden = !gpu.error;
    err.textContent = gpu.error || "";
    card.classList.toggle("failed", Boolean(gpu.error));

    f("util-bar").value = gpu.utilization_percent || 0;
    setValue(f("util"), fmt(gpu.utilization_percent, " %"), why.utilization_percent);
    f("mem-bar").value = gpu.memory_percent || 0;
    setValue(f("mem"), gpu.memory_used_bytes === null ? null :
      fmtBytes(gpu.memory_used_bytes) + " / " + fmtBytes(gpu.memory_total_bytes), why.memory_used_bytes);
    const powerPct = gpu.power_w !== null && gpu.power_limit_w ? 100 * gpu.power_w / gpu.power_limit_w : 0;
    f("power-bar").value = powerPct;
    setValue(f("power"), gpu.power_w === null ? null :
      fmt(gpu.power_w, " W") + (gpu.power_limit_w ? " / " + fmt(gpu.power_limit_w, " W") : ""), why.power_w);
    setValue(f("temp"), gpu.temperature_c === null ? null : fmt(gpu.temperature_c, " °C") +
      (gpu.temperature_slowdown_c ? " (slows at " + fmt(gpu.temperature_slowdown_c, " °C") + ")" : ""),
      why.temperature_c);
    setValue(f("fan"), gpu.fan_speed_percent === null ? null : fmt(gpu.fan_speed_percent, " %") +
      (gpu.fan_rpm ? " · " + gpu.fan_rpm + " RPM" : ""), why.fan_speed_percent);
    setValue(f("clocks"), gpu.clock_sm_mhz === null ? null : "SM " + gpu.clock_sm_mhz + " MHz" +
      (gpu.clock_memory_mhz ? " · mem " + gpu.clock_memory_mhz + " MHz" : ""), why.clock_sm_mhz);
    const reasons = gpu.throttle_reasons;
    setValue(f("throttle"), reasons === null ? null : (reasons.length ? reasons.join(", ") : "none"),
      why.throttle_reasons);
  }

  function renderSystem(host) {
    const dl = $("#system");
    const rows = [
      ["CPU", fmt(host.cpu_percent, " %"), null],
      ["Load", host.load_average ? host.load_average.map((v) => v.toFixed(2)).join(" ") : null,
        (host.unsupported || {}).load_average],
      ["Memory", host.memory_used_bytes === null ? null :
        fmtBytes(host.memory_used_bytes) + " / " + fmtBytes(host.memory_total_bytes), null],
      ["CPU temperature", fmt(host.cpu_temperature_c, " °C"), (host.unsupported || {}).cpu_temperature_c],
      ["Fans", host.fans.length ? host.fans.map((f) => f.label + " " + f.rpm + " RPM").join(", ") : null,
        (host.unsupported || {}).fans],
    ];
    while (dl.children.length < rows.length * 2) {
      dl.appendChild(document.createElement("dt"));
      dl.appendChild(document.createElement("dd"));
    }
    rows.forEach((row, i) => {
      dl.children[2 * i].textContent = row[0];
      setValue(dl.children[2 * i + 1], row[1], row[2]);
    });
  }

  function renderProcesses(processes) {
    const body = $("#processes tbody");
    const rows = processes.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.pid = String(p.pid);
      if (p.status !== "ok") tr.classList.add("status-" + p.status);
      const cells = [
        String(p.pid),
        p.user || "?",
        (p.name || "?") + (p.status !== "ok" ? " (" + p.status + ")" : "") +
          (p.visibility !== "visible" ? " [" + p.visibility + "]" : ""),
        p.gpus.length ? p.gpus.map((g) => String(g.gpu_index)).join(", ") : "–",
        p.gpus.length ? fmtBytes(p.gpu_memory_bytes) : "–",
        p.sm_percent === null ? (p.gpus.length ? "N/A" : "–") : p.sm_percent.toFixed(0),
        p.cpu_percent === null ? "…" : p.cpu_percent.toFixed(0),
        p.command || "",
      ];
      cells.forEach((text, i) => {
        const td = document.createElement("td");
        td.textContent = text;
        if (i === 7) { td.className = "cmd"; td.title = text; }
        tr.appendChild(td);
      });
      return tr;
    });
    body.replaceChildren(...rows);
  }

  // An alert is shown once, whether it arrives as an event or is already firing when the page opens.
  const shownAlerts = new Set();
  function alertToast(alert) {
    const key = alert.id + ":" + alert.state;
    if (shownAlerts.has(key)) return;
    shownAlerts.add(key);
    toast(alert.state === "resolved" ? "ok" : alert.severity || "warning", alert.message);
  }

  function render(snap) {
    state.lastTimestamp = snap.timestamp;
    (snap.alerts || []).forEach(alertToast);
    $("#backend").textContent = "backend: " + snap.backend.name;
    $("#host").textContent = snap.host.hostname;
    const noGpu = $("#no-gpu");
    noGpu.hidden = snap.gpus.length > 0;
    noGpu.textContent = snap.gpus.length ? "" : "No GPU found, because " + (snap.backend.no_gpu_reason || "none was reported") +
      ". Showing the CPU side: it may be the CPU's fan.";
    const errors = $("#errors");
    errors.hidden = !snap.errors.length;
    errors.textContent = snap.errors.join(" · ");
    const seen = new Set();
    snap.gpus.forEach((gpu) => { renderGpu(gpu); seen.add(gpu.uuid || "index-" + gpu.index); });
    for (const [key, card] of cards) {
      if (!seen.has(key)) { card.remove(); cards.delete(key); }
    }
    renderSystem(snap.host);
    renderProcesses(snap.processes);
    $("#updated").textContent = new Date(snap.timestamp * 1000).toLocaleTimeString();
    $("#timing").textContent = snap.timing.total_ms.toFixed(1) + " ms, tick " + snap.timing.tick;
  }

  function toast(kind, text) {
    const el = document.createElement("div");
    el.className = "toast toast-" + kind;
    el.setAttribute("role", "alert");
    el.textContent = text;
    $("#toasts").appendChild(el);
    setTimeout(() => el.remove(), 8000);
  }

  const socket = io({ transports: ["websocket", "polling"] });
  socket.on("connect", () => setConnection("live", "ok"));
  socket.on("disconnect", () => setConnection("reconnecting…", "wait"));
  socket.on("connect_error", () => setConnection("server unreachable, retrying…", "bad"));
  socket.io.on("reconnect", () => socket.emit("request_gpu_update"));
  socket.on("gpu_status", render);
  socket.on("gpu_status_update", render);
  socket.on("high_gpu_usage_alert", alertToast);
  socket.on("alert", alertToast);
  socket.on("alert_resolved", alertToast);
  window.fanwhy = { socket: socket, state: state };
})();
