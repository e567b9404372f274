//! A session's page: its records a page at a time (so a session of any length opens at once),
//! its place among its forks, whether its chain verifies; the link to any record by entry id;
//! and its export as Markdown or a self-contained HTML file, redacted on request.

use annal::{ExportFormat, ExportOptions, SessionInfo};
use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::layout::{beside, link};
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
    /// Only the records from this one on (up to a page), for the script that follows a session
    /// as it grows.
    tail: Option<u64>,
}

pub(crate) async fn page(
    State(ui): State<Shared>,
    Query(query): Query<SessionQuery>,
) -> Result<Html<String>, Failure> {
    blocking(&ui, move |ui| {
        let snapshot = ui.annal.snapshot()?;
        let info = session_info(&snapshot, &query.name)?;
        if let Some(tail) = query.tail {
            let range = tail.min(info.len)..(tail + PAGE_RECORDS).min(info.len);
            let guards = snapshot.records(&info.name, range)?.collect::<Result<Vec<_>, _>>()?;
            let views = guards.iter().map(|guard| guard.view()).collect::<Result<Vec<_>, _>>()?;
            return Ok(Html(records(&snapshot, &views, false)?.0.into_string()));
        }
        let from = match (query.at, query.from) {
            (Some(at), _) => at - at % PAGE_RECORDS,
            (None, Some(from)) => from,
            (None, None) => 0,
        }
        .min(info.len.saturating_sub(1) / PAGE_RECORDS * PAGE_RECORDS);
        let to = (from + PAGE_RECORDS).min(info.len);
        let guards = snapshot.records(&info.name, from..to)?.collect::<Result<Vec<_>, _>>()?;
        let views = guards.iter().map(|guard| guard.view()).collect::<Result<Vec<_>, _>>()?;
        let (records, outline) = records(&snapshot, &views, false)?;
        let family = family(&snapshot.sessions()?, &info);
        let verified = ui.annal.verify(Some(&info.name))?;
        let sidebar = super::sidebar::sidebar(ui, &info.name)?;
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
            @if !outline.is_empty() {
                details.outline open {
                    summary { "Requests on this page (" (outline.len()) ")" }
                    ol { @for (id, order, words) in &outline { li { a href={ "#" (id) } { "#" (order) " " (words) } } } }
                }
            }
            (pager(&info, from))
            div #records data-session=(info.name) data-next=(to) data-last=[(to == info.len).then_some("1")] { (records) }
            (pager(&info, from))
        };
        Ok(Html(beside(&info.name, sidebar, body).into_string()))
    })
    .await
}

/// A request in the page's outline: its entry id, order and first line.
type Turn = (String, u64, String);

/// The records of a page, runs of records with nothing to read of their own folded into one
/// line each, and the outline of the requests among them: entry id, order and first line.
fn records(
    snapshot: &annal::Snapshot,
    views: &[annal::snapshot::RecordView<'_>],
    redact: bool,
) -> Result<(Markup, Vec<Turn>), Failure> {
    let page = record::Page::of(snapshot, views, redact)?;
    let mut outline = Vec::new();
    let mut parts: Vec<Markup> = Vec::with_capacity(views.len());
    let mut quiet: Vec<Markup> = Vec::new();
    let mut quiet_orders = (0, 0);
    let flush = |quiet: &mut Vec<Markup>, orders: (u64, u64), parts: &mut Vec<Markup>| {
        if quiet.is_empty() {
            return;
        }
        let label = match quiet.len() {
            1 => format!("1 record without text of its own (#{})", orders.0),
            n => format!("{n} records without text of their own (#{}–#{})", orders.0, orders.1),
        };
        let run = std::mem::take(quiet);
        parts.push(html! { details.quiet { summary { (label) } @for r in &run { (r) } } });
    };
    for view in views {
        let rendered = record::render(snapshot, &page, view, None)?;
        if page.is_quiet(snapshot, view) {
            if quiet.is_empty() {
                quiet_orders.0 = view.source_order();
            }
            quiet_orders.1 = view.source_order();
            quiet.push(rendered);
            continue;
        }
        flush(&mut quiet, quiet_orders, &mut parts);
        if let Some(words) = page.request_words(snapshot, view) {
            let first = words.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let first = crate::output::cut(&super::markdown::visible_controls(first), 100);
            outline.push((view.entry_id().to_owned(), view.source_order(), first));
        }
        parts.push(rendered);
    }
    flush(&mut quiet, quiet_orders, &mut parts);
    Ok((html! { @for part in &parts { (part) } }, outline))
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
        let stem: String = query
            .name
            .chars()
            .map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' })
            .take(80)
            .collect();
        let (body, kind, extension) = match query.format.as_str() {
            "markdown" => {
                let mut markdown = Vec::new();
                let options = ExportOptions { format: ExportFormat::Markdown, redact };
                ui.annal.export(&query.name, &options, &mut markdown)?;
                (String::from_utf8_lossy(&markdown).into_owned(), "text/markdown; charset=utf-8", "md")
            }
            "html" => (standalone(ui, &query.name, redact)?, "text/html; charset=utf-8", "html"),
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

/// One HTML file that opens anywhere, read with the session page's own templates: every record
/// with its folds and diffs, the outline of requests, the stylesheet inside, a phone's viewport,
/// and no script (folds open without one).
fn standalone(ui: &super::Ui, name: &str, redact: bool) -> Result<String, Failure> {
    let snapshot = ui.annal.snapshot()?;
    let info = session_info(&snapshot, name)?;
    let guards = snapshot.records(&info.name, 0..info.len)?.collect::<Result<Vec<_>, _>>()?;
    let views = guards.iter().map(|guard| guard.view()).collect::<Result<Vec<_>, _>>()?;
    let (records, outline) = records(&snapshot, &views, redact)?;
    let page = html! {
        (maud::DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'";
                title { (info.name) " · annal" }
                style { (PreEscaped(include_str!("assets/app.css"))) }
            }
            body {
                main {
                    h1.session { (info.name) }
                    p.facts {
                        (count(info.len)) " records"
                        @if let (Some(first), Some(last)) = (views.first().and_then(|v| v.timestamp()), views.last().and_then(|v| v.timestamp())) {
                            " · " (first) " – " (last)
                        }
                        @if redact { " · secrets masked" }
                    }
                    @if !outline.is_empty() {
                        details.outline open {
                            summary { "Requests (" (outline.len()) ")" }
                            ol { @for (id, order, words) in &outline { li { a href={ "#" (id) } { "#" (order) " " (words) } } } }
                        }
                    }
                    div #records { (records) }
                }
            }
        }
    };
    Ok(page.into_string())
}
