// The dashboard's page: polls /api/state every second and redraws. No library, no network but
// the dashboard itself. Text from the database goes in with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;
// A search for a text few URLs contain reads far back in the table: while one is in the box,
// the dead links are read again every 10 s rather than every poll (and when it changes).
const SEARCH_POLL_MS = 10000;
let deadReadAt = 0;
const TOTALS = ["pending", "claimed", "done", "alive", "dead", "blocked", "unreachable", "error", "excluded"];
let searchTimer = null;

function number(n) {
  return Number(n).toLocaleString("en-US");
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const [text, cls] of cells) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
  }
  return tr;
}

function fill(tbody, rows, empty) {
  tbody.replaceChildren(...(rows.length ? rows : [row([[empty, "empty"]])]));
}

// The plots: from /api/history (the database, by checked_at), every 10 s and when the range
// changes. Each is an SVG of 640 x 220 units: the plot's box, its axes with their labels.
const HISTORY_POLL_MS = 10000;
let historyReadAt = 0;
const SVG = "http://www.w3.org/2000/svg";
const BOX = { left: 56, right: 630, top: 10, bottom: 190 };
const COLORS = {
  alive: "#2e7d32", dead: "#c62828", blocked: "#ef6c00", unreachable: "#6a1b9a",
  error: "#795548", excluded: "#9e9e9e",
};
const PALETTE = ["#1565c0", "#00838f", "#ad1457", "#558b2f", "#4527a0", "#f9a825", "#37474f", "#d84315"];

function svg(tag, attributes, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

// A round number at or above n, for the y axis's top.
function roundUp(n) {
  if (n <= 0) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(n)));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= n);
}

function clock(ms, withDay) {
  const d = new Date(ms);
  const time = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
  return withDay ? d.toLocaleDateString("en-GB", { month: "short", day: "numeric" }) + " " + time : time;
}

// Draws `series` ({name, counts}) as rates per `per.ms` (labelled `per.label`) over plot.from..
// in `id`'s SVG, with axes, and their legend in `legendId`.
function drawPlot(id, legendId, plot, series, colorOf, per) {
  const box = $(id);
  const scale = per.ms / plot.bucket_ms;
  const rates = series.map((s) => s.counts.map((n) => n * scale));
  const top = roundUp(Math.max(0, ...rates.flat()));
  const x = (i) => BOX.left + (i / Math.max(1, plot.counts_len - 1)) * (BOX.right - BOX.left);
  const y = (v) => BOX.bottom - (v / top) * (BOX.bottom - BOX.top);
  const children = [
    svg("line", { class: "axis", x1: BOX.left, y1: BOX.bottom, x2: BOX.right, y2: BOX.bottom }),
    svg("line", { class: "axis", x1: BOX.left, y1: BOX.top, x2: BOX.left, y2: BOX.bottom }),
    svg("text", { class: "unit", x: 4, y: BOX.top + 4, "text-anchor": "start" }, per.label),
  ];
  for (const v of [0, top / 2, top]) {
    children.push(svg("line", { class: "grid", x1: BOX.left, y1: y(v), x2: BOX.right, y2: y(v) }));
    children.push(svg("text", { class: "tick", x: BOX.left - 4, y: y(v) + 4, "text-anchor": "end" }, number(v)));
  }
  const withDay = plot.to - plot.from > 86400000;
  for (let k = 0; k <= 4; k++) {
    const i = (k / 4) * (plot.counts_len - 1);
    const at = plot.from + i * plot.bucket_ms;
    children.push(svg("text", { class: "tick", x: x(i), y: BOX.bottom + 16, "text-anchor": "middle" }, clock(at, withDay)));
  }
  const legend = [];
  series.forEach((s, k) => {
    const total = s.counts.reduce((a, b) => a + b, 0);
    if (!total) return;
    const d = rates[k].map((v, i) => (i ? "L" : "M") + x(i).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
    const color = colorOf(s.name, k);
    children.push(svg("path", { class: "line series", "data-name": s.name, d: d, stroke: color }));
    const item = document.createElement("span");
    item.className = "key";
    item.style.setProperty("--key", color);
    item.textContent = s.name + " " + number(total);
    legend.push(item);
  });
  box.replaceChildren(...children);
  $(legendId).replaceChildren(...legend);
}

const PER_MINUTE = { ms: 60000, label: "/min" };

function renderHistory(plot) {
  plot.counts_len = plot.verdicts.length ? plot.verdicts[0].counts.length : 1;
  drawPlot("plot-verdicts", "legend-verdicts", plot, plot.verdicts, (name) => COLORS[name] || "#000", PER_MINUTE);
  drawPlot("plot-workers", "legend-workers", plot, plot.workers, (_, k) => PALETTE[k % PALETTE.length], PER_MINUTE);
  const minutes = plot.bucket_ms / 60000;
  const bucket = minutes >= 1 ? minutes + " min" : plot.bucket_ms / 1000 + " s";
  $("span").textContent = "from " + new Date(plot.from).toLocaleString("en-GB") + " to " +
    new Date(plot.to).toLocaleString("en-GB") + ", in buckets of " + bucket +
    ", from each site's last check (the database's clock)";
}

// The link rot panel: from /api/rot (the verdicts that began, and the history of those
// replaced since), with the plots. Broke in red, recovered in green, per hour or per day.
const ROT_COLORS = { "newly dead": COLORS.dead, recovered: COLORS.alive };

function renderRot(rot) {
  rot.counts_len = rot.series.length ? rot.series[0].counts.length : 1;
  const unit = rot.bucket_ms >= 86400000 ? "day" : "hour";
  $("rot-bucket").textContent = unit;
  drawPlot("plot-rot", "legend-rot", rot, rot.series, (name) => ROT_COLORS[name] || "#000", { ms: rot.bucket_ms, label: "/" + unit });
  fill($("changes"), rot.latest.map((c) => row([
    [c.url, "url"], [c.verdict], [c.previous_verdict || "new"],
    [c.status == null ? c.error_kind || "-" : String(c.status)], [c.changed_at],
  ])), "no change yet");
}

async function refreshHistory() {
  historyReadAt = Date.now();
  const range = $("range").value;
  renderHistory(await getJson("/api/history?range=" + range));
  renderRot(await getJson("/api/rot?range=" + range));
}

function render(s) {
  for (const key of TOTALS) {
    $("total-" + key).textContent = key in s.totals ? number(s.totals[key]) : "–";
  }
  const state = $("state");
  state.textContent = s.paused ? "paused" : "running";
  state.className = "badge" + (s.paused ? " paused" : "");
  $("control").hidden = !s.allow_control;
  $("logout").hidden = !s.token_required;
  $("pause").disabled = s.paused;
  $("resume").disabled = !s.paused;
  fill($("workers"), s.workers.map((w) => row([
    [w.id], [w.host], [String(w.pid), "num"], [number(w.checked), "num"],
    [w.per_second.toFixed(1), "num"], [(w.heartbeat_age_ms / 1000).toFixed(1) + " s ago", "num"],
  ])), "no worker");
  fill($("backoffs"), s.backoffs.map((b) => row([
    [b.host], [b.address || "-"], [b.state], [b.cause || "-"], [b.owner || "-"],
    [b.backoff_until || "-"], [b.last_status == null ? "-" : String(b.last_status)],
    [number(b.throttled), "num"],
  ])), "no host in trouble");
  fill($("addresses"), s.addresses.map((a) => row([
    [a.address], [number(a.holders), "num"], [number(a.waiting), "num"],
    [number(a.in_flight), "num"], [number(a.hosts), "num"],
  ])), "no server address held");
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
}

async function getJson(url, options) {
  return answer(await fetch(url, Object.assign({ cache: "no-store" }, options)));
}

async function answer(response) {
  // The session ended (it expired, was logged out, or a new token): the page becomes the
  // login form.
  if (response.status === 401) location.reload();
  if (!response.ok) throw new Error(response.status + " " + (await response.text()).trim());
  return response.json();
}

// A search the dashboard cannot run now (429: this page's last one still runs; 503: it runs as
// many as it may) keeps the list shown, and is asked again a second later.
const SEARCH_BUSY = [429, 503];

async function refreshDead() {
  deadReadAt = Date.now();
  const q = encodeURIComponent($("search").value);
  const response = await fetch("/api/dead?limit=50&q=" + q, { cache: "no-store" });
  if (q && SEARCH_BUSY.includes(response.status)) {
    deadReadAt = Date.now() - SEARCH_POLL_MS + POLL_MS;
    return;
  }
  const dead = await answer(response);
  fill($("dead"), dead.map((d) => row([
    [d.url, "url"], [d.status == null ? d.error_kind || "-" : String(d.status)], [d.checked_at],
  ])), "no dead link" + ($("search").value ? " matches" : ""));
}

async function poll() {
  try {
    render(await getJson("/api/state"));
    if (!$("search").value || Date.now() - deadReadAt >= SEARCH_POLL_MS) await refreshDead();
    if (Date.now() - historyReadAt >= HISTORY_POLL_MS) await refreshHistory();
    $("error").textContent = "";
  } catch (error) {
    $("state").textContent = "unreachable";
    $("state").className = "badge down";
    $("error").textContent = error.message;
  }
  setTimeout(poll, POLL_MS);
}

async function control(action) {
  try {
    await getJson("/api/" + action, { method: "POST", headers: { "X-Crawler-Control": "1" } });
    render(await getJson("/api/state"));
    $("error").textContent = "";
  } catch (error) {
    $("error").textContent = error.message;
  }
}

$("pause").addEventListener("click", () => control("pause"));
$("resume").addEventListener("click", () => control("resume"));
$("range").addEventListener("change", () => refreshHistory().catch((e) => { $("error").textContent = e.message; }));
$("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => refreshDead().catch(() => {}), 250);
});
poll();
