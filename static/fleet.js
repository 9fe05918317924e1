// The fleet page: /api/fleet every 10 s. Untrusted text (node, GPU and container names) as text only.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const gib = (b) => (b === undefined || b === null ? "?" : (b / 1073741824).toFixed(1) + " GiB");
  const num = (v, digits) => (v === undefined || v === null ? "?" : Number(v).toFixed(digits || 0));

  function row(cells, data) {
    const tr = document.createElement("tr");
    cells.forEach((text) => { const td = document.createElement("td"); td.textContent = text; tr.appendChild(td); });
    Object.assign(tr.dataset, data || {});
    return tr;
  }

  async function refresh() {
    try {
      const response = await fetch("api/fleet", { credentials: "same-origin" });
      const body = await response.json();
      if (!response.ok) throw new Error(body.error + (body.detail ? ": " + body.detail : ""));
      $("#fleet-error").hidden = true;
      $("#fleet-status").textContent = body.nodes.length + " nodes";
      $("#fleet-status").className = "pill pill-ok";
      $("#ranking tbody").replaceChildren(...body.ranking.map((r) =>
        row([r.instance, String(r.gpu), r.name || "?", r.score.toFixed(3)])));
      $("#pods tbody").replaceChildren(...(body.pods || []).map((p) =>
        row([p.instance, p.namespace || "–", p.pod, num(p.sm_percent), gib(p.gpu_memory_bytes)],
            { pod: (p.namespace || "") + "/" + p.pod })));
      $("#nodes tbody").replaceChildren(...body.nodes.map((n) => row([
        n.instance, n.up === false ? "down" : "up", num(n.cpu_percent),
        n.gpus.map((g) => "GPU " + g.gpu + ": " + num(g.utilization_percent) + " % · " + gib(g.memory_used_bytes) +
          " · " + num(g.temperature_c) + " °C · " + num(g.power_w) + " W").join("; "),
        n.top_containers.map((c) => (c.name || c.id) + " " + gib(c.gpu_memory_bytes) +
          (c.method === "inference" ? " (estimate)" : "")).join(", ") || "–",
      ], { instance: n.instance })));
    } catch (error) {
      $("#fleet-error").hidden = false;
      $("#fleet-error").textContent = "Fleet unavailable: " + error.message;
      $("#fleet-status").textContent = "error";
      $("#fleet-status").className = "pill pill-bad";
    }
  }
  if (document.body.dataset.configured !== "yes") {  // nothing to ask: the page explains how to set one up
    $("#fleet-status").textContent = "not configured";
    return;
  }
  refresh();
  setInterval(refresh, 10000);
})();
