//! "What the model saw": a session's projection at a window the user picks (the presets of the
//! retention exam), beside the originals: what was kept verbatim, cut, reduced to a marker or
//! put behind the evidence index, each from the projection's own list of omissions.

use annal::{
    Budget, Message, MessageBlock, Omission, OmissionReason, ProjectOptions, Projection, ViewSource,
};
use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup, PreEscaped};
use serde::Deserialize;

use super::layout::{beside, link, record_link};
use super::{blocking, markdown, session_info, Failure, Shared};
use crate::output::{bytes as size, count};

#[derive(Debug, Deserialize)]
pub(crate) struct SeenQuery {
    name: String,
    window: Option<String>,
    /// The page of messages as sent (from 0).
    page: Option<usize>,
}

/// Messages as sent on one page.
const PAGE_MESSAGES: usize = 200;

/// Sessions and windows whose rendered pages are kept (a 17,800-record session's at 1M take
/// about 8 MB).
const CACHED_PAGES_MAX: usize = 8;

/// One session's page at one window, rendered: kept until the session grows (its length is
/// its head: records are only ever appended, a compaction's receipt among them).
#[derive(Debug)]
pub(crate) struct Rendered {
    len: u64,
    head: String,
    omissions: String,
    messages: Vec<String>,
}

/// Rendered pages by session and window label.
pub(crate) type Cache = std::collections::HashMap<(String, &'static str), std::sync::Arc<Rendered>>;

pub(crate) async fn page(
    State(ui): State<Shared>,
    Query(query): Query<SeenQuery>,
) -> Result<Html<String>, Failure> {
    blocking(&ui, move |ui| {
        let label = query.window.as_deref().unwrap_or("32K");
        let Some(&(label, window, output)) = Budget::WINDOWS.iter().find(|(l, ..)| *l == label) else {
            return Err(Failure::bad_request(format!("no window {label:?}; one of 16K, 32K, 128K, 200K, 1M")));
        };
        let snapshot = ui.annal.snapshot()?;
        let info = session_info(&snapshot, &query.name)?;
        let key = (info.name.clone(), label);
        let cached = super::seen_cache(ui).get(&key).filter(|r| r.len == info.len).cloned();
        let rendered = match cached {
            Some(rendered) => rendered,
            None => {
                let rendered = std::sync::Arc::new(render(ui, &snapshot, &info, Budget::new(window, output))?);
                let mut cache = super::seen_cache(ui);
                // A reader goes through one session at a time: older lengths of it go, and
                // other sessions' pages once there are several.
                cache.retain(|(name, _), r| name != &info.name || r.len == info.len);
                if cache.len() >= CACHED_PAGES_MAX {
                    cache.retain(|(name, _), _| name == &info.name);
                }
                cache.insert(key, rendered.clone());
                rendered
            }
        };
        let pages = rendered.messages.len().div_ceil(PAGE_MESSAGES).max(1);
        let page = query.page.unwrap_or(0).min(pages - 1);
        let shown = &rendered.messages[(page * PAGE_MESSAGES).min(rendered.messages.len())..((page + 1) * PAGE_MESSAGES).min(rendered.messages.len())];
        let page_link = |page: usize| link("/seen", &[("name", &info.name), ("window", label), ("page", &page.to_string())]);
        let pager = html! {
            nav.pager {
                @if page > 0 { a href=(page_link(0)) { "First" } a rel="prev" href=(page_link(page - 1)) { "Previous" } }
                span { "messages " (count((page * PAGE_MESSAGES) as u64)) "–" (count((page * PAGE_MESSAGES + shown.len()).saturating_sub(1) as u64)) " of " (count(rendered.messages.len() as u64)) }
                @if page + 1 < pages { a rel="next" href=(page_link(page + 1)) { "Next" } a href=(page_link(pages - 1)) { "Last" } }
            }
        };
        let body = html! {
            h1.session { "What the model saw: " a href=(link("/session", &[("name", &info.name)])) { (info.name) } }
            nav.presets {
                "Window: "
                @for (preset, ..) in Budget::WINDOWS {
                    @if preset == label { strong { (preset) } }
                    @else { a href=(link("/seen", &[("name", &info.name), ("window", preset)])) { (preset) } }
                }
            }
            (PreEscaped(&rendered.head))
            div.seen {
                section.sent {
                    h2 { "Sent to the model (" (count(rendered.messages.len() as u64)) " messages)" }
                    (pager)
                    @for m in shown { (PreEscaped(m)) }
                    @if pages > 1 { (pager) }
                }
                section.left-out { (PreEscaped(&rendered.omissions)) }
            }
        };
        let sidebar = super::sidebar::sidebar(ui, &info.name)?;
        Ok(Html(beside(&format!("What the model saw: {}", info.name), sidebar, body).into_string()))
    })
    .await
}

/// The parts of the page that depend on the session and window only: its facts, timeline and
/// chart, the omission list, and each message as sent.
fn render(
    ui: &super::Ui,
    snapshot: &annal::Snapshot,
    info: &annal::SessionInfo,
    budget: Budget,
) -> Result<Rendered, Failure> {
    let receipts = receipts(snapshot, &info.name, info.len)?;
    let requests = per_request(ui, snapshot, &info.name, budget, info.len)?;
    let projection = ui.annal.project(&info.name, &ProjectOptions::new(budget))?;
    let head = html! {
        (facts(&projection, budget, &info.name))
        (timeline(&info.name, info.len, &projection, &receipts))
        (chart(&info.name, budget, &requests))
    };
    let omissions = html! {
        h2 { "Left out or reduced (" (projection.omissions.len()) ")" }
        @if projection.omissions.is_empty() { p { "Nothing: every original is sent verbatim." } }
        @else { (omissions(&info.name, &projection.omissions)) }
    };
    Ok(Rendered {
        len: info.len,
        head: head.into_string(),
        omissions: omissions.into_string(),
        messages: projection.messages.iter().map(|m| message(m).into_string()).collect(),
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

/// The most requests the chart derives a view for (spread evenly, the last always among them):
/// each is a projection of its own.
const CHART_REQUESTS_MAX: usize = 40;

/// For user requests of the session (each user record, up to [`CHART_REQUESTS_MAX`]): its
/// sourceOrder and the tokens the view derived from the originals up to it carries.
fn per_request(
    ui: &super::Ui,
    snapshot: &annal::Snapshot,
    session: &str,
    budget: Budget,
    len: u64,
) -> Result<Vec<(u64, u64)>, Failure> {
    let users: Vec<u64> = snapshot
        .digests(session, 0..len)?
        .into_iter()
        .filter(|(_, digest)| digest.role == annal::Role::User)
        .map(|(order, _)| order)
        .collect();
    let step = users.len().div_ceil(CHART_REQUESTS_MAX).max(1);
    let mut picked: Vec<u64> = users.iter().rev().step_by(step).copied().collect();
    picked.reverse();
    let options = ProjectOptions::new(budget);
    let mut points = Vec::with_capacity(picked.len());
    for order in picked {
        let view = ui.annal.project_originals_until(session, &options, order + 1)?;
        points.push((order, view.stats.tokens.total));
    }
    Ok(points)
}

/// Tokens sent with each request against the room for the view and the compaction trigger, on
/// a scale of tokens (left) and of the requests' records (below).
fn chart(session: &str, budget: Budget, points: &[(u64, u64)]) -> Markup {
    const WIDTH: u64 = 1000;
    const HEIGHT: u64 = 120;
    // Room for the tokens' scale on the left and the records' below.
    const LEFT: u64 = 70;
    const BELOW: u64 = 18;
    let capacity = u64::from(budget.capacity_tokens());
    let trigger = u64::from(budget.trigger_tokens());
    let top = points.iter().map(|(_, tokens)| *tokens).max().unwrap_or(0).max(capacity).max(1);
    let y = |tokens: u64| HEIGHT - tokens.min(top) * HEIGHT / top;
    let slot = (WIDTH - LEFT) / (points.len() as u64).max(1);
    // Zero, the room, the tallest bar and the trigger, each where it leaves the others legible.
    let mut ticks: Vec<u64> = Vec::new();
    for tokens in [0, capacity, top, trigger] {
        if ticks.iter().all(|t| y(*t).abs_diff(y(tokens)) >= 12) {
            ticks.push(tokens);
        }
    }
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (HEIGHT + BELOW) } width="100%" role="img" aria-label="Tokens sent with each request" {
                line.axis x1=(LEFT) x2=(LEFT) y1="0" y2=(HEIGHT) {}
                line.axis x1=(LEFT) x2=(WIDTH) y1=(HEIGHT) y2=(HEIGHT) {}
                @for tokens in &ticks {
                    text.tick x=(LEFT - 6) y=(y(*tokens).clamp(10, HEIGHT)) text-anchor="end" { (short_tokens(*tokens)) }
                }
                @for (index, (order, tokens)) in points.iter().enumerate() {
                    a href=(link("/session", &[("name", session), ("at", &order.to_string())])) {
                        rect.bar x=(LEFT + index as u64 * slot + 1) y=(y(*tokens)) width=(slot.saturating_sub(2).max(1)) height=(HEIGHT - y(*tokens)) {
                            title { "request after #" (order) ": " (count(*tokens)) " tokens" }
                        }
                    }
                }
                @if let (Some((first, _)), Some((last, _))) = (points.first(), points.last()) {
                    text.tick x=(LEFT) y=(HEIGHT + BELOW - 4) { "#" (first) }
                    text.tick x=(WIDTH) y=(HEIGHT + BELOW - 4) text-anchor="end" { "#" (last) }
                    text.tick x=((LEFT + WIDTH) / 2) y=(HEIGHT + BELOW - 4) text-anchor="middle" { "user requests, by record" }
                }
                line.capacity x1=(LEFT) x2=(WIDTH) y1=(y(capacity)) y2=(y(capacity)) { title { "room for the view: " (count(capacity)) " tokens" } }
                line.trigger x1=(LEFT) x2=(WIDTH) y1=(y(trigger)) y2=(y(trigger)) { title { "compaction trigger: " (count(trigger)) " tokens" } }
            }
            figcaption {
                "Tokens sent with " (points.len()) " user requests, each derived from the originals up to it (checkpoints aside), against "
                span.key.capacity { "the room for the view" } " and " span.key.trigger { "the compaction trigger" } "."
            }
        }
    }
}

/// `12.3K`, `1.2M`: a scale's label.
fn short_tokens(tokens: u64) -> String {
    match tokens {
        0..=999 => tokens.to_string(),
        1_000..=999_999 => format!("{:.1}K", tokens as f64 / 1e3),
        _ => format!("{:.1}M", tokens as f64 / 1e6),
    }
}

/// The sourceOrders of the session's compaction receipts.
fn receipts(snapshot: &annal::Snapshot, session: &str, len: u64) -> Result<Vec<u64>, Failure> {
    let mut found = Vec::new();
    for guard in snapshot.records(session, 0..len)? {
        let guard = guard?;
        if guard.view()?.meta().any(|(key, _)| key == annal::snapshot::RECEIPT_META_KEY) {
            found.push(guard.source_order());
        }
    }
    Ok(found)
}

/// The session from its first record to its last, one lane for each kind of reduction (so a
/// long span of one kind hides no other), the verbatim tail and each compaction receipt, with
/// record numbers below (an SVG drawn with attributes only, which the page's policy allows
/// where inline styles are refused).
fn timeline(session: &str, len: u64, projection: &Projection<'_>, receipts: &[u64]) -> Markup {
    const WIDTH: u64 = 1000;
    const LEFT: u64 = 70;
    const LANES: [(&str, &str); 4] =
        [("marker", "markers"), ("cut", "cut"), ("tool-records", "evidence"), ("tail", "tail")];
    let x = |order: u64| LEFT + order.min(len) * (WIDTH - LEFT) / len.max(1);
    let lane_y = |class: &str| {
        let lane = match class {
            "marker" => 0,
            "user-cut" | "block-cut" => 1,
            "tool-records" => 2,
            _ => 3,
        };
        4 + lane * 14
    };
    let tail = projection.stats.tail_start;
    let ticks: Vec<u64> = (0..=4).map(|i| len.saturating_sub(1) * i / 4).collect();
    html! {
        figure.timeline {
            svg viewBox={ "0 0 " (WIDTH) " 78" } width="100%" role="img" aria-label="What the view kept, along the session" {
                rect.kept x=(LEFT) y="2" width=(WIDTH - LEFT) height="56" { title { "records 0–" (len.saturating_sub(1)) ": sent as written unless marked" } }
                @for (class, label) in LANES {
                    text.tick x=(LEFT - 6) y=(lane_y(if class == "cut" { "user-cut" } else { class }) + 9) text-anchor="end" { (label) }
                }
                @for omission in &projection.omissions {
                    @let (class, label) = reason(omission);
                    @let from = x(omission.first.source_order);
                    rect class=(class) x=(from) y=(lane_y(class)) width=((x(omission.last.source_order + 1) - from).max(2)) height="10" {
                        title { "#" (omission.first.source_order) "–#" (omission.last.source_order) ": " (label) }
                    }
                }
                rect.tail x=(x(tail)) y=(lane_y("tail")) width=((WIDTH - x(tail)).max(2)) height="10" { title { "the recent tail, from #" (tail) } }
                @for receipt in receipts {
                    line.receipt x1=(x(*receipt)) x2=(x(*receipt)) y1="0" y2="60" { title { "compaction receipt #" (receipt) } }
                }
                @for (index, tick) in ticks.iter().enumerate() {
                    @if index == 0 || ticks[index - 1] != *tick {
                        line.axis x1=(x(*tick)) x2=(x(*tick)) y1="58" y2="62" {}
                        text.tick x=(x(*tick)) y="74" text-anchor=(match index { 0 => "start", 4 => "end", _ => "middle" }) { "#" (count(*tick)) }
                    }
                }
            }
            figcaption {
                "Along the session, by record: " span.key.marker { "reduced to a marker" } " " span.key.cut { "cut to head and tail" } " "
                span.key.evidence { "behind the evidence index" } " " span.key.tail { "the recent tail, sent as written" }
                @if !receipts.is_empty() {
                    " · compaction receipts: "
                    @for receipt in receipts { a href=(link("/session", &[("name", session), ("at", &receipt.to_string())])) { "#" (receipt) } " " }
                }
            }
        }
    }
}

fn reason(omission: &Omission) -> (&'static str, String) {
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
