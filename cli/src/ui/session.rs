//! A session's page: its records a page at a time (so a session of any length opens at once),
//! its place among its forks, whether its chain verifies; the link to any record by entry id;
//! and its export as Markdown or a self-contained HTML file, redacted on request.

use annal::{ExportFormat, ExportOptions, SessionInfo};
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::layout::{link, shell};
use super::{blocking, record, session_info, Failure, Shared};
use crate::output::count;

/// Records on one page.
pub(crate) const PAGE_RECORDS: u64 = 200;

#[derive(Debug, Deserialize)]
pub(crate) struct SessionQuery {
    name: String,
    /// The first record of the page.
    from: Option<u64>,
    /// A record the page must hold (the page is the one it falls on).
    at: Option<u64>,
}

pub(crate) async fn page(
    State(ui): State<Shared>,
    Query(query): Query<SessionQuery>,
) -> Result<Html<String>, Failure> {
    blocking(&ui, move |ui| {
        let snapshot = ui.annal.snapshot()?;
        let info = session_info(&snapshot, &query.name)?;
        let from = match (query.at, query.from) {
            (Some(at), _) => at - at % PAGE_RECORDS,
            (None, Some(from)) => from,
            (None, None) => 0,
        }
        .min(info.len.saturating_sub(1) / PAGE_RECORDS * PAGE_RECORDS);
        let to = (from + PAGE_RECORDS).min(info.len);
        let mut records = Vec::new();
        for guard in snapshot.records(&info.name, from..to)? {
            let guard = guard?;
            records.push(record::render(&snapshot, &guard.view()?, None)?);
        }
        let family = family(&snapshot.sessions()?, &info);
        let verified = ui.annal.verify(Some(&info.name))?;
        let body = html! {
            h1.session { (info.name) }
            p.facts {
                (count(info.len)) " records"
                @if let (Some(parent), Some(at)) = (&info.parent, info.fork_at) {
                    " · forked from " a href=(link("/session", &[("name", parent)])) { (parent) } " at #" (at)
                }
                " · "
                @if verified.is_ok() { span.verified { "chain verified" } }
                @else { span.broken { "chain does not verify: " (verified.problems.len()) " problems" } }
            }
            nav.actions {
                a href=(link("/seen", &[("name", &info.name)])) { "What the model saw" }
                a href=(link("/export", &[("name", &info.name), ("format", "markdown")])) { "Export Markdown" }
                a href=(link("/export", &[("name", &info.name), ("format", "html")])) { "Export HTML" }
                a href=(link("/export", &[("name", &info.name), ("format", "html"), ("redact", "1")])) { "Export HTML, redacted" }
            }
            @if family.len() > 1 { section.forks { h2 { "Forks" } (tree(&family, None, &info.name)) } }
            (pager(&info, from))
            @for rendered in &records { (rendered) }
            (pager(&info, from))
        };
        Ok(Html(shell(&info.name, None, body).into_string()))
    })
    .await
}

/// Previous and next pages, and where this one is.
fn pager(info: &SessionInfo, from: u64) -> Markup {
    let to = (from + PAGE_RECORDS).min(info.len);
    let page_link = |from: u64| link("/session", &[("name", &info.name), ("from", &from.to_string())]);
    let last = info.len.saturating_sub(1) / PAGE_RECORDS * PAGE_RECORDS;
    html! {
        nav.pager {
            @if from > 0 {
                a href=(page_link(0)) { "First" }
                a rel="prev" href=(page_link(from - PAGE_RECORDS.min(from))) { "Previous" }
            }
            span { "records " (count(from)) "–" (count(to.saturating_sub(1))) " of " (count(info.len)) }
            @if to < info.len {
                a rel="next" href=(page_link(from + PAGE_RECORDS)) { "Next" }
                a href=(page_link(last)) { "Last" }
            }
        }
    }
}

/// The sessions related to `info` by forking: from its oldest ancestor down.
fn family(sessions: &[SessionInfo], info: &SessionInfo) -> Vec<SessionInfo> {
    let mut root = info.clone();
    while let Some(parent) = root.parent.as_ref().and_then(|p| sessions.iter().find(|s| &s.name == p)) {
        root = parent.clone();
    }
    let mut members = vec![root];
    let mut index = 0;
    while index < members.len() {
        let name = members[index].name.clone();
        members.extend(sessions.iter().filter(|s| s.parent.as_deref() == Some(&name)).cloned());
        index += 1;
    }
    members
}

/// The fork tree under `parent` (the root when `None`), `current` marked.
fn tree(family: &[SessionInfo], parent: Option<&str>, current: &str) -> Markup {
    let children: Vec<&SessionInfo> = family
        .iter()
        .filter(|s| match parent {
            None => family.iter().all(|other| Some(&other.name) != s.parent.as_ref()),
            Some(parent) => s.parent.as_deref() == Some(parent),
        })
        .collect();
    html! {
        ul.tree {
            @for child in children {
                li {
                    @if child.name == current { strong { (child.name) } }
                    @else { a href=(link("/session", &[("name", &child.name)])) { (child.name) } }
                    @if let Some(at) = child.fork_at { " (from #" (at) ", " (count(child.len)) " records)" }
                    @else { " (" (count(child.len)) " records)" }
                    (tree(family, Some(&child.name), current))
                }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct RecordQuery {
    id: String,
}

/// `/record?id=ENTRY`: the session page holding that record, scrolled to it.
pub(crate) async fn record(
    State(ui): State<Shared>,
    Query(query): Query<RecordQuery>,
) -> Result<Redirect, Failure> {
    blocking(&ui, move |ui| {
        let snapshot = ui.annal.snapshot()?;
        let location = snapshot
            .entry(&query.id)?
            .ok_or_else(|| Failure::not_found(format!("no record with id {:?}", query.id)))?;
        Ok(Redirect::to(&super::layout::record_link(&location.session, location.source_order, &query.id)))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub(crate) struct ExportQuery {
    name: String,
    format: String,
    redact: Option<String>,
}

/// `/export`: the session as Markdown (`annal export --format markdown`) or as one HTML file
/// with its styles inside, both redacted when asked.
pub(crate) async fn export(
    State(ui): State<Shared>,
    Query(query): Query<ExportQuery>,
) -> Result<Response, Failure> {
    blocking(&ui, move |ui| {
        let redact = query.redact.as_deref().is_some_and(|v| v == "1");
        let mut markdown = Vec::new();
        let options = ExportOptions { format: ExportFormat::Markdown, redact };
        ui.annal.export(&query.name, &options, &mut markdown)?;
        let markdown = String::from_utf8_lossy(&markdown).into_owned();
        let stem: String = query
            .name
            .chars()
            .map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' })
            .take(80)
            .collect();
        let (body, kind, extension) = match query.format.as_str() {
            "markdown" => (markdown, "text/markdown; charset=utf-8", "md"),
            "html" => (standalone(&query.name, &markdown).into_string(), "text/html; charset=utf-8", "html"),
            other => {
                return Err(Failure::bad_request(format!("no export format {other:?}; markdown or html")))
            }
        };
        let disposition = format!("attachment; filename=\"{stem}.{extension}\"");
        Ok(([(header::CONTENT_TYPE, kind.to_owned()), (header::CONTENT_DISPOSITION, disposition)], body)
            .into_response())
    })
    .await
}

/// One HTML file that opens anywhere: the export's Markdown rendered safely, styles inside.
fn standalone(name: &str, markdown: &str) -> Markup {
    html! {
        (maud::DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'";
                title { (name) }
                style { (PreEscaped(include_str!("assets/app.css"))) }
            }
            body { main { (super::markdown::render(markdown)) } }
        }
    }
}
