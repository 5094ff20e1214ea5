/* Ostara charts: uPlot (served from the npm package, no build step) reading the portal's JSON
 * chart endpoints. Every element with data-chart="timeseries|capacity|share|histogram" and
 * data-url is drawn, refreshed every data-refresh seconds (15 by default) while the page is
 * visible, and redrawn for the range chosen in a [data-range] select. An element with
 * data-chart and data-data (the id of a json_script element) is drawn once from the page's own
 * data: "bars" takes {labels, series: {name: values}, unit, max, note}; "curve" takes {x, xlabel,
 * series: {name: values}, unit, expected, note}: a load curve against a numeric x (threads),
 * with the expected figure as a dashed line. A bar with a link (capacity's and share's "url",
 * bars' "links") opens its page on a click. A select[data-scope] ("kind:name") moves the
 * [data-scoped] charts to another scope: a large filesystem's top OSTs and OSSs, or one SSU's
 * own. A legend names its series; the values of a point show while the pointer is on it (with
 * no point hovered uPlot's live legend read "Value: share: –"). Sizes and counts are written as
 * portal/web/numbers.py writes them: binary units by their names, thousands separators. */
(function () {
  "use strict";

  const COLOURS = {
    read: "#1d4f91", write: "#e07b00", rewrite: "#2e8540", expected: "#555555", send: "#1d4f91", receive: "#2e8540",
    user: "#1d4f91", system: "#c62828", iowait: "#e07b00", used: "#6d28d9", fill: "#6d28d9",
  };
  const PALETTE = ["#1d4f91", "#e07b00", "#2e8540", "#c62828", "#6d28d9", "#0e7490", "#a16207"];
  const HEIGHT = 200;

  function colour(name, index) {
    return COLOURS[name] || PALETTE[index % PALETTE.length];
  }

  // As portal/web/numbers.py: the largest binary unit that leaves at least 1.
  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
  function formatBytes(bytes) {
    if (bytes == null || !isFinite(bytes)) return "—";
    let size = Math.abs(bytes);
    let exponent = 0;
    while (exponent < UNITS.length - 1 && size >= Math.pow(1024, exponent + 1)) exponent += 1;
    let scaled = size / Math.pow(1024, exponent);
    if (exponent < UNITS.length - 1 && Math.round(scaled * 10) / 10 >= 1024) { exponent += 1; scaled = size / Math.pow(1024, exponent); }
    const text = exponent === 0 || scaled === Math.floor(scaled)
      ? Math.round(scaled).toLocaleString("en")
      : scaled.toLocaleString("en", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    return `${bytes < 0 ? "-" : ""}${text} ${UNITS[exponent]}`;
  }

  // A figure with its unit: counts whole, large figures without decimals, separators always.
  function formatValue(v, unit) {
    if (v == null) return "–";
    const whole = unit === "I/Os" || Math.abs(v) >= 100;
    const text = v.toLocaleString("en", { maximumFractionDigits: whole ? 0 : 1 });
    return unit ? `${text} ${unit}` : text;
  }

  // The legend follows the pointer: over a point, the point's label and values; elsewhere, only
  // the series' names and colours (a key), not the x series with an empty value and dashes.
  function legendFollowsPointer(u) {
    const legend = u.root.querySelector(".u-legend");
    if (!legend) return;
    const hovered = u.cursor.idx != null;
    legend.classList.toggle("u-live", hovered);
    legend.classList.toggle("idle", !hovered);
    const first = legend.querySelector(".u-series");
    if (first) first.style.display = hovered && u.series[0].label ? "" : "none";
  }

  function withLegendHooks(options) {
    const hooks = options.hooks || {};
    hooks.ready = (hooks.ready || []).concat([legendFollowsPointer]);
    hooks.setCursor = (hooks.setCursor || []).concat([legendFollowsPointer]);
    options.hooks = hooks;
    return options;
  }

  function currentRange() {
    const select = document.querySelector("select[data-range]");
    return select ? select.value : "1h";
  }

  function message(element, text) {
    if (element._plot) { element._plot.destroy(); element._plot = null; }
    element.innerHTML = "";
    const note = document.createElement("div");
    note.className = "empty";
    note.textContent = text;
    element.appendChild(note);
  }

  function note(element, text) {
    let footer = element.parentElement.querySelector(".note");
    if (!footer) {
      footer = document.createElement("p");
      footer.className = "note";
      element.parentElement.appendChild(footer);
    }
    footer.textContent = text;
  }

  function width(element) {
    return Math.max(240, element.clientWidth || element.parentElement.clientWidth - 24);
  }

  function draw(element, options, data) {
    // Same series as before: new data only; otherwise a new plot.
    const signature = JSON.stringify(options.series.map((s) => s.label));
    if (element._plot && element._signature === signature && element._kind === options.kind) {
      element._plot.setData(data);
      return;
    }
    if (element._plot) element._plot.destroy();
    element.innerHTML = "";
    options.width = width(element);
    options.height = HEIGHT;
    element._plot = new uPlot(withLegendHooks(options), data, element);
    element._signature = signature;
    element._kind = options.kind;
  }

  function timeseries(element, body) {
    const names = Object.keys(body.series || {});
    if (!body.time || body.time.length === 0 || names.length === 0) {
      message(element, "No data in this range yet.");
      return;
    }
    const unit = body.unit || "";
    const series = [{ label: "time" }].concat(names.map((name, index) => ({
      label: name,
      stroke: colour(name, index),
      width: 1.5,
      spanGaps: false,
      value: (u, v) => formatValue(v, unit),
    })));
    draw(element, {
      kind: "timeseries",
      series: series,
      scales: {
        // The whole chosen range, ending now, however few points there are yet.
        x: { time: true, range: () => { const end = body.end || Date.now() / 1000; return [end - (body.range || 3600), end]; } },
        y: { range: (u, min, max) => [Math.min(0, min), Math.max(max * 1.1, unit === "%" ? 10 : 1)] },
      },
      axes: [{}, { label: unit, size: 56 }],
      legend: { live: true },
    }, [body.time].concat(names.map((name) => body.series[name])));
    note(element, body.note || `${body.policy === "raw" ? "raw points" : body.policy + " means"}, ${body.step} s steps`);
  }

  function bars(element, labels, named, unit, kind, yMax, links, xlabel) {
    if (labels.length === 0) {
      message(element, "No data yet.");
      return;
    }
    element._links = links || [];
    const names = Object.keys(named);
    const size = names.length > 1 ? 0.8 / names.length : 0.7;
    const index = labels.map((_, i) => i);
    const every = Math.max(1, Math.ceil(labels.length / 24));
    draw(element, {
      kind: kind,
      series: [{ label: xlabel || "", value: (u, v) => (v == null ? "" : labels[v] || "") }].concat(names.map((name, i) => ({
        label: name,
        stroke: colour(name, i),
        fill: colour(name, i) + "cc",
        width: 1,
        paths: uPlot.paths.bars({ size: [size, 48], align: names.length > 1 ? (i === 0 ? -1 : 1) : 0 }),
        points: { show: false },
        value: (u, v) => formatValue(v, unit),
      }))),
      scales: {
        x: { time: false, range: () => [-0.5, labels.length - 0.5] },
        y: { range: (u, min, max) => [0, yMax || Math.max(1, max * 1.1)] },
      },
      axes: [
        { splits: () => index.filter((i) => i % every === 0), values: (u, splits) => splits.map((i) => short(labels[i])), rotate: -45, size: 48 },
        { label: unit, size: 56 },
      ],
      legend: { live: true },
      hooks: {
        ready: [(u) => u.over.addEventListener("click", () => {
          const link = element._links[u.cursor.idx];
          if (link) window.location.href = link;
        })],
        setCursor: [(u) => { u.over.style.cursor = element._links[u.cursor.idx] ? "pointer" : ""; }],
      },
    }, [index].concat(names.map((name) => named[name])));
  }

  function short(label) {
    if (label == null) return "";
    const part = String(label).split("-").pop();
    return part.replace(/^(OST|MDT)0*(?=.)/, "");
  }

  // A large scope's chart: its top rows, then one bar for the others (no link).
  function withOthers(rows, label, value, others, othersValue) {
    const shown = rows.map((row) => ({ label: label(row), value: value(row), url: row.url }));
    if (others) shown.push({ label: `${others.count.toLocaleString("en")} others`, value: othersValue(others), url: null });
    return shown;
  }

  function drawRows(element, rows, name, kind, xlabel) {
    bars(element, rows.map((r) => r.label), { [name]: rows.map((r) => r.value) }, "%", kind, 100, rows.map((r) => r.url), xlabel);
  }

  function capacity(element, body) {
    const rows = withOthers(body.osts || [], (o) => o.label, (o) => o.fill_percent, body.others, (o) => o.fill_percent);
    drawRows(element, rows, "fill", "capacity", "OST");
    const total = body.total || {};
    if (total.fill_percent != null) {
      // used_tb and avail_tb are KiB / 1024³: TiB.
      const tib = Math.pow(1024, 4);
      let text = `total ${formatBytes(total.used_tb * tib)} used of ${formatBytes((total.used_tb + total.avail_tb) * tib)} (${total.fill_percent} %), fullest − emptiest OST ${total.spread_percent} points`;
      if (body.others) text = `the ${body.osts.length} fullest of ${total.count.toLocaleString("en")} OSTs, the others together; OST fill min ${total.min_percent} / median ${total.median_percent} / max ${total.max_percent} %; ` + text + "; choose an SSU for all of its OSTs";
      note(element, text);
    }
  }

  function share(element, body) {
    const rows = withOthers(body.servers || [], (s) => s.server, (s) => s.share_percent, body.others, (o) => o.mean_share_percent);
    if (body.others) rows[rows.length - 1].label += " (mean)";
    drawRows(element, rows, "share", "share", "OSS");
    if (rows.length) {
      let text = `${formatBytes(body.total_gb * 1e9)} moved in the range; busiest OSS at ${body.imbalance || "–"}× the mean`;
      if (body.others) text = `the ${body.servers.length} busiest of ${body.count} OSSs; the other ${body.others.count} carry ${body.others.share_percent} % together (${body.others.mean_share_percent} % each on average); ` + text;
      note(element, text);
    }
  }

  function histogram(element, body) {
    // brw_stats buckets as Lustre prints them ("4K", "1M"): sizes like every other.
    const sizes = (body.buckets || []).map((bucket) => {
      const match = /^(\d+)([KMG]?)$/.exec(bucket);
      return match ? formatBytes(Number(match[1]) * ({ "": 1, K: 1024, M: 1048576, G: 1073741824 })[match[2]]) : bucket;
    });
    bars(element, sizes, body.series || {}, "I/Os", "histogram", null, null, "I/O size");
    note(element, body.period === "range" ? "I/Os in the range" : "I/Os since the target was mounted (none in the range)");
  }

  function barChart(element, body) {
    bars(element, body.labels || [], body.series || {}, body.unit || "", "bars", body.max, body.links, body.xlabel);
    if (body.note) note(element, body.note);
  }

  function curve(element, body) {
    const names = Object.keys(body.series || {});
    if (!body.x || body.x.length === 0 || names.length === 0) {
      message(element, "No result line yet.");
      return;
    }
    const unit = body.unit || "";
    const lines = names.map((name) => body.series[name]);
    const series = [{ label: body.xlabel || "x" }].concat(names.map((name, i) => ({
      label: name,
      stroke: colour(name, i),
      width: 2,
      points: { show: true, size: 6 },
      value: (u, v) => formatValue(v == null ? v : Math.round(v), unit),
    })));
    if (body.expected != null) {
      series.push({ label: "expected", stroke: colour("expected", 0), width: 1.5, dash: [6, 4], points: { show: false },
        value: (u, v) => formatValue(v == null ? v : Math.round(v), unit) });
      lines.push(body.x.map(() => body.expected));
    }
    const top = Math.max(body.expected || 0, ...lines.flat().filter((v) => v != null));
    draw(element, {
      kind: "curve",
      series: series,
      scales: { x: { time: false, distr: 3, log: 2 }, y: { range: () => [0, Math.max(1, top * 1.1)] } },
      axes: [{ label: body.xlabel || "", size: 40, values: (u, splits) => splits.map((v) => String(v)) }, { label: unit, size: 60 }],
      legend: { live: true },
    }, [body.x].concat(lines));
    if (body.note) note(element, body.note);
  }

  const RENDERERS = { timeseries, capacity, share, histogram, bars: barChart, curve };

  async function load(element) {
    const separator = element.dataset.url.includes("?") ? "&" : "?";
    const url = `${element.dataset.url}${separator}range=${encodeURIComponent(currentRange())}`;
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      const body = await response.json();
      if (!response.ok) {
        message(element, body.error || `The portal answered ${response.status}.`);
        return;
      }
      RENDERERS[element.dataset.chart](element, body);
      element.dataset.loaded = "true";
    } catch (error) {
      message(element, "Could not load the chart: " + error.message);
    }
  }

  function start() {
    const inline = Array.from(document.querySelectorAll("[data-chart][data-data]"));
    inline.forEach((element) => {
      const body = JSON.parse(document.getElementById(element.dataset.data).textContent);
      RENDERERS[element.dataset.chart](element, body);
      element.dataset.loaded = "true";
    });
    const charts = Array.from(document.querySelectorAll("[data-chart][data-url]"));
    charts.forEach((element) => {
      load(element);
      const seconds = Number(element.dataset.refresh || 15);
      setInterval(() => { if (!document.hidden) load(element); }, seconds * 1000);
    });
    document.querySelectorAll("select[data-range]").forEach((select) => {
      select.addEventListener("change", () => charts.forEach(load));
    });
    document.querySelectorAll("select[data-scope]").forEach((select) => {
      select.addEventListener("change", () => {
        const [kind, name] = select.value.split(":");
        charts.filter((element) => "scoped" in element.dataset).forEach((element) => {
          const url = new URL(element.dataset.url, window.location.href);
          url.searchParams.set("kind", kind);
          url.searchParams.set("name", name);
          element.dataset.url = url.pathname + url.search;
          load(element);
        });
        const link = document.querySelector("[data-scope-link]");
        const page = select.selectedOptions[0].dataset.url;
        if (link) { link.hidden = !page; link.href = page || ""; }
      });
    });
    if (window.ResizeObserver) {
      const observer = new ResizeObserver((entries) => {
        entries.forEach((entry) => {
          const plot = entry.target._plot;
          if (plot) plot.setSize({ width: width(entry.target), height: HEIGHT });
        });
      });
      charts.concat(inline).forEach((element) => observer.observe(element));
    }
  }

  // A part the page fetches once shown (htmx, data-failed: what to say if it cannot come): an
  // error answer or no answer says so in place of its "Reading ..." line, which would stay.
  function failed(event) {
    const part = event.detail.elt;
    const line = part && part.dataset.failed && part.querySelector(".help");
    if (!line) return;
    const status = event.detail.xhr && event.detail.xhr.status;
    const said = part.dataset.failed;
    line.textContent = status ? `${said} (HTTP ${status}).` : `${said}.`;
  }
  document.addEventListener("htmx:responseError", failed);
  document.addEventListener("htmx:sendError", failed);
  document.addEventListener("htmx:timeout", failed);

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
