//! "What the model saw": a session's projection at a window the user picks (the presets of the
//! retention exam), beside the originals: what was kept verbatim, cut, reduced to a marker or
//! put behind the evidence index, each from the projection's own list of omissions.

use std::sync::{Arc, OnceLock};

use annal::{
    Budget, Message, MessageBlock, Omission, OmissionReason, ProjectOptions, Projection, ViewSource,
};
use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::layout::{beside, link, record_link};
use super::{blocking, charts, markdown, session_info, Failure, Shared};
use crate::output::{bytes as size, count};

#[derive(Debug, Deserialize)]
pub(crate) struct SeenQuery {
    name: String,
    window: Option<String>,
    /// The page of messages as sent (from 0).
    page: Option<usize>,
    /// `chart`: only the chart of tokens per request, for the script that puts it in the page
    /// when it was still being drawn.
    part: Option<String>,
}

/// Messages as sent on one page.
const PAGE_MESSAGES: usize = 200;

/// Sessions and windows whose rendered pages are kept (a 17,800-record session's at 1M take
/// about 8 MB).
const CACHED_PAGES_MAX: usize = 8;

/// One session's page at one window: its facts, timeline and omission list rendered, its
/// messages as sent kept as the projection gave them and each page of them rendered when first
/// asked for (a 17,800-record session's 1M view renders to 8 MB, and a reader looks at one
/// page), and its chart of tokens per request drawn once, after the first page is answered (a
/// projection per request it draws). Kept until the session grows (its length is its head:
/// records are only ever appended, a compaction's receipt among them).
#[derive(Debug)]
pub(crate) struct Rendered {
    len: u64,
    budget: Budget,
    head: String,
    omissions: String,
    messages: Vec<Message<'static>>,
    pages: Vec<OnceLock<String>>,
    /// The user requests the chart draws, by sourceOrder.
    requests: Vec<u64>,
    chart: OnceLock<String>,
}

impl Rendered {
    /// Page `page` of the messages as sent (the last when past it), rendered once.
    fn page(&self, page: usize) -> &str {
        let page = page.min(self.pages.len() - 1);
        self.pages[page].get_or_init(|| {
            let end = ((page + 1) * PAGE_MESSAGES).min(self.messages.len());
            let shown = self.messages.get(page * PAGE_MESSAGES..end).unwrap_or(&[]);
            html! { @for m in shown { (message(m)) } }.into_string()
        })
    }

    /// The chart of tokens per request, drawn once: a caller that comes while another draws it
    /// waits for that drawing. A failed projection is the chart's one line, not the page's end.
    fn chart(&self, ui: &super::Ui, session: &str) -> &str {
        self.chart.get_or_init(|| {
            let drawn = match charts::per_request(ui, session, self.budget, &self.requests) {
                Ok(points) => charts::chart(session, self.budget, &points),
                Err(failure) => {
                    html! { figure.chart { p.failure { "Cannot draw the chart: " (failure.message) } } }
                }
            };
            drawn.into_string()
        })
    }
}

/// Rendered pages by session and window label.
pub(crate) type Cache = std::collections::HashMap<(String, &'static str), Arc<Rendered>>;

pub(crate) async fn page(
    State(ui): State<Shared>,
    Query(query): Query<SeenQuery>,
) -> Result<Html<String>, Failure> {
    let shared = ui.clone();
    blocking(&ui, move |ui| {
        let (label, budget) = window(query.window.as_deref())?;
        let snapshot = ui.annal.snapshot()?;
        let info = session_info(&snapshot, &query.name)?;
        let rendered = rendered(ui, &snapshot, &info, label, budget)?;
        if query.part.as_deref() == Some("chart") {
            return Ok(Html(rendered.chart(ui, &info.name).to_owned()));
        }
        let page = query.page.unwrap_or(0).min(rendered.pages.len() - 1);
        let body = body(&rendered, &info.name, label, page);
        let sidebar = super::sidebar::sidebar(ui, &info.name)?;
        let page = beside(&format!("What the model saw: {}", info.name), sidebar, body).into_string();
        if rendered.chart.get().is_none() {
            draw_chart_later(rendered, shared, info.name.clone());
        }
        Ok(Html(page))
    })
    .await
}

/// The preset window of this label (32K when none is asked for), and its budget.
fn window(label: Option<&str>) -> Result<(&'static str, Budget), Failure> {
    let label = label.unwrap_or("32K");
    let Some(&(label, window, output)) = Budget::WINDOWS.iter().find(|(l, ..)| *l == label) else {
        return Err(Failure::bad_request(format!("no window {label:?}; one of 16K, 32K, 128K, 200K, 1M")));
    };
    Ok((label, Budget::new(window, output)))
}

fn page_link(name: &str, label: &str, page: usize) -> String {
    link("/seen", &[("name", name), ("window", label), ("page", &page.to_string())])
}

/// The page's body: the window presets, the facts and timeline, the chart (or where it will
/// be), the messages as sent on page `page` and what was left out.
fn body(rendered: &Rendered, name: &str, label: &'static str, page: usize) -> Markup {
    let pages = rendered.pages.len();
    let pager = pager(rendered, name, label, page);
    let chart_link = link("/seen", &[("name", name), ("window", label), ("part", "chart")]);
    html! {
        h1.session { "What the model saw: " a href=(link("/session", &[("name", name)])) { (name) } }
        nav.presets {
            "Window: "
            @for (preset, ..) in Budget::WINDOWS {
                @if preset == label { strong { (preset) } }
                @else { a href=(link("/seen", &[("name", name), ("window", preset)])) { (preset) } }
            }
        }
        (PreEscaped(&rendered.head))
        @match rendered.chart.get() {
            Some(chart) => (PreEscaped(chart)),
            None => figure.chart data-pending=(chart_link) {
                p.pending {
                    "The chart of tokens sent with each request is being drawn (" (rendered.requests.len()) " views). "
                    a href=(page_link(name, label, page)) { "Reload" } " to see it."
                }
            },
        }
        div.seen {
            section.sent {
                h2 { "Sent to the model (" (count(rendered.messages.len() as u64)) " messages)" }
                (pager)
                (PreEscaped(rendered.page(page)))
                @if pages > 1 { (pager) }
            }
            section.left-out { (PreEscaped(&rendered.omissions)) }
        }
    }
}

/// Links to the first, previous, next and last pages of messages, and which ones are shown.
fn pager(rendered: &Rendered, name: &str, label: &str, page: usize) -> Markup {
    let pages = rendered.pages.len();
    let messages = rendered.messages.len();
    let shown = messages.min((page + 1) * PAGE_MESSAGES) - (page * PAGE_MESSAGES).min(messages);
    let page_link = |page: usize| page_link(name, label, page);
    html! {
        nav.pager {
            @if page > 0 { a href=(page_link(0)) { "First" } a rel="prev" href=(page_link(page - 1)) { "Previous" } }
            span { "messages " (count((page * PAGE_MESSAGES) as u64)) "–" (count((page * PAGE_MESSAGES + shown).saturating_sub(1) as u64)) " of " (count(messages as u64)) }
            @if page + 1 < pages { a rel="next" href=(page_link(page + 1)) { "Next" } a href=(page_link(pages - 1)) { "Last" } }
        }
    }
}

/// Draws the chart once this page is made, so the two do not share the cores; the page's
/// script asks for it (`part=chart`). Without a thread, that request draws it.
fn draw_chart_later(rendered: Arc<Rendered>, ui: Shared, session: String) {
    let _ = std::thread::Builder::new().name("annal-ui-chart".into()).spawn(move || {
        rendered.chart(&ui, &session);
    });
}

/// The session's page at a window from the cache, or rendered and kept.
fn rendered(
    ui: &super::Ui,
    snapshot: &annal::Snapshot,
    info: &annal::SessionInfo,
    label: &'static str,
    budget: Budget,
) -> Result<Arc<Rendered>, Failure> {
    let key = (info.name.clone(), label);
    if let Some(cached) = super::seen_cache(ui).get(&key).filter(|r| r.len == info.len) {
        return Ok(cached.clone());
    }
    let rendered = Arc::new(render(ui, snapshot, info, budget)?);
    let mut cache = super::seen_cache(ui);
    // A reader goes through one session at a time: older lengths of it go, and other
    // sessions' pages once there are several.
    cache.retain(|(name, _), r| name != &info.name || r.len == info.len);
    if cache.len() >= CACHED_PAGES_MAX {
        cache.retain(|(name, _), _| name == &info.name);
    }
    cache.insert(key, rendered.clone());
    Ok(rendered)
}

/// The parts of the page that depend on the session and window only: its facts, timeline and
/// the omission list rendered, the messages as sent kept for their pages, the requests the
/// chart will draw.
fn render(
    ui: &super::Ui,
    snapshot: &annal::Snapshot,
    info: &annal::SessionInfo,
    budget: Budget,
) -> Result<Rendered, Failure> {
    let digests = snapshot.digests(&info.name, 0..info.len)?;
    let receipts = charts::receipts(snapshot, &info.name, &digests)?;
    let projection = ui.annal.project(&info.name, &ProjectOptions::new(budget))?;
    let head = html! {
        (facts(&projection, budget, &info.name))
        (charts::timeline(&info.name, info.len, &projection, &receipts))
    };
    let omissions = html! {
        h2 { "Left out or reduced (" (projection.omissions.len()) ")" }
        @if projection.omissions.is_empty() { p { "Nothing: every original is sent verbatim." } }
        @else { (omissions(&info.name, &projection.omissions)) }
    };
    let pages = projection.messages.len().div_ceil(PAGE_MESSAGES).max(1);
    Ok(Rendered {
        len: info.len,
        budget,
        head: head.into_string(),
        omissions: omissions.into_string(),
        messages: projection.messages,
        pages: (0..pages).map(|_| OnceLock::new()).collect(),
        requests: charts::requests(&digests),
        chart: OnceLock::new(),
    })
}

/// Where the view came from and its tokens against the window.
fn facts(projection: &Projection<'_>, budget: Budget, session: &str) -> Markup {
    let stats = &projection.stats;
    let capacity = u64::from(budget.capacity_tokens()).max(1);
    let percent = (stats.tokens.total * 100 / capacity).min(100);
    html! {
        p.facts {
            @match &projection.source {
                ViewSource::Live => "Every record verbatim: the session fits under the compaction trigger.",
                ViewSource::Derived => "Derived from the originals now: the session is over the trigger and has no checkpoint that applies.",
                ViewSource::Checkpoint { receipt, .. } => {
                    "From the compaction checkpoint made current by "
                    a href=(link("/session", &[("name", session), ("at", &receipt.to_string())])) { "receipt #" (receipt) }
                    ", then every later record verbatim."
                }
            }
        }
        // A meter element, not a styled bar: the page's policy allows no inline style.
        meter.tokens min="0" max=(capacity) value=(stats.tokens.total.min(capacity)) title={ (percent) "% of the room for the view" } {
            (percent) "%"
        }
        table.parts {
            tr { th { "tokens sent" } td { (count(stats.tokens.total)) " of " (count(capacity)) " (window " (count(u64::from(budget.window_tokens))) ", output " (count(u64::from(budget.max_output_tokens))) ")" } }
            tr { th { "user" } td { (count(stats.tokens.user)) } }
            tr { th { "assistant" } td { (count(stats.tokens.assistant)) } }
            tr { th { "recent tail" } td { (count(stats.tokens.tail)) } }
            tr { th { "evidence index" } td { (count(stats.tokens.evidence)) } }
            tr { th { "markers" } td { (count(stats.tokens.markers)) } }
            tr { th { "summary" } td { (count(stats.tokens.summary)) } }
            tr { th { "records" } td { (count(stats.records)) ", tail from #" (stats.tail_start) } }
            tr { th { "kept" } td { (stats.kept.user_messages) " user messages (" (stats.kept.user_messages_cut) " cut), " (stats.kept.assistant_outputs) " assistant outputs, " (stats.kept.tail_records) " tail records, " (stats.kept.evidence_rows) " evidence rows" } }
        }
    }
}

/// An omission's class on the page and its label.
pub(crate) fn reason(omission: &Omission) -> (&'static str, String) {
    match omission.reason {
        OmissionReason::Marker => ("marker", "reduced to a marker".to_owned()),
        OmissionReason::UserCut => ("user-cut", "user message cut to head and tail".to_owned()),
        OmissionReason::BlockCut { block } => ("block-cut", format!("block {block} cut to head and tail")),
        OmissionReason::ToolRecords { results, rows } => (
            "tool-records",
            format!("tool records behind the evidence index ({rows} of {results} results as rows)"),
        ),
        _ => ("other", omission.reason.as_str().to_owned()),
    }
}

/// The omission list, in the order the projection gives it, each range linked to its originals.
fn omissions(session: &str, list: &[Omission]) -> Markup {
    html! {
        table.omissions {
            tr { th { "what" } th { "originals" } th { "records" } th { "tokens" } }
            @for omission in list {
                @let (class, label) = reason(omission);
                tr class=(class) data-reason=(omission.reason.as_str()) data-first=(omission.first.source_order) data-last=(omission.last.source_order) {
                    td { (label) }
                    td {
                        a href=(record_link(session, omission.first.source_order, &omission.first.entry_id)) { "#" (omission.first.source_order) }
                        @if omission.last.source_order != omission.first.source_order {
                            " – " a href=(record_link(session, omission.last.source_order, &omission.last.entry_id)) { "#" (omission.last.source_order) }
                        }
                    }
                    td { (count(omission.records)) }
                    td { (count(omission.tokens)) }
                }
            }
        }
    }
}

/// One message as sent: annal's markers and evidence rows are text like any other.
fn message(message: &Message<'_>) -> Markup {
    html! {
        article class={ "message " (message.role.as_str()) } {
            header { span.role { (message.role.as_str()) } }
            @for block in &message.blocks {
                @match block {
                    MessageBlock::Text { text } => (markdown::plain(text)),
                    MessageBlock::Thinking { text } => details.block.thinking { summary { "thinking, " (size(text.len() as u64)) } (markdown::plain(text)) },
                    MessageBlock::ToolCall { tool, input, target, .. } => details.block.call {
                        summary { (tool) " " (target) " — " (size(input.len() as u64)) } (markdown::plain(input))
                    },
                    MessageBlock::ToolResult { tool, output, is_error, .. } => details class={ "block result" @if *is_error { " error" } } {
                        summary { (tool) " output, " (size(output.len() as u64)) @if *is_error { " — failed" } } (markdown::plain(output))
                    },
                    MessageBlock::Blob { media_type, size_bytes, .. } => p.blob { "binary " (media_type) ", " (size(*size_bytes)) },
                }
            }
        }
    }
}
