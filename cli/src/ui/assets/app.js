// annal ui: search as you type and a session list that follows new records. Pages work
// without this script; it only fetches fragments this server rendered and escaped.
"use strict";

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

async function fragment(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) {
    // The error page's one line (a query too deep, say), read as text, never as markup.
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const line = page.querySelector(".failure");
    throw new Error(line ? line.textContent : `${response.status}`);
  }
  return response.text();
}

function searchAsYouType() {
  const input = document.getElementById("q");
  if (!input) return;
  let results = document.getElementById("results");
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
    const ticket = ++asked;
    const url = `/search?fragment=1&q=${encodeURIComponent(q)}`;
    try {
      const html = await fragment(url);
      if (ticket !== asked) return; // a later keystroke's answer wins
      results.innerHTML = html;
      history.replaceState(null, "", `/search?q=${encodeURIComponent(q)}`);
    } catch (err) {
      results.textContent = `search failed: ${err.message}`;
    }
  }, 120);
  input.addEventListener("input", run);
}

function liveSessions() {
  const list = document.getElementById("sessions");
  if (!list || !window.EventSource) return;
  const events = new EventSource("/events");
  const reload = debounce(async () => {
    const url = new URL(window.location.href);
    url.searchParams.set("fragment", "1");
    try { list.innerHTML = await fragment(url.pathname + url.search); } catch (_) { /* next event retries */ }
  }, 300);
  events.addEventListener("changed", reload);
}

document.addEventListener("DOMContentLoaded", () => { searchAsYouType(); liveSessions(); });
