// The API's own document rendered as a page: no CDN, no framework, every string as text.
(function () {
  "use strict";
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, text, cls) => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  };

  function typeText(schema) {
    if (!schema) return "any";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.anyOf) return schema.anyOf.map(typeText).join(" | ");
    if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
    if (schema.type === "array") return (schema.items ? typeText(schema.items) : "any") + "[]";
    if (Array.isArray(schema.type)) return schema.type.join(" | ");
    return schema.type || "object";
  }

  function schemaTable(schema) {
    const table = el("table");
    const head = el("tr");
    ["field", "type", "required"].forEach((h) => head.appendChild(el("th", h)));
    table.appendChild(head);
    const required = new Set(schema.required || []);
    Object.entries(schema.properties || {}).forEach(([name, prop]) => {
      const tr = el("tr");
      const type = el("td");
      if (prop.$ref) {
        const link = el("a", typeText(prop));
        link.href = "#schema-" + typeText(prop);
        type.appendChild(link);
      } else {
        type.textContent = typeText(prop);
      }
      [el("td", name), type, el("td", required.has(name) ? "yes" : "")].forEach((td) => tr.appendChild(td));
      table.appendChild(tr);
    });
    const wrap = el("div", undefined, "table-wrap");
    wrap.appendChild(table);
    return wrap;
  }

  function operation(path, method, op) {
    const card = el("article", undefined, "card");
    card.id = op.operationId;
    card.appendChild(el("h3", method.toUpperCase() + " " + path));
    card.appendChild(el("p", op.summary || ""));
    card.appendChild(el("p", "operationId: " + op.operationId, "muted"));
    if ((op.parameters || []).length) {
      const list = el("ul");
      op.parameters.forEach((p) => list.appendChild(el("li", p.name + " (" + p.in + ", " + typeText(p.schema) + "): " +
        (p.description || ""))));
      card.appendChild(list);
    }
    const ok = (op.responses || {})["200"] || (op.responses || {})["201"];
    const schema = ok && ok.content && ok.content["application/json"] && ok.content["application/json"].schema;
    if (schema && schema.properties) card.appendChild(schemaTable(schema));
    else if (schema && schema.$ref) card.appendChild(el("p", "answers: " + typeText(schema)));
    card.appendChild(el("p", "status codes: " + Object.keys(op.responses || {}).join(", "), "muted"));
    return card;
  }

  fetch("openapi.json", { credentials: "same-origin" }).then((r) => r.json()).then((spec) => {
    $("#docs-status").textContent = spec.info.title + ": " + spec.info.description;
    const ops = [];
    Object.entries(spec.paths).forEach(([path, methods]) => Object.entries(methods).forEach(([method, op]) =>
      ops.push(operation(path, method, op))));
    $("#operations").replaceChildren(...ops);
    const schemas = Object.entries(spec.components.schemas || {}).map(([name, schema]) => {
      const card = el("article", undefined, "card");
      card.id = "schema-" + name;
      card.appendChild(el("h3", name));
      card.appendChild(el("p", schema.description || "", "muted"));
      card.appendChild(schemaTable(schema));
      return card;
    });
    $("#schemas").replaceChildren(...schemas);
  }).catch((error) => { $("#docs-status").textContent = "The document could not be read: " + error.message; });
})();
