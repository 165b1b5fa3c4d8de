// gpugauge's page: build a job spec from the form, queue it, poll the job, draw the answer.
"use strict";

(function () {
  const form = document.getElementById("job");
  const statusLine = document.getElementById("status");
  const POLL_MS = 700;
  const GIVE_UP_MS = 180000;

  function value(id) {
    const el = document.getElementById(id);
    return el && el.value.trim() !== "" ? el.value.trim() : null;
  }

  function number(id) {
    const v = value(id);
    return v === null ? null : Number(v);
  }

  function say(text, isError) {
    statusLine.textContent = text;
    statusLine.className = isError ? "error" : "";
  }

  function toBase64(buffer) {
    const bytes = new Uint8Array(buffer);
    let binary = "";
    const chunk = 0x8000;
    for (let i = 0; i < bytes.length; i += chunk) {
      binary += String.fromCharCode.apply(null, bytes.subarray(i, i + chunk));
    }
    return btoa(binary);
  }

  async function buildSpec() {
    const form_kind = form.querySelector("input[name=model_form]:checked").value;
    const model = {};
    if (form_kind === "onnx") {
      const file = document.getElementById("onnx").files[0];
      if (!file) throw new Error("choose an ONNX file, or a preset");
      model.onnx = toBase64(await file.arrayBuffer());
    } else {
      model.preset = value("preset");
    }
    const training = { batch_size: number("batch_size") };
    if (number("sequence_length") !== null) training.sequence_length = number("sequence_length");
    if (number("epochs") !== null) training.epochs = number("epochs");
    const dataset = {};
    if (number("samples") !== null) dataset.samples = number("samples");
    if (number("dataset_gb") !== null) dataset.bytes = Math.round(number("dataset_gb") * 1e9);
    const constraints = {};
    if (number("budget_usd") !== null) constraints.budget_usd = number("budget_usd");
    if (number("deadline_hours") !== null) constraints.deadline_hours = number("deadline_hours");
    return { model: model, training: training, dataset: dataset, constraints: constraints,
             objective: value("objective") || "balanced" };
  }

  function headers() {
    const h = { "Content-Type": "application/json", "Accept": "application/json" };
    const key = value("api_key");
    if (key) h["Authorization"] = "Bearer " + key;
    return h;
  }

  function problemText(body) {
    if (!body) return "the request failed";
    let text = body.title || "error";
    if (body.detail) text += ": " + body.detail;
    if (body.errors) text += " " + JSON.stringify(body.errors);
    return text;
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function run(spec) {
    const posted = await fetch("/v1/recommendations", { method: "POST", headers: headers(),
                                                         body: JSON.stringify(spec) });
    const first = await posted.json();
    if (posted.status !== 202 && posted.status !== 200) throw new Error(problemText(first));
    const location = posted.headers.get("Location") || ("/v1/recommendations/" + first.id);
    const started = Date.now();
    let job = first;
    while (job.status !== "done" && job.status !== "failed") {
      if (Date.now() - started > GIVE_UP_MS) throw new Error("no answer after " + GIVE_UP_MS / 1000 + " s");
      say("job " + job.status + "…");
      await sleep(POLL_MS);
      const polled = await fetch(location, { headers: headers() });
      job = await polled.json();
      if (!polled.ok) throw new Error(problemText(job));
    }
    if (job.status === "failed") throw new Error(problemText(job.problem));
    return { job: job, location: location };
  }

  function cell(row, text, numeric) {
    const td = document.createElement("td");
    td.textContent = text;
    if (numeric) td.className = "n";
    row.appendChild(td);
  }

  const usd = (x) => "$" + (x < 100 ? x.toFixed(2) : Math.round(x).toLocaleString("en-US"));
  const hours = (h) => (h >= 1 ? h.toFixed(1) + " h" : (h * 60).toFixed(1) + " min");
  const fixed = (x, d) => (x === null || x === undefined ? "-" : x.toFixed(d));

  function drawOptions(options) {
    const body = document.querySelector("#options tbody");
    body.replaceChildren();
    for (const o of options) {
      const tr = document.createElement("tr");
      cell(tr, String(o.rank) + (o.pareto ? "*" : ""));
      cell(tr, o.provider); cell(tr, o.instance_type); cell(tr, o.region); cell(tr, o.pricing);
      cell(tr, o.gpu_count + "x " + o.gpu);
      cell(tr, o.training_hours > 0 ? hours(o.training_hours) : "n/a", true);
      cell(tr, o.training_hours > 0 ? usd(o.training_cost_usd) : "n/a", true);
      // the hourly price with the day its source says it was true; the source itself on hover
      cell(tr, "$" + (o.nodes > 1 ? o.nodes * o.price_per_hour_usd : o.price_per_hour_usd).toFixed(2) + "/h, "
               + (o.price_as_of ? "as of " + o.price_as_of
                  : o.pricing === "owned" ? "power at your rate" : "undated"), true);
      tr.lastChild.title = o.price_source || "";
      cell(tr, fixed(o.energy_kwh, 1), true);
      cell(tr, fixed(o.co2e_kg, 1), true);
      cell(tr, o.why);
      body.appendChild(tr);
    }
  }

  function drawRejected(rejected) {
    const body = document.querySelector("#rejected tbody");
    body.replaceChildren();
    for (const r of rejected) {
      const tr = document.createElement("tr");
      cell(tr, r.provider); cell(tr, r.instance_type); cell(tr, r.reason);
      body.appendChild(tr);
    }
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svgEl(name, attrs, text) {
    const el = document.createElementNS(SVG, name);
    for (const k in attrs) el.setAttribute(k, attrs[k]);
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function drawChart(options) {
    const svg = document.getElementById("chart");
    svg.replaceChildren();
    const points = options.filter((o) => o.training_hours > 0 && o.training_cost_usd > 0);
    const W = 640, H = 360, L = 64, R = 16, T = 12, B = 40;
    svg.appendChild(svgEl("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#57606a" }));
    svg.appendChild(svgEl("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#57606a" }));
    svg.appendChild(svgEl("text", { x: (L + W - R) / 2, y: H - 8, "text-anchor": "middle" }, "training time, hours (log)"));
    svg.appendChild(svgEl("text", { x: 12, y: (T + H - B) / 2, transform: "rotate(-90 12 " + (T + H - B) / 2 + ")",
                                    "text-anchor": "middle" }, "cost, USD (log)"));
    if (points.length === 0) return;
    const lx = points.map((o) => Math.log10(o.training_hours));
    const ly = points.map((o) => Math.log10(o.training_cost_usd));
    const span = (a) => { const lo = Math.min(...a), hi = Math.max(...a); return [lo - 0.05, Math.max(hi, lo + 0.1) + 0.05]; };
    const [x0, x1] = span(lx), [y0, y1] = span(ly);
    const px = (v) => L + (v - x0) / (x1 - x0) * (W - L - R);
    const py = (v) => H - B - (v - y0) / (y1 - y0) * (H - T - B);
    for (const [lo, hi, at, horizontal] of [[x0, x1, (v) => px(v), true], [y0, y1, (v) => py(v), false]]) {
      for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) {
        const label = horizontal ? hours(10 ** e) : usd(10 ** e);
        svg.appendChild(horizontal
          ? svgEl("text", { x: at(e), y: H - B + 14, "text-anchor": "middle" }, label)
          : svgEl("text", { x: L - 4, y: at(e) + 4, "text-anchor": "end" }, label));
      }
    }
    points.forEach((o, i) => {
      const dot = svgEl("circle", { cx: px(lx[i]), cy: py(ly[i]), r: 5, class: "option",
                                    fill: o.pareto ? "#0969da" : "white", stroke: "#0969da" });
      dot.appendChild(svgEl("title", {}, o.rank + ". " + o.provider + " " + o.instance_type + " " + o.region +
                                          ": " + hours(o.training_hours) + ", " + usd(o.training_cost_usd)));
      svg.appendChild(dot);
    });
  }

  function drawQuery(spec, location) {
    const json = JSON.stringify(spec);
    const origin = window.location.origin;
    const auth = value("api_key") ? " -H 'Authorization: Bearer $GPUGAUGE_KEY'" : "";
    const shown = json.length > 4000 ? json.slice(0, 4000) + "…" : json;
    document.getElementById("curl").textContent =
      "curl -si " + origin + "/v1/recommendations -H 'Content-Type: application/json'" + auth + " -d '" + shown + "'";
    document.getElementById("cli").textContent =
      "cat > job.json <<'EOF'\n" + JSON.stringify(spec, null, 2).slice(0, 4000) + "\nEOF\ngpugauge recommend job.json";
    const link = document.getElementById("json_link");
    link.href = location;
    link.textContent = origin + location;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = document.getElementById("submit");
    button.disabled = true;
    try {
      say("sending…");
      const spec = await buildSpec();
      const answer = await run(spec);
      const result = answer.job.result;
      drawOptions(result.options);
      drawChart(result.options);
      drawRejected(result.rejected);
      drawQuery(spec, answer.location);
      const plan = result.plan && result.plan.length ? " Nothing fits: see the plan in the JSON." : "";
      document.getElementById("summary").textContent = result.options.length + " options, " +
        result.rejected.length + " rejected families; catalog " + result.catalog.version + "." + plan;
      document.getElementById("result").hidden = false;
      say("done");
    } catch (error) {
      say(error.message, true);
    } finally {
      button.disabled = false;
    }
  });
})();
