// FanWhy fans: every fan of the pushed snapshot (speed against its floor, state, what it follows and who controls
// it), and a chart of one fan's speed against the temperature it follows with its curve. Untrusted names (labels,
// chips, sensors) go in through textContent.
(function () {
  "use strict";

  const $ = (sel) => document.querySelector(sel);
  const state = { fan: null, chart: null, loadedAt: 0, latest: null };
  const HOW = { declared: "declared", design: "by design", learned: "learned", named: "by its name" };

  function cell(text, title, cls) {
    const td = document.createElement("td");
    td.textContent = window.fanwhy.keep(text);
    if (title) td.title = title;
    if (cls) td.className = cls;
    return td;
  }

  // A fan's bar: its duty out of 100 %, or its RPM against its range (max_rpm) or, with only a floor known, against
  // the floor (the floor sits at two fifths of the bar); none when nothing gives the RPM a scale (no empty bar).
  function meterOf(fan) {
    const meter = document.createElement("meter");
    meter.min = 0;
    if (fan.percent !== null) {
      meter.max = 100;
      meter.value = Math.max(0, Math.min(100, fan.percent));
      meter.low = (fan.floor_percent || 0) + 3;
      meter.high = 90;
      meter.optimum = fan.floor_percent || 0;
      return meter;
    }
    const top = fan.max_rpm || (fan.floor_rpm ? 2.5 * fan.floor_rpm : null);
    if (fan.rpm === null || !top) return null;
    meter.max = Math.max(top, fan.rpm);
    meter.value = fan.rpm;
    meter.low = fan.floor_rpm ? fan.floor_rpm * 1.05 : meter.max * 0.3;
    meter.high = meter.max * 0.9;
    meter.optimum = fan.floor_rpm || 0;
    meter.title = fan.max_rpm ? "against its maximum, " + window.fanwhy.rpm(fan.max_rpm) : "against its floor, " +
      window.fanwhy.rpm(fan.floor_rpm);
    return meter;
  }

  // "65 % · floor 30 %" with its bar; a fan at rest is "stopped (fan-stop)", never beside a floor it is below
  function speedCell(fan) {
    const td = document.createElement("td");
    const meter = meterOf(fan);
    const span = document.createElement("span");
    const floorText = fan.floor_percent ? " · floor " + fan.floor_percent.toFixed(0) + " %" :
      fan.floor_rpm ? " · floor " + window.fanwhy.rpm(fan.floor_rpm) : "";
    const quiet = fan.state === "floor" || fan.state === "stopped";
    span.textContent = window.fanwhy.keep(" " + window.fanwhy.fanText(fan) + (quiet ? "" : floorText));
    if (meter) td.append(meter);
    td.append(span);
    return td;
  }

  function follows(fan) {
    if (!fan.source) return "not known yet (learned after a few minutes of history)";
    const at = fan.source_c !== null && fan.source_c !== undefined ? " at " + fan.source_c.toFixed(0) + " °C" : "";
    const sure = fan.source_from === "learned" && fan.confidence !== null ? ", " + Math.round(100 * fan.confidence) + " % sure" : "";
    return fan.source + at + " (" + (HOW[fan.source_from] || "?") + sure + ")";
  }

  function render(snap) {
    state.latest = snap;
    const fans = snap.fans || [];
    const live = fans.filter((f) => f.state !== "dead");
    const dead = fans.filter((f) => f.state === "dead");
    $("#fans-section").hidden = !fans.length && !(snap.air || []).length;
    const body = $("#fans tbody");
    body.replaceChildren(...live.map((fan) => {
      const tr = document.createElement("tr");
      tr.dataset.fan = fan.id;
      tr.append(cell(fan.name, fan.id), speedCell(fan),
        cell(fan.state, fan.alarm || "", "fan-state fan-" + fan.state), cell(follows(fan)),
        cell(fan.controller || fan.control, fan.cools ? "cools " + fan.cools : ""));
      return tr;
    }));
    $("#fans-dead").hidden = !dead.length;
    $("#fans-dead-summary").textContent = dead.length + " channel" + (dead.length === 1 ? "" : "s") +
      " left out (not fans)";
    $("#fans-dead-list").replaceChildren(...dead.map((fan) => {
      const li = document.createElement("li");
      li.textContent = fan.name + ": " + fan.dead;
      return li;
    }));
    $("#fans-air").textContent = (snap.air || []).length ? "Air (BMC): " + snap.air.map((a) =>
      a.label + " " + a.temperature_c.toFixed(0) + " °C").join(", ") : "";
    syncPick(live);
    if (Date.now() - state.loadedAt > 15000) loadChart();
  }

  function syncPick(live) {
    const select = $("#fan-pick");
    const wanted = live.map((f) => f.id).join("|");
    if (select.dataset.fans !== wanted) {
      select.dataset.fans = wanted;
      select.replaceChildren(...live.map((fan) => {
        const option = document.createElement("option");
        option.value = fan.id;
        option.textContent = fan.name;
        return option;
      }));
    }
    if (!live.some((f) => f.id === state.fan)) {
      const loudest = live.slice().sort((a, b) => (b.percent || 0) - (a.percent || 0))[0];
      state.fan = loudest ? loudest.id : null;
      state.loadedAt = 0;
    }
    if (state.fan) select.value = state.fan;
  }

  async function series(fan, metric) {
    const response = await fetch("api/gpu/history?fan=" + encodeURIComponent(fan) + "&metric=" + metric +
      "&since=-30m", { credentials: "same-origin" });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body.points;
  }

  // Speed (y) against source temperature (x): the points of the last half hour, and the fitted or declared curve.
  async function loadChart() {
    state.loadedAt = Date.now();
    const fan = (state.latest && state.latest.fans || []).find((f) => f.id === state.fan);
    const el = document.getElementById("chart-fan");
    if (!fan) { el.replaceChildren(); return; }
    const metric = fan.percent !== null ? "percent" : "rpm";
    let speeds = [], temps = [];
    try {
      [speeds, temps] = await Promise.all([series(fan.id, metric), series(fan.id, "source_c")]);
      if (state.fan !== fan.id) return;  // another fan was picked meanwhile: its own load draws it
    } catch (error) {
      $("#fan-chart-caption").textContent = "No fan history: " + error.message;
      return;
    }
    const byTime = new Map(temps.map((p) => [p[0], p[1]]));
    const seen = speeds.filter((p) => p[1] !== null && byTime.get(p[0]) !== null && byTime.get(p[0]) !== undefined)
      .map((p) => [byTime.get(p[0]), p[1]]);
    const curve = fan.curve || [];
    const xs = Array.from(new Set(seen.map((p) => p[0]).concat(curve.map((p) => p[0])))).sort((a, b) => a - b);
    const observed = new Map(seen.map((p) => [p[0], p[1]]));
    const fitted = new Map(curve.map((p) => [p[0], p[1]]));
    const unit = metric === "percent" ? "%" : "RPM";
    $("#fan-chart-caption").textContent = fan.name + ": speed (" + unit + ") against " +
      (fan.source ? fan.source + " (°C)" : "its source, once known") +
      (curve.length ? "; the line is its " + (fan.source_from === "learned" ? "learned" : "declared") + " curve" +
        (metric === "rpm" ? " (in %)" : "") : "");
    if (state.chart) state.chart.destroy();
    state.chart = null;
    el.replaceChildren();
    if (!seen.length && !curve.length) {  // a fresh start: nothing to draw yet
      $("#fan-chart-caption").textContent = fan.name + ": no history yet; points appear as they are collected" +
        (fan.source ? "" : ", and its source once it is learned");
      state.loadedAt = Date.now() - 10000;  // look again in 5 s
      return;
    }
    state.chart = new uPlot({
      width: Math.max(240, el.clientWidth || 320), height: 200, legend: { show: true },
      scales: { x: { time: false } },
      axes: [{ stroke: "#888", label: "°C" }, { stroke: "#888", size: 50 }],
      series: [{}, { label: "seen (" + unit + ")", stroke: "#2563eb", paths: () => null, points: { show: true, size: 4 } },
        { label: "curve", stroke: "#d97706", width: 2, spanGaps: true, points: { show: false } }],
    }, [xs, xs.map((x) => (observed.has(x) ? observed.get(x) : null)),
      xs.map((x) => (fitted.has(x) ? fitted.get(x) : null))], el);
  }

  $("#fan-pick").addEventListener("change", (event) => {
    state.fan = event.target.value;
    loadChart();
  });
  document.addEventListener("fanwhy:snapshot", (event) => render(event.detail));
})();
