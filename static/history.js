// FanWhy history: uPlot charts fed by /api/gpu/history and extended live from each pushed snapshot,
// "while you were away", and recordings. Every untrusted string goes in through textContent.
(function () {
  "use strict";

  const $ = (sel) => document.querySelector(sel);
  const GPU_METRICS = ["utilization_percent", "memory_percent", "temperature_c", "power_w"];
  // The activity counters charted together (app/store/schema.py keeps them per GPU).
  const ACTIVITY_METRICS = [["sm_active_percent", "SM active"], ["tensor_percent", "tensor"], ["fp32_percent", "FP32"],
    ["dram_percent", "DRAM"]];
  // Without a GPU the host's series are charted instead (app/history.py HOST_METRICS).
  const HOST_METRICS = ["cpu_percent", "load1", "memory_percent", "cpu_temperature_c", "fan_rpm"];
  // fan_rpm: the loudest fan of the board, as app/store/rows.py stores it
  const boardRpm = (fans) => {
    const rpms = (fans || []).filter((f) => f.rpm !== null && f.state !== "dead" && f.gpu_index === null &&
      f.chip !== "bmc").map((f) => f.rpm);
    return rpms.length ? Math.max(...rpms) : null;
  };
  const HOST_LIVE = { cpu_percent: (h) => h.cpu_percent, load1: (h) => (h.load_average ? h.load_average[0] : null),
    memory_percent: (h) => (h.memory_total_bytes ? 100 * h.memory_used_bytes / h.memory_total_bytes : null),
    cpu_temperature_c: (h) => h.cpu_temperature_c, fan_rpm: (h, s) => boardRpm(s && s.fans) };
  const COLORS = ["#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2"];
  const state = { gpu: 0, range: 900, charts: {}, rules: null, latest: null, procTimer: null, recording: null,
    host: false };

  // The x-axis spans the chosen range, ending now, however few points there are.
  function xRange() {
    const end = state.latest ? state.latest.timestamp : Date.now() / 1000;
    return [end - state.range, end];
  }

  async function getJSON(url, options) {
    const response = await fetch(url, Object.assign({ credentials: "same-origin" }, options || {}));
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  function status(text) {
    const el = $("#history-status");
    el.hidden = !text;
    el.textContent = text || "";
  }

  // The alert threshold of a metric for the selected GPU, drawn as a dashed line.
  function threshold(metric) {
    const rules = state.rules || {};
    const gpu = state.latest && state.latest.gpus.find((g) => g.index === state.gpu);
    if (metric === "utilization_percent" && rules.gpu_utilization) return rules.gpu_utilization.threshold;
    if (metric === "memory_percent" && rules.memory) return rules.memory.threshold;
    if (metric === "temperature_c" && rules.temperature) return rules.temperature.threshold;
    if (metric === "power_w" && rules.power && gpu && gpu.power_limit_w) return rules.power.threshold / 100 * gpu.power_limit_w;
    return null;
  }

  function thresholdPlugin(value) {
    return {
      hooks: {
        draw: [(u) => {
          if (value === null || value === undefined) return;
          const y = u.valToPos(value, "y", true);
          if (!isFinite(y)) return;
          const ctx = u.ctx;
          ctx.save();
          ctx.strokeStyle = "#b91c1c";
          ctx.setLineDash([6, 4]);
          ctx.lineWidth = 1.5;
          ctx.beginPath();
          ctx.moveTo(u.bbox.left, y);
          ctx.lineTo(u.bbox.left + u.bbox.width, y);
          ctx.stroke();
          ctx.restore();
        }],
      },
    };
  }

  function chart(id, labels, data, limit, stacked) {
    const el = document.getElementById(id);
    if (state.charts[id]) state.charts[id].destroy();
    el.replaceChildren();
    const width = Math.max(240, el.clientWidth || 320);
    const series = [{}].concat(labels.map((label, i) => ({
      label: label, stroke: COLORS[i % COLORS.length], width: 1.5,
      fill: stacked ? COLORS[i % COLORS.length] + "55" : undefined, spanGaps: false,
    })));
    const opts = {
      width: width, height: 170, series: series, legend: { show: stacked || labels.length > 1 },  // stacked: whose band
      scales: { x: { time: true, range: () => xRange() }, y: { range: (u, min, max) => [Math.min(0, min), Math.max(max, limit || 0) * 1.05 || 1] } },
      axes: [{ stroke: "#888" }, { stroke: "#888", size: 50 }],
      plugins: [thresholdPlugin(limit)],
    };
    state.charts[id] = new uPlot(opts, data, el);
    return state.charts[id];
  }

  async function loadHostCharts() {
    const since = "-" + state.range + "s";
    try {
      const results = await Promise.all(HOST_METRICS.map((metric) =>
        getJSON("api/gpu/history?host=1&metric=" + metric + "&since=" + since)));
      results.forEach((body, i) => {
        const metric = HOST_METRICS[i];
        const limit = metric === "cpu_percent" || metric === "memory_percent" ? 100 : null;
        const c = chart("chart-host-" + metric, [metric], [body.points.map((p) => p[0]), body.points.map((p) => p[1])],
          null, false);
        c.fanwhyLive = body.source === "raw";
        c.fanwhyGap = body.gap_s;
        if (limit) c.setScale("y", { min: 0, max: limit });
        // a sensor this machine does not have (no hwmon temperature, no fan): no empty chart for it
        const figure = document.getElementById("chart-host-" + metric).closest("figure");
        figure.hidden = !body.points.some((p) => p[1] !== null) &&
          HOST_LIVE[metric](state.latest.host, state.latest) === null;
      });
      status(results[0].points.length ? "" : "No history for this range yet: points appear as they are collected.");
    } catch (error) {
      status("History unavailable: " + error.message);
    }
  }

  function loadCharts() {
    document.querySelectorAll(".charts figure").forEach((figure) => {
      figure.hidden = figure.dataset.for !== (state.host ? "host" : "gpu");
    });
    if (state.host) return loadHostCharts();
    loadProcessCharts();
    loadActivityChart();
    return loadGpuCharts();
  }

  async function loadGpuCharts() {
    const since = "-" + state.range + "s";
    try {
      const results = await Promise.all(GPU_METRICS.map((metric) =>
        getJSON("api/gpu/history?gpu=" + state.gpu + "&metric=" + metric + "&since=" + since)));
      results.forEach((body, i) => {
        const metric = GPU_METRICS[i];
        const xs = body.points.map((p) => p[0]);
        const ys = body.points.map((p) => p[1]);
        const c = chart("chart-" + metric, [metric], [xs, ys], threshold(metric), false);
        c.fanwhyLive = body.source === "raw";
        c.fanwhyGap = body.gap_s;
      });
      status(results[0].points.length ? "" : "No history for this range yet: points appear as they are collected.");
    } catch (error) {
      status("History unavailable: " + error.message);
    }
  }

  // The GPU's activity counters (NVML GPM) in one chart of four lines, 0-100 %; hidden where the GPU has none.
  async function loadActivityChart() {
    const since = "-" + state.range + "s";
    try {
      const bodies = await Promise.all(ACTIVITY_METRICS.map((m) =>
        getJSON("api/gpu/history?gpu=" + state.gpu + "&metric=" + m[0] + "&since=" + since)));
      const times = Array.from(new Set([].concat(...bodies.map((b) => b.points.map((p) => p[0])))))
        .sort((a, b) => a - b);
      const columns = bodies.map((b) => {
        const byTime = new Map(b.points.map((p) => [p[0], p[1]]));
        return times.map((t) => (byTime.has(t) ? byTime.get(t) : null));
      });
      const c = chart("chart-activity", ACTIVITY_METRICS.map((m) => m[1]), [times].concat(columns), null, false);
      c.fanwhyLive = bodies[0].source === "raw";
      c.fanwhyGap = bodies[0].gap_s;
      c.setScale("y", { min: 0, max: 100 });
      const gpu = state.latest && state.latest.gpus.find((g) => g.index === state.gpu);
      document.getElementById("chart-activity").closest("figure").hidden =
        !columns.some((column) => column.some((v) => v !== null)) && !(gpu && gpu.activity);
    } catch (error) {
      status("Activity history unavailable: " + error.message);
    }
  }

  // Stacked per-process SM % and memory for the busiest processes on the GPU now.
  async function loadProcessCharts() {
    const snap = state.latest;
    if (!snap) return;
    const procs = snap.processes.filter((p) => p.gpus.some((g) => g.gpu_index === state.gpu))
      .sort((a, b) => (b.sm_percent || 0) - (a.sm_percent || 0)).slice(0, 5);
    const since = "-" + state.range + "s";
    try {
      const fetchAll = (metric) => Promise.all(procs.map((p) =>
        getJSON("api/gpu/history?pid=" + p.pid + "&metric=" + metric + "&since=" + since)));
      const [sm, mem] = await Promise.all([fetchAll("sm_percent"), fetchAll("gpu_memory_bytes")]);
      const labels = procs.map((p) => (p.program || p.name || "PID " + p.pid) + " (" + p.pid + ")");
      chart("chart-proc-sm", labels.length ? labels : ["none"], stack(sm, 1), null, true);
      chart("chart-proc-mem", labels.length ? labels : ["none"], stack(mem, 1 / (1 << 30)), null, true);
    } catch (error) {
      status("Process history unavailable: " + error.message);
    }
  }

  // Align several series on the union of their timestamps and add them up, each on top of the last.
  function stack(bodies, scale) {
    const times = Array.from(new Set([].concat(...bodies.map((b) => b.points.map((p) => p[0]))))).sort((a, b) => a - b);
    if (!bodies.length) return [times, []];
    const columns = bodies.map((b) => {
      const byTime = new Map(b.points.map((p) => [p[0], p[1] === null ? 0 : p[1] * scale]));
      return times.map((t) => byTime.get(t) || 0);
    });
    for (let i = 1; i < columns.length; i++) columns[i] = columns[i].map((v, j) => v + columns[i - 1][j]);
    return [times].concat(columns);
  }

  // A pushed snapshot extends the live charts without refetching.
  function appendLive(snap) {
    const oldest = snap.timestamp - state.range;
    const extend = (id, ...values) => {  // a value for each line of the chart
      const c = state.charts[id];
      if (!c || !c.fanwhyLive) return;
      const columns = c.data.map((column) => column.slice());
      const xs = columns[0];
      const last = xs.length ? xs[xs.length - 1] : null;
      if (last !== null && c.fanwhyGap && snap.timestamp - last > c.fanwhyGap) {  // no sample since: a gap, not a slope
        xs.push(last + (snap.timestamp - last) / 2);
        columns.slice(1).forEach((ys) => ys.push(null));
      }
      xs.push(snap.timestamp);
      columns.slice(1).forEach((ys, i) => ys.push(values[i] === undefined ? null : values[i]));
      let cut = 0;
      while (cut < xs.length && xs[cut] < oldest) cut++;
      c.setData(columns.map((column) => column.slice(cut)));
    };
    if (state.host) {
      HOST_METRICS.forEach((metric) => extend("chart-host-" + metric, HOST_LIVE[metric](snap.host, snap)));
      return;
    }
    const gpu = snap.gpus.find((g) => g.index === state.gpu);
    if (gpu) GPU_METRICS.forEach((metric) => extend("chart-" + metric, gpu[metric]));
    if (gpu) extend("chart-activity", ...ACTIVITY_METRICS.map((m) => (gpu.activity ? gpu.activity[m[0]] : null)));
  }

  function syncGpuChoices(snap) {
    const select = $("#history-gpu");
    const wanted = snap.gpus.map((g) => String(g.index)).join(",");
    if (select.dataset.gpus === wanted) return;
    select.dataset.gpus = wanted;
    select.replaceChildren(...snap.gpus.map((g) => {
      const option = document.createElement("option");
      option.value = String(g.index);
      option.textContent = "GPU " + g.index + " · " + (g.name || "unknown");
      return option;
    }));
    if (!snap.gpus.some((g) => g.index === state.gpu) && snap.gpus.length) state.gpu = snap.gpus[0].index;
    select.value = String(state.gpu);
  }

  function fmtDuration(seconds) {
    if (seconds < 90) return Math.round(seconds) + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    return (seconds / 3600).toFixed(1) + " h";
  }

  async function loadAway() {
    try {
      const body = await getJSON("api/history/away?since=" + encodeURIComponent($("#away-window").value));
      const items = body.causes.map((c) => {
        const li = document.createElement("li");
        const peak = c.peak === null || c.peak === undefined ? "" : " (peak " + Math.round(c.peak) + " " + c.unit + ")";
        window.fanwhy.setSentence(li, fmtDuration(c.seconds) + ": " + (c.sentence || c.headline) + peak);
        li.title = c.headline;  // the last verdict of that cause, with its numbers
        return li;
      });
      if (!items.length) {
        const li = document.createElement("li");
        li.textContent = "Nothing recorded in this window yet.";
        items.push(li);
      }
      $("#away-causes").replaceChildren(...items);
      $("#away-top").textContent = body.top_processes.length ? "Most GPU energy: " + body.top_processes.map((p) =>
        (p.name || "PID " + p.pid) + (p.user ? " (" + p.user + ")" : "") + " " + p.energy_wh.toFixed(2) + "\u00a0Wh").join(", ") : "";
    } catch (error) {
      $("#away-top").textContent = "Unavailable: " + error.message;
    }
  }

  function statsText(stats) {
    if (!stats) return "";
    return Object.entries(stats).map(([gpu, s]) => (gpu === "-1" ? "host" : "GPU " + gpu) + ": " +
      [s.utilization_percent.min, s.utilization_percent.mean, s.utilization_percent.max].map((v) => v === null ? "?" : Math.round(v)).join(" / ") + " %, " +
      window.fanwhy.fmtBytes(s.memory_used_bytes.max) + ", " +
      (s.temperature_c.max === null ? "?" : Math.round(s.temperature_c.max) + " °C") + ", " +
      (s.power_w.mean === null ? "?" : Math.round(s.power_w.mean) + " W")).join(" · ");
  }

  // The receipt: the job's energy with the card's idle apart, throttled seconds, XIDs, fans above their floor.
  function receiptText(receipt) {
    if (!receipt) return "";
    const throttled = Object.values(receipt.gpus || {}).reduce((sum, g) =>
      sum + Object.values(g.throttled_s || {}).reduce((a, b) => a + b, 0), 0);
    const xid = [].concat(...Object.values(receipt.gpus || {}).map((g) => g.xid || []));
    return receipt.energy_wh.toFixed(2) + " Wh (idle " + receipt.idle_wh.toFixed(2) + " Wh apart)" +
      (throttled ? ", throttled " + Math.round(throttled) + " s" : "") + (xid.length ? ", XID " + xid.join(", ") : "") +
      (receipt.fans_above_floor_s === null ? "" : ", fans above floor " + Math.round(receipt.fans_above_floor_s) + " s");
  }

  function emptyRow(text) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 6;
    td.className = "empty";
    td.textContent = text;
    tr.appendChild(td);
    return tr;
  }

  async function loadRecordings() {
    try {
      const body = await getJSON("api/recordings?limit=20");
      const rows = body.recordings.map((r) => {
        const tr = document.createElement("tr");
        tr.dataset.recording = r.id;
        [r.label || "(no label)", r.state, fmtDuration(r.duration_s), String(r.sample_count), statsText(r.gpu_stats),
          receiptText(r.receipt)]
          .forEach((text) => { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); });
        return tr;
      });
      if (!rows.length) rows.push(emptyRow("No recordings yet: start one above, or wrap a job in `fanwhy run -- COMMAND`."));
      $("#recordings tbody").replaceChildren(...rows);
    } catch (error) {
      $("#recordings tbody").replaceChildren(emptyRow("Recordings are unavailable: " + error.message));
    }
  }

  $("#rec-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const rec = await getJSON("api/recordings", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ label: $("#rec-label").value }) });
      state.recording = rec.id;
      $("#rec-start").disabled = true;
      $("#rec-stop").disabled = false;
      loadRecordings();
    } catch (error) {
      status("Could not start a recording: " + error.message);
    }
  });
  $("#rec-stop").addEventListener("click", async () => {
    if (!state.recording) return;
    try {
      await getJSON("api/recordings/" + encodeURIComponent(state.recording) + "/stop", { method: "POST" });
    } finally {
      state.recording = null;
      $("#rec-start").disabled = false;
      $("#rec-stop").disabled = true;
      loadRecordings();
    }
  });

  document.querySelectorAll("#ranges button").forEach((button) => button.addEventListener("click", () => {
    state.range = Number(button.dataset.range);
    document.querySelectorAll("#ranges button").forEach((b) => b.setAttribute("aria-pressed", String(b === button)));
    loadCharts();
  }));
  $("#history-gpu").addEventListener("change", (event) => {
    state.gpu = Number(event.target.value);
    loadCharts();
  });
  $("#away-window").addEventListener("change", loadAway);

  let started = false;
  document.addEventListener("fanwhy:snapshot", async (event) => {
    const snap = event.detail;
    state.latest = snap;
    syncGpuChoices(snap);
    const host = !snap.gpus.length;
    if (!started || host !== state.host) {  // first snapshot, or GPUs appeared or went away
      started = true;
      state.host = host;
      try { state.rules = (await getJSON("api/alerts?limit=1")).rules; } catch (error) { state.rules = {}; }
      await loadCharts();
      loadAway();
      loadRecordings();
      clearInterval(state.procTimer);
      state.procTimer = setInterval(() => { if (!state.host) loadProcessCharts(); loadAway(); loadRecordings(); },
        30000);
      return;
    }
    appendLive(snap);
  });
  window.fanwhyHistory = state;
})();
