// FanWhy page: renders each snapshot pushed over Socket.IO. Every untrusted string (process
// names, command lines, GPU names) goes in through textContent, never as HTML.
(function () {
  "use strict";

  const $ = (sel, root) => (root || document).querySelector(sel);
  // Unattributed GPU memory below this is driver overhead: app/vocabulary.py's UNATTRIBUTED_FLOOR_BYTES
  // (tests/unit/test_vocabulary.py fails if the two differ).
  const UNATTRIBUTED_FLOOR_BYTES = 64 * 1024 * 1024;
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
  // A speed in RPM as the verdict and the terminal write it: grouped by thousands ("1,147 RPM")
  const rpm = (value) => Math.round(value).toLocaleString("en-US") + " RPM";

  // A missing value reads "N/A" with the reason on hover (and for screen readers); `short` replaces the
  // shortened reason when the snapshot says it in a word (passively_cooled).
  // A number and its unit never part at a line's end: "100 %" stays whole at phone width.
  const UNIT = /(\d) (?=(%|°C|W\b|Wh\b|[KMGT]iB\b|B\b|RPM\b|MHz\b|s\b|ms\b|cores?\b))/g;
  function keep(text) { return String(text).replace(UNIT, "$1\u00a0"); }

  function setValue(el, text, reason, short) {
    if (text !== null) text = keep(text);
    if (text === null) {
      el.textContent = short ? "N/A: " + short : reason ? "N/A: " + shortReason(reason) : "N/A";
      el.title = reason || "";
      el.classList.add("na");
    } else {
      el.textContent = text;
      el.title = "";
      el.classList.remove("na");
    }
  }
  function shortReason(reason) {
    return reason.length > 40 ? reason.slice(0, 38) + "…" : reason;
  }

  function setConnection(text, kind) {
    const el = $("#connection");
    el.textContent = text;
    el.className = "pill pill-" + kind;
    document.body.classList.toggle("offline", kind !== "ok");  // what is shown is no longer live: greyed
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

  // A fan's speed and state in words: "stopped (fan-stop)", "31 % · at its 30 % floor", "65 % (target 65 %)".
  function fanText(fan) {
    const stale = fan.stale_s ? " (last read " + Math.round(fan.stale_s) + " s ago: its source is failing)" : "";
    return fanNow(fan) + stale;
  }
  function fanNow(fan) {
    if (fan.state === "stopped") return "stopped (fan-stop)";
    if (fan.state === "failed" || fan.state === "off-target") return "FAULT: " + fan.alarm;
    if (fan.state === "stalled") return "CHECK: " + fan.alarm;
    const speed = fan.percent !== null ? fmt(fan.percent, " %") + (fan.rpm ? " · " + rpm(fan.rpm) : "")
      : fan.rpm !== null ? rpm(fan.rpm) : "speed unknown";
    if (fan.state === "floor") return speed + " · at its " + (fan.floor_percent ? fmt(fan.floor_percent, " % ") : "") + "floor";
    if (fan.state === "full") return speed + " · full speed";
    return speed + (fan.target_percent !== null && fan.target_percent !== undefined ? " (target " + fmt(fan.target_percent, " %") + ")" : "");
  }

  // The ledger: the board = idle (charged to nobody) + the processes + what nobody visible does.
  const IDLE_FROM = { measured: "measured in this P-state with no process on the GPU",
    "other-pstate": "this P-state not yet seen idle: the GPU's lowest idle in another P-state",
    unknown: "never seen idle since FanWhy started: the processes are charged the whole board until it is" };
  function splitText(ledger) {
    if (!ledger) return null;
    const idle = ledger.idle_from === "unknown" ? "idle not measured yet" : "idle " + fmt(ledger.idle_w, " W");
    return idle + " · processes " + fmt(ledger.processes_w, " W") + " · unattributed " + fmt(ledger.unattributed_w, " W");
  }

  // The GPU's activity counters (NVML GPM), in the order the terminal and the metrics show them: a bar each.
  const ACTIVITY = [["SM active", "sm_active_percent"], ["Occupancy", "sm_occupancy_percent"],
    ["Tensor", "tensor_percent"], ["FP32", "fp32_percent"], ["FP64", "fp64_percent"], ["FP16", "fp16_percent"],
    ["DRAM", "dram_percent"]];
  function activityBars(box, window, prefix) {
    const rows = ACTIVITY.filter((a) => window[a[1]] !== null && window[a[1]] !== undefined);
    while (box.children.length > rows.length) box.lastChild.remove();
    rows.forEach((a, i) => {
      let line = box.children[i];
      if (!line) {
        line = document.createElement("div");
        line.className = "bar-row small";
        line.append(document.createElement("span"), document.createElement("meter"), document.createElement("b"));
        line.children[1].max = 100;
        box.appendChild(line);
      }
      line.children[0].textContent = prefix + a[0];
      line.children[1].value = window[a[1]];
      line.children[2].textContent = keep(fmt(window[a[1]], " %", window[a[1]] < 1 && window[a[1]] > 0 ? 1 : 0));
    });
  }
  // What kind of busy: the verdict's words beside the bars; where the counters are not read, why (never zeros).
  function renderActivity(card, gpu, kinds) {
    const f = (name) => card.querySelector('[data-f="' + name + '"]');
    const windows = gpu.activity ? [gpu.activity] : gpu.activity_instances || [];
    const mine = (kinds || []).filter((k) => k.gpu_index === gpu.index);
    f("activity").hidden = !windows.length;
    f("kind").textContent = mine.map((k) => (k.gpu_instance === null ? "" : "GPU instance " + k.gpu_instance +
      ": ") + k.words.charAt(0).toUpperCase() + k.words.slice(1)).join(". ");
    const box = f("activity-bars");
    if (windows.length === 1) {
      activityBars(box, windows[0], windows[0].gpu_instance === null ? "" : "GI " + windows[0].gpu_instance + " ");
    } else {
      box.textContent = "";
      windows.forEach((w) => {
        const one = document.createElement("div");
        box.appendChild(one);
        activityBars(one, w, "GI " + w.gpu_instance + " ");
      });
    }
    const why = (gpu.unsupported || {}).activity;
    setValue(f("activity-why"), windows.length ? (gpu.activity ? "window of " + fmt(gpu.activity.window_s, " s", 1) :
      why || "per GPU instance") : null, why, null);
  }

  function renderGpu(gpu, fans, ledger, kinds) {
    const card = gpuCard(gpu);
    const f = (name) => card.querySelector('[data-f="' + name + '"]');
    const why = gpu.unsupported || {};
    f("title").textContent = "GPU " + gpu.index + " · " + (gpu.name || "unknown");
    f("pstate").textContent = gpu.pstate || "";
    const err = f("error");
    const asleep = gpu.asleep ? "Asleep (runtime suspended): not woken to read it" : "";
    err.hidden = !gpu.error && !asleep;
    err.textContent = gpu.error || asleep;
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
    const extra = Object.entries(gpu.temperatures || {}).filter((e) => e[0] !== "edge")
      .map((e) => e[0] + " " + fmt(e[1], " °C")).join(" · ");
    setValue(f("temp"), gpu.temperature_c === null ? null : fmt(gpu.temperature_c, " °C") +
      (gpu.temperature_slowdown_c ? " (slows at " + fmt(gpu.temperature_slowdown_c, " °C") + ")" : "") +
      (extra ? " · " + extra : ""), why.temperature_c);
    const own = (fans || []).filter((x) => x.gpu_index === gpu.index && x.state !== "dead");
    if (own.length) {
      setValue(f("fan"), own.map(fanText).filter((t, i, all) => all.indexOf(t) === i).join(" / "));
    } else {
      setValue(f("fan"), gpu.fan_speed_percent === null ? null : fmt(gpu.fan_speed_percent, " %") +
        (gpu.fan_rpm ? " · " + rpm(gpu.fan_rpm) : ""), why.fan_speed_percent,
        gpu.passively_cooled ? "passively cooled" : null);
    }
    setValue(f("split"), splitText(ledger), "no power reading");
    f("split").title = ledger ? "Idle baseline: " + IDLE_FROM[ledger.idle_from] +
      (ledger.why_unattributed ? ". Unattributed: " + ledger.why_unattributed : "") +
      (ledger.split_doubt ? ". Split among processes: " + ledger.split_doubt : "") : "";
    setValue(f("clocks"), gpu.clock_sm_mhz === null ? null : "SM " + gpu.clock_sm_mhz + " MHz" +
      (gpu.clock_memory_mhz ? " · mem " + gpu.clock_memory_mhz + " MHz" : ""), why.clock_sm_mhz);
    const reasons = gpu.throttle_reasons;
    setValue(f("throttle"), reasons === null ? null : (reasons.length ? reasons.join(", ") : "none"),
      why.throttle_reasons);
    renderActivity(card, gpu, kinds);
  }

  function renderSystem(host, fans) {
    const live = (fans || []).filter((x) => x.state !== "dead");  // what the Fans panel lists
    const board = live.filter((x) => x.gpu_index === null);
    const dl = $("#system");
    const rows = [
      ["CPU", fmt(host.cpu_percent, " %"), null],
      ["Load", host.load_average ? host.load_average.map((v) => v.toFixed(2)).join(" ") : null,
        (host.unsupported || {}).load_average],
      ["Memory", host.memory_used_bytes === null ? null :
        fmtBytes(host.memory_used_bytes) + " / " + fmtBytes(host.memory_total_bytes), null],
      ["CPU temperature", fmt(host.cpu_temperature_c, " °C"), (host.unsupported || {}).cpu_temperature_c],
      ["FanWhy itself", host.own_cpu_percent === null || host.own_cpu_percent === undefined ? null :
        fmt(host.own_cpu_percent, " % of a core") + (host.own_rss_bytes ? " · " + fmtBytes(host.own_rss_bytes) : ""),
        "not measured"],
      ["Fans", live.length ? live.length + " (see Fans)" + (board.length ? ": " + board.slice(0, 3).map((x) => x.name +
        " " + fanText(x)).join(", ") : "") : null, "no fan exposed by the kernel (hwmon), the GPUs or the BMC"],
    ];
    while (dl.children.length < rows.length * 2) {
      dl.appendChild(document.createElement("dt"));
      dl.appendChild(document.createElement("dd"));
    }
    rows.forEach((row, i) => {
      dl.children[2 * i].textContent = row[0];
      setValue(dl.children[2 * i + 1], row[1], row[2], row[2]);  // the whole reason: this card has the room
    });
  }

  const shortId = (id) => (id && id.length > 12 ? id.slice(0, 12) : id || "");
  const containerLabel = (c) => (c ? (c.name || shortId(c.id)) + (c.runtime ? " (" + c.runtime + ")" : "") : "–");

  // A memory figure that is an estimate says so.
  function memoryText(bytes, method) {
    if (bytes === null || bytes === undefined) return "N/A";
    return method === "inference" ? "≈ " + fmtBytes(bytes) + " (estimate)" : fmtBytes(bytes);
  }

  function row(cells, opts) {
    const tr = document.createElement("tr");
    cells.forEach((cell) => {
      const td = document.createElement("td");
      if (cell.wrap) {  // a name: wraps between its words, and a word too long for the column is clipped, not cut
        const span = document.createElement("span");
        span.className = "name";
        span.textContent = cell.text;
        td.appendChild(span);
      } else {
        td.textContent = keep(cell.text);
      }
      if (cell.title) td.title = cell.title;
      if (cell.cls) td.className = cell.cls;
      tr.appendChild(td);
    });
    Object.assign(tr.dataset, (opts && opts.data) || {});
    if (opts && opts.cls) tr.className = opts.cls;
    if (opts && opts.title) tr.title = opts.title;
    return tr;
  }

  function powerText(watts, wattHours) {
    if (watts === null || watts === undefined) return "–";
    return watts.toFixed(0) + " W" + (wattHours !== null && wattHours !== undefined ? " · " + wattHours.toFixed(2) + " Wh" : "");
  }

  // A sentence whose `commands` become <code> elements; every piece goes in as text, never as HTML.
  function setSentence(el, text) {
    const parts = keep(text).split("`");
    el.replaceChildren(...parts.map((part, i) => {
      if (i % 2 === 0 || i === parts.length - 1) return document.createTextNode(i % 2 ? "`" + part : part);
      const code = document.createElement("code");
      code.textContent = part;
      return code;
    }));
  }

  // The numbers behind a cause, in words with their units (the keys are the verdict's, see app/explain.py).
  const NUMBER_WORDS = {
    utilization_percent: ["utilization", " %"], power_w: ["power", " W"], power_limit_w: ["power limit", " W"],
    temperature_c: ["temperature", " °C"], temperature_slowdown_c: ["slows at", " °C"],
    fan_speed_percent: ["fan", " %"], sm_percent: ["its SM share", " %"], process_power_w: ["its power", " W"],
    process_gpu_memory_bytes: ["its GPU memory", "bytes"], gpu_memory_bytes: ["GPU memory", "bytes"],
    cpu_percent: ["CPU", " %"], cpu_temperature_c: ["CPU temperature", " °C"],
    process_cpu_percent: ["its CPU", " % of a core"], pstate: ["performance state", ""],
    rpm: ["speed", " RPM"], percent: ["duty", " %"], floor_percent: ["floor", " %"], target_rpm: ["target", " RPM"],
    source: ["follows", ""], source_c: ["at", " °C"],
  };
  function numberWords(key, value) {
    if (key === "confidence") return "sure at " + Math.round(value * 100) + " %";
    const [label, unit] = NUMBER_WORDS[key] || [key.replace(/_/g, " "), ""];
    if (unit === "bytes") return label + " " + fmtBytes(value);
    if (unit === " RPM" && typeof value === "number") return label + " " + rpm(value);
    return label + " " + (typeof value === "number" ? Math.round(value * 10) / 10 : value) + unit;
  }

  function renderVerdict(verdict) {
    if (!verdict) return;
    setSentence($("#headline"), verdict.headline);
    $("#verdict").classList.toggle("busy", verdict.busy);
    // how sure FanWhy is of a cause; "Nothing is busy" is no guess
    $("#confidence").textContent = verdict.busy ? "(confidence " + Math.round(verdict.confidence * 100) + "\u00a0%)" : "";
    // the causes add what the headline does not say: the one it already says is not repeated
    const items = verdict.causes.filter((cause) => cause.summary && cause.summary !== verdict.headline &&
      !verdict.headline.startsWith(cause.summary)).map((cause) => {
      const li = document.createElement("li");
      setSentence(li, cause.summary);
      li.dataset.kind = cause.kind;
      const numbers = Object.entries(cause.numbers || {}).filter((e) => e[1] !== null)
        .map((e) => numberWords(e[0], e[1]));
      if (numbers.length) {
        const small = document.createElement("small");
        small.textContent = keep(" (" + numbers.join(", ") + ")");
        li.appendChild(small);
      }
      return li;
    });
    if (!items.length) {
      const li = document.createElement("li");
      li.textContent = verdict.busy ? "Nothing more than the headline says." : "No cause: every GPU and the CPU are idle.";
      items.push(li);
    }
    $("#causes").replaceChildren(...items);
  }

  // Sorting and filtering of the process table survive every update; the sort a user picks survives a reload. With
  // no sort picked, the busiest first by what is busy on this machine: GPU memory where there are GPUs, else CPU.
  const sortValue = {
    pid: (p) => p.pid, user: (p) => (p.user || "").toLowerCase(), name: (p) => (p.program || p.name || "").toLowerCase(),
    container: (p) => (p.container ? p.container.name || p.container.id : ""), memory: (p) => p.gpu_memory_bytes || 0,
    sm: (p) => p.sm_percent || 0, cpu: (p) => p.cpu_percent || 0, power: (p) => p.power_w || 0,
  };
  const SORT_STORE = "fanwhy.processSort";
  const picked = (() => {
    try {
      const saved = JSON.parse(localStorage.getItem(SORT_STORE) || "null");
      return saved && Object.hasOwn(sortValue, saved.key) ? { key: saved.key, descending: !!saved.descending } : null;
    } catch (error) { return null; }
  })();
  const table = { key: picked ? picked.key : null, descending: picked ? picked.descending : true, filter: "", gpu: "all" };
  function sortKey() {
    return table.key || (state.snap && state.snap.gpus && state.snap.gpus.length ? "memory" : "cpu");
  }
  function markSorted() {
    const key = sortKey();
    document.querySelectorAll("#processes th button[data-sort]").forEach((button) => button.parentElement
      .setAttribute("aria-sort", button.dataset.sort === key ? (table.descending ? "descending" : "ascending") : "none"));
  }
  function visibleProcesses(processes) {
    const needle = table.filter.toLowerCase();
    const gpu = table.gpu === "all" ? null : Number(table.gpu);
    const rows = processes.filter((p) => (gpu === null || p.gpus.some((g) => g.gpu_index === gpu)) && (!needle ||
      [p.program, p.name, p.user, p.command, p.container && (p.container.name || p.container.id), String(p.pid)]
        .some((v) => v && v.toLowerCase().includes(needle))));
    const value = sortValue[sortKey()];
    rows.sort((a, b) => {
      const x = value(a), y = value(b);
      const order = x < y ? -1 : x > y ? 1 : 0;
      // ties: the busier on the CPU first, then the lower PID, whichever way the column sorts
      return (table.descending ? -order : order) || (b.cpu_percent || 0) - (a.cpu_percent || 0) || a.pid - b.pid;
    });
    markSorted();
    return rows;
  }
  document.querySelectorAll("#processes th button[data-sort]").forEach((button) => {
    button.addEventListener("click", () => {
      const key = button.dataset.sort;
      table.descending = sortKey() === key ? !table.descending : !["pid", "user", "name", "container"].includes(key);
      table.key = key;
      try { localStorage.setItem(SORT_STORE, JSON.stringify({ key, descending: table.descending })); } catch (error) { /* private mode */ }
      markSorted();
      if (state.snap) render(state.snap);
    });
  });
  $("#proc-filter").addEventListener("input", (event) => {
    table.filter = event.target.value;
    if (state.snap) render(state.snap);
  });
  $("#gpu-filter").addEventListener("change", (event) => {
    table.gpu = event.target.value;
    if (state.snap) render(state.snap);
  });

  function renderProcesses(allProcesses, unattributed) {
    const processes = visibleProcesses(allProcesses);
    const rows = processes.map((p) => {
      const estimate = p.gpus.some((g) => g.memory_method === "inference");
      const seenAs = p.visibility === "visible" ? "visible" :
        p.visibility + (p.status === "outside-namespace" ? " (another PID namespace)" : "");
      return row([
        { text: String(p.pid) + (p.namespace_pid ? " (" + p.namespace_pid + " inside)" : "") },
        { text: p.user || "?" },
        { text: (p.program || p.name || "?") + (p.status !== "ok" && p.status !== "outside-namespace" ? " (" + p.status + ")" : ""),
          title: (p.program || p.name || "") + (p.name && p.program && p.program !== p.name ? " (process name: " + p.name + ")" : ""),
          wrap: true },
        { text: containerLabel(p.container), title: p.container ? p.container.id + (p.container.image ? " · " + p.container.image : "") : (p.unit || "") },
        { text: p.gpus.length ? p.gpus.map((g) => String(g.gpu_index)).join(", ") : "–" },
        { text: p.gpus.length ? memoryText(p.gpu_memory_bytes, estimate ? "inference" : "reported") : "–" },
        { text: p.sm_percent === null ? (p.gpus.length ? "N/A" : "–") : p.sm_percent.toFixed(0) },
        { text: p.cpu_percent === null ? "…" : p.cpu_percent.toFixed(0) },
        { text: powerText(p.power_w, p.energy_wh), title: "its SM share of the GPU's power; energy since FanWhy started" },
        { text: seenAs },
        { text: p.command || "", title: p.command || "", cls: "cmd" },
      ], { data: { pid: String(p.pid) }, cls: p.status !== "ok" ? "status-" + p.status : "" });
    });
    (unattributed || []).forEach((u) => {
      if (!u.memory_bytes || u.memory_bytes < UNATTRIBUTED_FLOOR_BYTES) return;
      if (table.gpu !== "all" && Number(table.gpu) !== u.gpu_index) return;
      rows.push(row([
        { text: "–" }, { text: "–" }, { text: "unattributed" }, { text: "–" },
        { text: String(u.gpu_index) },
        { text: fmtBytes(u.memory_bytes) },
        { text: u.sm_percent === null ? "N/A" : u.sm_percent.toFixed(0) },
        { text: "–" }, { text: powerText(u.power_w, null) }, { text: "nobody visible" }, { text: u.reason, cls: "cmd" },
      ], { data: { unattributedGpu: String(u.gpu_index) }, cls: "unattributed", title: u.reason }));
    });
    $("#processes tbody").replaceChildren(...rows);
    // "Seen as" says something only when a process is not plainly visible (host PID only, another namespace)
    $("#processes").classList.toggle("all-visible", processes.every((p) => p.visibility === "visible"));
  }

  function renderContainers(containers) {
    const rows = containers.map((c) => row([
      { text: c.container.name || shortId(c.container.id), title: c.container.id },
      { text: c.container.runtime },
      { text: c.container.image || "–" },
      { text: c.container.pod ? (c.container.namespace ? c.container.namespace + "/" : "") + c.container.pod : "–" },
      { text: c.gpu_indices.length ? c.gpu_indices.join(", ") : "–" },
      { text: memoryText(c.gpu_memory_bytes, c.memory_method) },
      { text: c.sm_percent === null ? "N/A" : c.sm_percent.toFixed(0) },
      { text: c.cpu_percent === null ? "…" : c.cpu_percent.toFixed(0) },
      { text: powerText(c.power_w, c.energy_wh) },
      { text: c.pids.length ? c.pids.join(", ") : "no visible process" },
    ], { data: { container: c.container.id } }));
    if (!rows.length) rows.push(row([{ text: "No container uses a GPU." }]));
    $("#containers tbody").replaceChildren(...rows);
  }

  // Kubernetes: the processes grouped by the pod their cgroup places them in (named when the API answers).
  function renderPods(processes) {
    const pods = new Map();
    processes.forEach((p) => {
      const c = p.container;
      if (!c || !(c.pod || c.pod_uid)) return;
      const key = (c.namespace || "") + "/" + (c.pod || c.pod_uid);
      const pod = pods.get(key) || { namespace: c.namespace, pod: c.pod || c.pod_uid, uid: c.pod_uid,
        containers: new Set(), pids: [], memory: 0, sm: 0, cpu: 0, power: 0 };
      pod.containers.add(c.name || shortId(c.id));
      pod.pids.push(p.pid);
      pod.memory += p.gpu_memory_bytes || 0;
      pod.sm += p.sm_percent || 0;
      pod.cpu += p.cpu_percent || 0;
      pod.power += p.power_w || 0;
      pods.set(key, pod);
    });
    $("#tab-pods").hidden = pods.size === 0;
    const rows = [...pods.values()].sort((a, b) => b.memory - a.memory || b.sm - a.sm).map((pod) => row([
      { text: pod.namespace || "–" }, { text: pod.pod, title: pod.uid || "" },
      { text: [...pod.containers].sort().join(", ") }, { text: fmtBytes(pod.memory) }, { text: pod.sm.toFixed(0) },
      { text: pod.cpu.toFixed(0) }, { text: powerText(pod.power, null) }, { text: pod.pids.sort((a, b) => a - b).join(", ") },
    ], { data: { pod: pod.uid || pod.pod } }));
    $("#pods tbody").replaceChildren(...rows);
  }

  function selectTab(which) {
    ["processes", "containers", "pods"].forEach((name) => {
      const active = name === which;
      $("#tab-" + name).setAttribute("aria-selected", String(active));
      $("#" + name + "-view").hidden = !active;
    });
  }
  $("#tab-processes").addEventListener("click", () => selectTab("processes"));
  $("#tab-containers").addEventListener("click", () => selectTab("containers"));
  $("#tab-pods").addEventListener("click", () => selectTab("pods"));

  // An alert is shown once, whether it arrives as an event or is already firing when the page opens.
  const shownAlerts = new Set();
  function alertToast(alert) {
    const key = alert.id + ":" + alert.state;
    if (shownAlerts.has(key)) return;
    shownAlerts.add(key);
    const target = alert.rule === "new_process" && alert.value !== null ? '#processes tr[data-pid="' + alert.value + '"]' :
      (alert.gpu_index !== null && alert.gpu_index !== undefined ? 'article.gpu[data-gpu="' + alert.gpu_index + '"]' : null);
    toast(alert.state === "resolved" ? "ok" : alert.severity || "warning", alert.message, target);
    backgroundNotice(alert);
  }

  // A browser notification for an alert while this tab is in the background, once the user asked for them
  // (the permission is requested only by a click on #notify-button, never on its own).
  function backgroundNotice(alert) {
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    if (document.visibilityState === "visible" || alert.rule === "new_process") return;
    const title = alert.state === "resolved" ? "FanWhy: resolved" : "FanWhy: " + (alert.severity || "alert");
    const notice = new Notification(title, { body: alert.message, tag: alert.id + ":" + alert.state });
    notice.onclick = () => { window.focus(); notice.close(); };
  }

  function syncNotifyButton() {
    const button = $("#notify-button");
    if (!("Notification" in window)) return;
    button.hidden = false;
    const permission = Notification.permission;
    button.disabled = permission !== "default";
    button.textContent = permission === "granted" ? "Background alerts on" :
      permission === "denied" ? "Alerts blocked by the browser" : "Alert me in the background";
  }
  $("#notify-button").addEventListener("click", async () => {
    await Notification.requestPermission();
    syncNotifyButton();
  });
  syncNotifyButton();

  // The title and the favicon show the hottest GPU, so a background tab still answers the question.
  function renderTitle(snap) {
    const temps = snap.gpus.filter((g) => g.temperature_c !== null && !g.error);
    const hottest = temps.sort((a, b) => b.temperature_c - a.temperature_c)[0];
    document.title = hottest ? Math.round(hottest.temperature_c) + " °C GPU " + hottest.index + " · FanWhy" : "FanWhy";
    const t = hottest ? hottest.temperature_c : (snap.host.cpu_temperature_c || 30);
    const color = t >= 80 ? "#dc2626" : t >= 65 ? "#f59e0b" : "#16a34a";
    const svg = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><circle cx='8' cy='8' r='7' fill='" +
      color + "'/></svg>";
    const link = document.querySelector("link[rel=icon]");
    const href = "data:image/svg+xml," + encodeURIComponent(svg);
    if (link.getAttribute("href") !== href) link.setAttribute("href", href);
  }

  function syncGpuFilter(snap) {
    const select = $("#gpu-filter");
    const wanted = snap.gpus.map((g) => String(g.index)).join(",");
    if (select.dataset.gpus === wanted) return;
    select.dataset.gpus = wanted;
    const options = [["all", "all GPUs"]].concat(snap.gpus.map((g) => [String(g.index), "GPU " + g.index]));
    select.replaceChildren(...options.map(([value, text]) => {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = text;
      return option;
    }));
    if (!options.some((o) => o[0] === table.gpu)) table.gpu = "all";
    select.value = table.gpu;
  }

  function render(snap) {
    state.snap = snap;
    syncGpuFilter(snap);
    renderTitle(snap);
    if (snap.timestamp !== state.lastTimestamp) state.lastReceived = Date.now();  // new data, not a repeat
    state.lastTimestamp = snap.timestamp;
    (snap.alerts || []).forEach(alertToast);
    renderVerdict(snap.verdict);
    $("#backend").textContent = "backend: " + snap.backend.name;
    $("#host").textContent = snap.host.hostname;
    const noGpu = $("#no-gpu");
    noGpu.hidden = snap.gpus.length > 0;
    document.body.classList.toggle("no-gpu", !snap.gpus.length);
    if (!snap.gpus.length) {
      $("#no-gpu-summary").textContent = (snap.backend.no_gpu_summary || "No GPU found.") +
        " Showing the CPU side: it may be the CPU's fan.";
      $("#no-gpu-reason").textContent = snap.backend.no_gpu_reason || "";
    }
    const errors = $("#errors");
    errors.hidden = !snap.errors.length;
    errors.textContent = snap.errors.join(" · ");
    const seen = new Set();
    snap.gpus.forEach((gpu) => {
      renderGpu(gpu, snap.fans, (snap.ledger || []).find((l) => l.gpu_index === gpu.index),
        snap.verdict ? snap.verdict.busy_kinds : []);
      seen.add(gpu.uuid || "index-" + gpu.index);
      gpuCard(gpu).hidden = table.gpu !== "all" && Number(table.gpu) !== gpu.index;
    });
    for (const [key, card] of cards) {
      if (!seen.has(key)) { card.remove(); cards.delete(key); }
    }
    renderSystem(snap.host, snap.fans);
    renderProcesses(snap.processes, snap.unattributed);
    renderContainers(snap.containers || []);
    renderPods(snap.processes);
    $("#updated").textContent = new Date(snap.timestamp * 1000).toLocaleTimeString();
    $("#timing").textContent = snap.timing.total_ms.toFixed(1) + " ms, tick " + snap.timing.tick;
    document.dispatchEvent(new CustomEvent("fanwhy:snapshot", { detail: snap }));
  }

  // A toast says what happened and, when clicked, shows the GPU or the process it is about.
  function toast(kind, text, target) {
    const el = document.createElement(target ? "button" : "div");
    if (target) el.type = "button";
    el.className = "toast toast-" + kind;
    el.setAttribute("role", "alert");
    el.textContent = text;
    if (target) {
      el.title = "show it";
      el.addEventListener("click", () => {
        const node = document.querySelector(target);
        if (node) { node.scrollIntoView({ block: "center" }); node.classList.add("flash"); setTimeout(() => node.classList.remove("flash"), 1500); }
        el.remove();
      });
    }
    $("#toasts").appendChild(el);
    setTimeout(() => el.remove(), kind === "critical" ? 20000 : 8000);
  }

  // Data that stops arriving is flagged, whatever the socket says (a hung GPU call, a stalled collector).
  setInterval(() => {
    if (!state.lastReceived) return;
    const age = (Date.now() - state.lastReceived) / 1000;  // the browser's own clock: no skew with the server
    const interval = Number(document.body.dataset.interval) || 1;
    const offline = document.body.classList.contains("offline");
    const stale = offline || age > Math.max(3, 3 * interval);
    document.body.classList.toggle("stale", stale);
    const el = $("#stale");
    el.hidden = !stale;
    el.textContent = !stale ? "" : offline ? "Not live: the server is unreachable; what is shown is " + Math.round(age) +
      "\u00a0s old." : "The data is " + Math.round(age) + "\u00a0s old: the GPU backend or the collector is not answering.";
  }, 1000);

  // under the page's own path: behind a proxy at /fanwhy/ that is /fanwhy/socket.io
  const socket = io({ path: new URL("socket.io", document.baseURI).pathname, transports: ["websocket", "polling"] });
  socket.on("connect", () => setConnection("live", "ok"));
  socket.on("disconnect", (reason) => {
    if (reason === "io server disconnect") {  // the server closed this page's session (it was full): no retry
      setConnection("closed by the server (too many open pages); reload to reconnect", "bad");
    } else {
      setConnection("reconnecting…", "wait");
    }
  });
  socket.on("connect_error", () => setConnection("server unreachable, retrying…", "bad"));
  socket.io.on("reconnect", () => socket.emit("request_gpu_update"));
  socket.on("gpu_status", render);
  socket.on("gpu_status_update", render);
  socket.on("high_gpu_usage_alert", alertToast);
  socket.on("alert", alertToast);
  socket.on("alert_resolved", alertToast);
  window.fanwhy = { socket: socket, state: state, fmtBytes: fmtBytes, setSentence: setSentence, fanText: fanText,
    rpm: rpm, keep: keep };
})();
