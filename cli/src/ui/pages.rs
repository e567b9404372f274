//! The session list (newest first, filtered by agent and project, refreshed live from the
//! server's events) and search over every original with the syntax of `annal history search`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use annal::{Role, SearchRequest};
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::Html;
use futures_util::stream::{self, Stream};
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::catalog::Summary;
use super::layout::{link, record_link, shell};
use super::{blocking, catalog, Failure, Shared};
use crate::output::count;

/// How often the event stream looks for new records.
const EVENT_POLL: Duration = Duration::from_millis(500);

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListQuery {
    agent: Option<String>,
    project: Option<String>,
    /// Only the table, for the script that refreshes it.
    fragment: Option<String>,
}

pub(crate) async fn sessions(
    State(ui): State<Shared>,
    Query(query): Query<ListQuery>,
) -> Result<Html<String>, Failure> {
    blocking(&ui, move |ui| {
        let all = catalog(ui).refresh(&ui.annal)?;
        let pick = |wanted: &Option<String>, value: &str| {
            wanted.as_deref().is_none_or(|w| w.is_empty() || w == value)
        };
        let shown: Vec<&Summary> =
            all.iter().filter(|s| pick(&query.agent, &s.agent) && pick(&query.project, &s.project)).collect();
        let table = session_table(&shown, all.len());
        if query.fragment.is_some() {
            return Ok(Html(table.into_string()));
        }
        let mut agents: Vec<&str> = all.iter().map(|s| s.agent.as_str()).filter(|a| !a.is_empty()).collect();
        agents.sort_unstable();
        agents.dedup();
        let mut projects: Vec<&str> =
            all.iter().map(|s| s.project.as_str()).filter(|p| !p.is_empty()).collect();
        projects.sort_unstable();
        projects.dedup();
        let body = html! {
            h1 { "Sessions" }
            (chips("Agent", "agent", &agents, &query))
            (chips("Project", "project", &projects, &query))
            div #sessions data-live="1" { (table) }
        };
        Ok(Html(shell("Sessions", None, body).into_string()))
    })
    .await
}

/// One filter as a row of links, the chosen one marked; each keeps the other filter.
fn chips(label: &str, key: &str, values: &[&str], query: &ListQuery) -> Markup {
    let chosen = match key {
        "agent" => query.agent.as_deref(),
        _ => query.project.as_deref(),
    }
    .filter(|v| !v.is_empty());
    let other = match key {
        "agent" => ("project", query.project.as_deref().unwrap_or("")),
        _ => ("agent", query.agent.as_deref().unwrap_or("")),
    };
    let href = |value: &str| {
        let pairs: Vec<(&str, &str)> =
            [(key, value), other].into_iter().filter(|(_, v)| !v.is_empty()).collect();
        link("/", &pairs)
    };
    html! {
        nav.chips aria-label=(label) {
            span.chip-label { (label) }
            a.chip.chosen[chosen.is_none()] href=(href("")) { "all" }
            @for value in values {
                a.chip.chosen[chosen == Some(*value)] href=(href(value)) title=(value) { (short_folder(value)) }
            }
        }
    }
}

/// A project folder by its last two parts: the list is read by project name, not by path.
fn short_folder(path: &str) -> String {
    let parts: Vec<&str> = path.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).take(2).collect();
    match parts.as_slice() {
        [last, parent] if !parent.is_empty() => format!("{parent}/{last}"),
        [last, ..] if !last.is_empty() => (*last).to_owned(),
        _ => path.to_owned(),
    }
}

fn session_table(shown: &[&Summary], total: usize) -> Markup {
    html! {
        p.count { (count(shown.len() as u64)) " of " (count(total as u64)) " sessions" }
        table.sessions {
            thead {
                tr {
                    th { "session" } th { "agent" } th { "model" } th { "project" } th.num { "records" }
                    th.num title=(TOKENS_SOURCE) { "tokens" } th { "time" }
                }
            }
            tbody {
                @for s in shown {
                    tr {
                        td.title {
                            a href=(link("/session", &[("name", &s.name)])) {
                                @if s.first_request.is_empty() { (s.name) } @else { (s.first_request) }
                            }
                            @if !s.first_request.is_empty() { small.name { (s.name) } }
                            @if let (Some(parent), Some(at)) = (&s.parent, s.fork_at) { small { "fork of " (parent) " at #" (at) } }
                        }
                        td.agent { (s.agent) }
                        td.model title="the model the agent recorded on the session's first and last records" { (s.models.join(", ")) }
                        td.project title=(s.project) { (short_folder(&s.project)) }
                        td.num data-unit="records" { (count(s.records)) }
                        td.num data-unit="tokens" title=(TOKENS_SOURCE) { (count(s.tokens)) }
                        td.time { (when(s)) }
                    }
                }
            }
        }
    }
}

/// Where the list's tokens come from.
const TOKENS_SOURCE: &str = "the store's estimate of the records' tokens, as projections count them";

/// When a session was written: its time span, or for a session whose records carry no time,
/// that it has none and where the list places it.
fn when(summary: &Summary) -> Markup {
    html! {
        @if let Some(last) = &summary.last_time {
            time datetime=(last) data-relative="1" { (span(summary)) }
        } @else {
            span.untimed title="its records carry no time; listed as of when it was written to the store, beside the sessions written just before it" {
                "no time recorded"
            }
        }
    }
}

/// The first and last timestamps, the second without the date when it is the same day.
fn span(summary: &Summary) -> String {
    let short = |t: &str| t.get(..16).unwrap_or(t).replace('T', " ");
    match (&summary.first_time, &summary.last_time) {
        (Some(first), Some(last)) if first.get(..10) == last.get(..10) => {
            format!("{} – {}", short(first), last.get(11..16).unwrap_or(""))
        }
        (Some(first), Some(last)) => format!("{} – {}", short(first), short(last)),
        _ => String::new(),
    }
}

/// Server-sent events: `changed` whenever the store's journal has grown, so the list reloads.
pub(crate) async fn events(State(ui): State<Shared>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let start = end_position(&ui).await;
    let stream = stream::unfold((ui, start), |(ui, mut seen)| async move {
        loop {
            tokio::time::sleep(EVENT_POLL).await;
            let end = end_position(&ui).await;
            if end > seen {
                seen = end;
                return Some((Ok(Event::default().event("changed").data(end.to_string())), (ui, seen)));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

async fn end_position(ui: &Shared) -> u64 {
    blocking(ui, |ui| Ok(ui.annal.snapshot()?.position_end()?)).await.unwrap_or(0)
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct SearchQuery {
    q: Option<String>,
    session: Option<String>,
    role: Option<String>,
    tool: Option<String>,
    errors: Option<String>,
    fragment: Option<String>,
    /// `1`: the last word is still being typed, and matches the words it starts.
    prefix: Option<String>,
}

pub(crate) async fn search(
    State(ui): State<Shared>,
    Query(query): Query<SearchQuery>,
) -> Result<Html<String>, Failure> {
    blocking(&ui, move |ui| {
        let text = query.q.clone().unwrap_or_default();
        let hits = if text.trim().is_empty() {
            Vec::new()
        } else {
            let mut request = SearchRequest::new(text.clone());
            request.limit = 50;
            request.session = query.session.clone().filter(|s| !s.is_empty());
            request.role = query.role.as_deref().and_then(Role::parse);
            request.tool = query.tool.clone().filter(|t| !t.is_empty());
            request.errors_only = query.errors.as_deref() == Some("1");
            request.prefix_last = query.prefix.as_deref() == Some("1");
            ui.annal.search(&request)?
        };
        let titles = catalog(ui).titles();
        let results = hit_groups(&hits, &titles);
        if query.fragment.is_some() {
            return Ok(Html(results.into_string()));
        }
        let body = html! { h1 { "Search" } div #results { (results) } };
        Ok(Html(shell("Search", Some(&text), body).into_string()))
    })
    .await
}

/// The hits, best first, grouped by session (in the order of each session's best hit), each
/// session under its title.
fn hit_groups(hits: &[annal::Hit], titles: &HashMap<String, String>) -> Markup {
    let mut groups: Vec<(&str, Vec<&annal::Hit>)> = Vec::new();
    for hit in hits {
        match groups.iter_mut().find(|(session, _)| *session == hit.session) {
            Some((_, group)) => group.push(hit),
            None => groups.push((&hit.session, vec![hit])),
        }
    }
    html! {
        p.count { (hits.len()) @if hits.len() == 50 { "+" } " hits" @if groups.len() > 1 { " in " (groups.len()) " sessions" } }
        @for (session, group) in &groups {
            section.hit-group {
                h2 {
                    a href=(link("/session", &[("name", session)])) {
                        (titles.get(*session).filter(|t| !t.is_empty()).map_or(*session, String::as_str))
                    }
                    " " small { (session) " · " (group.len()) @if group.len() == 1 { " hit" } @else { " hits" } }
                }
                ol.hits {
                    @for hit in group {
                        li.hit {
                            a href=(record_link(&hit.session, hit.source_order, &hit.entry_id)) {
                                "#" (hit.source_order) " " span.role { (hit.role.as_str()) }
                                @if let Some(tool) = &hit.tool { " " span.tool { (tool) } }
                                @if hit.is_error { " " span.broken { "failed" } }
                            }
                            p.snippet { (highlighted(&hit.snippet.text, &hit.snippet.highlights, hit.kind == "toolCall")) }
                        }
                    }
                }
            }
        }
    }
}

/// A tool call's input is JSON: its punctuation left out (`{"content":"x","path":"y"}` reads
/// `content: x · path: y`) and its escapes read as what they stand for, so a hit shows the
/// matched text rather than the JSON around it.
fn unescaped(text: &str, json: bool) -> std::borrow::Cow<'_, str> {
    if !json || !text.contains(['\\', '"', '{']) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match (c, next) {
            ('\\', Some(escaped)) => {
                chars.next();
                match escaped {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    '"' | '\\' | '/' => out.push(escaped),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            ('{', Some('"')) | ('"', Some('}')) => {
                chars.next();
            }
            ('"', Some(':')) => {
                chars.next();
                chars.next_if_eq(&'"');
                out.push_str(": ");
            }
            ('"', Some(',')) => {
                chars.next();
                chars.next_if_eq(&'"');
                out.push_str(" · ");
            }
            ('"', _) => {}
            (c, _) => out.push(c),
        }
    }
    out.into()
}

/// The snippet with its matches in `<mark>`, every part escaped.
fn highlighted(text: &str, highlights: &[std::ops::Range<usize>], json: bool) -> Markup {
    let mut out = String::with_capacity(text.len() + highlights.len() * 13);
    let mut at = 0;
    for range in highlights {
        let (Some(before), Some(marked)) = (text.get(at..range.start), text.get(range.clone())) else {
            continue;
        };
        out.push_str(&html! { (unescaped(before, json)) }.into_string());
        out.push_str(&html! { mark { (unescaped(marked, json)) } }.into_string());
        at = range.end;
    }
    out.push_str(&html! { (unescaped(text.get(at..).unwrap_or(""), json)) }.into_string());
    html! { (PreEscaped(out)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_calls_json_reads_as_its_text() {
        let json = r##"{"content":"# Obsidian sync\nfirst \"line\" 日本語\u3000🦀","file_path":"a\\b.md"}"##;
        assert_eq!(
            unescaped(json, true),
            "content: # Obsidian sync\nfirst \"line\" 日本語\\u3000🦀 · file_path: a\\b.md"
        );
        assert_eq!(unescaped(json, false), json, "other blocks are shown as written");
        // A snippet cut inside a string, and a quote at its edge.
        assert_eq!(unescaped(r#"sync\nfirst \"li"#, true), "sync\nfirst \"li");
        assert_eq!(unescaped(r#"ne","path"#, true), "ne · path");
    }
}
