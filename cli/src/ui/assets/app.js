// annal ui: search as you type, local times, keyboard moves through a session, and pages that
// follow new records. Pages work without this script; it only fetches fragments this server
// rendered and escaped, and sets text (never markup of its own making from record text).
"use strict";

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

async function fragment(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) {
    // The error page's one line (the parser's message, say), read as text, never as markup.
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const line = page.querySelector(".failure");
    throw new Error(line ? line.textContent : `the server answered ${response.status}`);
  }
  return response.text();
}

function searchAsYouType() {
  const input = document.getElementById("q");
  if (!input) return;
  let results = document.getElementById("results");
  let problem = document.getElementById("search-problem");
  let asked = 0;
  const run = debounce(async () => {
    const q = input.value;
    if (!results) {
      if (q.trim().length < 2) return;
      const main = document.querySelector("main");
      main.replaceChildren();
      const heading = document.createElement("h1");
      heading.textContent = "Search";
      results = document.createElement("div");
      results.id = "results";
      main.append(heading, results);
    }
    if (!problem) {
      problem = document.createElement("p");
      problem.id = "search-problem";
      problem.className = "failure";
      results.before(problem);
    }
    const ticket = ++asked;
    // The last word may be half typed: it matches the words it starts.
    const prefix = /[\p{L}\p{N}]$/u.test(q) ? "&prefix=1" : "";
    const url = `/search?fragment=1${prefix}&q=${encodeURIComponent(q)}`;
    try {
      const html = await fragment(url);
      if (ticket !== asked) return; // a later keystroke's answer wins
      problem.textContent = "";
      results.innerHTML = html;
      history.replaceState(null, "", `/search?q=${encodeURIComponent(q)}${prefix}`);
    } catch (err) {
      // The previous results stay while the query is being typed.
      if (ticket === asked) problem.textContent = err.message;
    }
  }, 120);
  input.addEventListener("input", run);
}

// Times are written in UTC by the server; the reader sees them in their own zone, the list's
// also as "3 h ago", with the UTC time on hover.
function localTimes(root) {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const now = Date.now();
  for (const time of root.querySelectorAll("time[datetime]")) {
    const when = new Date(time.getAttribute("datetime"));
    if (Number.isNaN(when.getTime())) continue;
    time.title = time.getAttribute("datetime");
    const relative = time.dataset.relative;
    time.textContent = relative === "short" ? ago(now - when.getTime())
      : relative ? `${ago(now - when.getTime())} · ${format.format(when)}` : format.format(when);
  }
}

function ago(ms) {
  const minutes = Math.round(ms / 60000);
  if (minutes < 1) return "just now";
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  return days < 60 ? `${days} days ago` : `${Math.round(days / 30)} months ago`;
}

// A link to a record inside a fold opens the fold.
function openTarget() {
  if (!location.hash) return;
  const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  for (let node = target; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
  if (target) target.scrollIntoView();
}

// `/` searches; on a session, `j`/`k` move to the next or previous request, `e` opens (or
// closes) every fold of the current one up to the next request.
function keyboard() {
  let current = null;
  const turns = () => [...document.querySelectorAll("article.turn")];
  const move = (step) => {
    const all = turns();
    if (all.length === 0) return;
    let index = current ? all.indexOf(current) + step : 0;
    if (!current) {
      // The first request below the top of the screen (or above it, going back).
      const below = all.findIndex((t) => t.getBoundingClientRect().top > 1);
      index = step > 0 ? (below < 0 ? all.length - 1 : below) : Math.max(0, (below < 0 ? all.length : below) - 1);
    }
    index = Math.max(0, Math.min(all.length - 1, index));
    if (current) current.classList.remove("current");
    current = all[index];
    current.classList.add("current");
    current.scrollIntoView({ block: "start" });
    history.replaceState(null, "", `#${encodeURIComponent(current.id)}`);
  };
  const expand = () => {
    if (!current) move(1);
    if (!current) return;
    const folds = [...current.querySelectorAll("details")];
    for (let node = current.nextElementSibling; node && !node.classList.contains("turn"); node = node.nextElementSibling) {
      if (node.matches("details")) folds.push(node);
      folds.push(...node.querySelectorAll("details"));
      if (node.querySelector("article.turn")) break;
    }
    const open = folds.some((d) => !d.open);
    for (const fold of folds) fold.open = open;
  };
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const typing = event.target.closest("input, textarea, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const actions = { "/": () => document.getElementById("q")?.focus(), j: () => move(1), k: () => move(-1), e: expand };
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
}

function liveSessions() {
  const list = document.getElementById("sessions");
  if (!list || !window.EventSource) return;
  const events = new EventSource("/events");
  const reload = debounce(async () => {
    const url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    try {
      list.innerHTML = await fragment(url.pathname + url.search);
      localTimes(list);
    } catch (_) { /* next event retries */ }
  }, 300);
  events.addEventListener("changed", reload);
}

// The last page of a session takes the records appended after it was opened.
function liveTail() {
  const records = document.getElementById("records");
  if (!records || !records.dataset.last || !window.EventSource) return;
  const events = new EventSource("/events");
  const grow = debounce(async () => {
    const name = encodeURIComponent(records.dataset.session);
    try {
      const html = await fragment(`/session?name=${name}&tail=${records.dataset.next}`);
      const holder = document.createElement("div");
      holder.innerHTML = html;
      const orders = [...holder.querySelectorAll("article[data-order]")].map((a) => Number(a.dataset.order));
      if (orders.length === 0) return;
      records.dataset.next = String(Math.max(...orders) + 1);
      localTimes(holder);
      records.append(...holder.childNodes);
    } catch (_) { /* next event retries */ }
  }, 300);
  events.addEventListener("changed", grow);
}

// What the model saw answers before its chart of tokens per request is drawn: the chart is
// asked for then, and put where the page left room for it.
async function pendingChart() {
  const pending = document.querySelector("figure.chart[data-pending]");
  if (!pending) return;
  try {
    const holder = document.createElement("div");
    holder.innerHTML = await fragment(pending.dataset.pending);
    pending.replaceWith(...holder.childNodes);
  } catch (err) {
    pending.querySelector("p").textContent = err.message;
  }
}

// The sidebar keeps the session being read in view, wherever it is in the list.
function sidebarCurrent() {
  const bar = document.getElementById("sidebar");
  const current = bar && bar.querySelector("a[aria-current]");
  if (current) bar.scrollTop = current.parentElement.offsetTop - bar.clientHeight / 3;
}

document.addEventListener("DOMContentLoaded", () => {
  localTimes(document);
  sidebarCurrent();
  pendingChart();
  searchAsYouType();
  liveSessions();
  liveTail();
  keyboard();
  openTarget();
  window.addEventListener("hashchange", openTarget);
});
