//! The session list (newest first, filtered by agent and project, refreshed live from the
//! server's events) and search over every original with the syntax of `annal history search`.

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
        let pick = |wanted: &Option<String>, value: &str| wanted.as_deref().is_none_or(|w| w.is_empty() || w == value);
        let shown: Vec<&Summary> =
            all.iter().filter(|s| pick(&query.agent, &s.agent) && pick(&query.project, &s.project)).collect();
        let table = session_table(&shown, all.len());
        if query.fragment.is_some() {
            return Ok(Html(table.into_string()));
        }
        let mut agents: Vec<&str> = all.iter().map(|s| s.agent.as_str()).filter(|a| !a.is_empty()).collect();
        agents.sort_unstable();
        agents.dedup();
        let mut projects: Vec<&str> = all.iter().map(|s| s.project.as_str()).filter(|p| !p.is_empty()).collect();
        projects.sort_unstable();
        projects.dedup();
        let body = html! {
            h1 { "Sessions" }
            form.filters method="get" action="/" {
                label { "Agent " select name="agent" {
                    option value="" { "all" }
                    @for agent in &agents { option value=(agent) selected[query.agent.as_deref() == Some(agent)] { (agent) } }
                } }
                label { "Project " select name="project" {
                    option value="" { "all" }
                    @for project in &projects { option value=(project) selected[query.project.as_deref() == Some(project)] { (project) } }
                } }
                button type="submit" { "Filter" }
            }
            div #sessions data-live="1" { (table) }
        };
        Ok(Html(shell("Sessions", None, body).into_string()))
    })
    .await
}

fn session_table(shown: &[&Summary], total: usize) -> Markup {
    html! {
        p.count { (count(shown.len() as u64)) " of " (count(total as u64)) " sessions" }
        table.sessions {
            thead { tr { th { "session" } th { "agent" } th { "project" } th { "first request" } th.num { "records" } th.num { "tokens" } th { "time" } } }
            tbody {
                @for s in shown {
                    tr {
                        td.name { a href=(link("/session", &[("name", &s.name)])) { (s.name) }
                            @if let (Some(parent), Some(at)) = (&s.parent, s.fork_at) { br; small { "fork of " (parent) " at #" (at) } } }
                        td { (s.agent) }
                        td.project { (s.project) }
                        td.request { (s.first_request) }
                        td.num { (count(s.records)) }
                        td.num { (count(s.tokens)) }
                        td.time { (span(s)) }
                    }
                }
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
            ui.annal.search(&request)?
        };
        let results = html! {
            p.count { (hits.len()) @if hits.len() == 50 { "+" } " hits" }
            ol.hits {
                @for hit in &hits {
                    li.hit {
                        a href=(record_link(&hit.session, hit.source_order, &hit.entry_id)) {
                            span.session { (hit.session) } " #" (hit.source_order) " " span.role { (hit.role.as_str()) }
                            @if let Some(tool) = &hit.tool { " " span.tool { (tool) } }
                            @if hit.is_error { " " span.broken { "failed" } }
                        }
                        p.snippet { (highlighted(&hit.snippet.text, &hit.snippet.highlights)) }
                    }
                }
            }
        };
        if query.fragment.is_some() {
            return Ok(Html(results.into_string()));
        }
        let body = html! { h1 { "Search" } div #results { (results) } };
        Ok(Html(shell("Search", Some(&text), body).into_string()))
    })
    .await
}

/// The snippet with its matches in `<mark>`, every part escaped.
fn highlighted(text: &str, highlights: &[std::ops::Range<usize>]) -> Markup {
    let mut out = String::with_capacity(text.len() + highlights.len() * 13);
    let mut at = 0;
    for range in highlights {
        let (Some(before), Some(marked)) = (text.get(at..range.start), text.get(range.clone())) else {
            continue;
        };
        out.push_str(&html! { (before) }.into_string());
        out.push_str(&html! { mark { (marked) } }.into_string());
        at = range.end;
    }
    out.push_str(&html! { (text.get(at..).unwrap_or("")) }.into_string());
    html! { (PreEscaped(out)) }
}
