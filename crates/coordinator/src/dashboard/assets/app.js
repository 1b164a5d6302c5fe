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

// An SVG path through the values, scaled to the plot's box (600 x 150).
function path(values) {
  if (values.length < 2) return "";
  const max = Math.max(...values, 1);
  const step = 600 / (values.length - 1);
  return values
    .map((v, i) => (i ? "L" : "M") + (i * step).toFixed(1) + "," + (148 - (v / max) * 144).toFixed(1))
    .join(" ");
}

function renderPlots(history) {
  const rates = history.map((p) => p.rate);
  const dead = history.map((p) => p.dead);
  $("rate-line").setAttribute("d", path(rates));
  $("dead-line").setAttribute("d", path(dead));
  $("rate-max").textContent = rates.length ? "(max " + number(Math.round(Math.max(...rates))) + "/s)" : "";
  $("dead-max").textContent = dead.length ? "(now " + number(dead[dead.length - 1]) + ")" : "";
  const seconds = history.length > 1 ? (history[history.length - 1].at - history[0].at) / 1000 : 0;
  $("span").textContent = "the last " + Math.round(seconds) + " s, since this dashboard started";
}

function render(s) {
  for (const key of TOTALS) {
    $("total-" + key).textContent = key in s.totals ? number(s.totals[key]) : "–";
  }
  const state = $("state");
  state.textContent = s.paused ? "paused" : "running";
  state.className = "badge" + (s.paused ? " paused" : "");
  $("control").hidden = !s.allow_control;
  $("pause").disabled = s.paused;
  $("resume").disabled = !s.paused;
  renderPlots(s.history);
  fill($("workers"), s.workers.map((w) => row([
    [w.id], [w.host], [String(w.pid), "num"], [number(w.checked), "num"],
    [w.per_second.toFixed(1), "num"], [(w.heartbeat_age_ms / 1000).toFixed(1) + " s ago", "num"],
  ])), "no worker");
  fill($("backoffs"), s.backoffs.map((b) => row([
    [b.host], [b.state], [b.cause || "-"], [b.owner || "-"], [b.backoff_until || "-"],
    [b.last_status == null ? "-" : String(b.last_status)], [number(b.throttled), "num"],
  ])), "no host in trouble");
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
}

async function getJson(url, options) {
  const response = await fetch(url, Object.assign({ cache: "no-store" }, options));
  if (!response.ok) throw new Error(response.status + " " + (await response.text()).trim());
  return response.json();
}

async function refreshDead() {
  deadReadAt = Date.now();
  const q = encodeURIComponent($("search").value);
  const dead = await getJson("/api/dead?limit=50&q=" + q);
  fill($("dead"), dead.map((d) => row([
    [d.url, "url"], [d.status == null ? d.error_kind || "-" : String(d.status)], [d.checked_at],
  ])), "no dead link" + ($("search").value ? " matches" : ""));
}

async function poll() {
  try {
    render(await getJson("/api/state"));
    if (!$("search").value || Date.now() - deadReadAt >= SEARCH_POLL_MS) await refreshDead();
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
$("search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => refreshDead().catch(() => {}), 250);
});
poll();
