//! "What the model saw": a session's projection at a window the user picks (the presets of the
//! retention exam), beside the originals: what was kept verbatim, cut, reduced to a marker or
//! put behind the evidence index, each from the projection's own list of omissions.

use annal::{
    Budget, Message, MessageBlock, Omission, OmissionReason, ProjectOptions, Projection, ViewSource,
};
use axum::extract::{Query, State};
use axum::response::Html;
use maud::{html, Markup};
use serde::Deserialize;

use super::layout::{link, record_link, shell};
use super::{blocking, markdown, session_info, Failure, Shared};
use crate::output::{bytes as size, count};

#[derive(Debug, Deserialize)]
pub(crate) struct SeenQuery {
    name: String,
    window: Option<String>,
}

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
        let receipts = receipts(&snapshot, &info.name, info.len)?;
        let budget = Budget::new(window, output);
        let requests = per_request(ui, &snapshot, &info.name, budget, info.len)?;
        let projection = ui.annal.project(&info.name, &ProjectOptions::new(budget))?;
        let body = html! {
            h1.session { "What the model saw: " a href=(link("/session", &[("name", &info.name)])) { (info.name) } }
            nav.presets {
                "Window: "
                @for (preset, ..) in Budget::WINDOWS {
                    @if preset == label { strong { (preset) } }
                    @else { a href=(link("/seen", &[("name", &info.name), ("window", preset)])) { (preset) } }
                }
            }
            (facts(&projection, budget, &info.name))
            (timeline(&info.name, info.len, &projection, &receipts))
            (chart(&info.name, budget, &requests))
            div.seen {
                section.sent { h2 { "Sent to the model (" (projection.messages.len()) " messages)" } @for m in &projection.messages { (message(m)) } }
                section.left-out {
                    h2 { "Left out or reduced (" (projection.omissions.len()) ")" }
                    @if projection.omissions.is_empty() { p { "Nothing: every original is sent verbatim." } }
                    @else { (omissions(&info.name, &projection.omissions)) }
                }
            }
        };
        Ok(Html(shell(&format!("What the model saw: {}", info.name), None, body).into_string()))
    })
    .await
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

/// Tokens sent with each request against the room for the view and the compaction trigger.
fn chart(session: &str, budget: Budget, points: &[(u64, u64)]) -> Markup {
    const WIDTH: u64 = 1000;
    const HEIGHT: u64 = 120;
    let capacity = u64::from(budget.capacity_tokens());
    let trigger = u64::from(budget.trigger_tokens());
    let top = points.iter().map(|(_, tokens)| *tokens).max().unwrap_or(0).max(capacity).max(1);
    let y = |tokens: u64| HEIGHT - tokens.min(top) * HEIGHT / top;
    let slot = WIDTH / (points.len() as u64).max(1);
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } width="100%" height=(HEIGHT) role="img" aria-label="Tokens sent with each request" {
                @for (index, (order, tokens)) in points.iter().enumerate() {
                    a href=(link("/session", &[("name", session), ("at", &order.to_string())])) {
                        rect.bar x=(index as u64 * slot + 1) y=(y(*tokens)) width=(slot.saturating_sub(2).max(1)) height=(HEIGHT - y(*tokens)) {
                            title { "request after #" (order) ": " (count(*tokens)) " tokens" }
                        }
                    }
                }
                line.capacity x1="0" x2=(WIDTH) y1=(y(capacity)) y2=(y(capacity)) { title { "room for the view: " (count(capacity)) " tokens" } }
                line.trigger x1="0" x2=(WIDTH) y1=(y(trigger)) y2=(y(trigger)) { title { "compaction trigger: " (count(trigger)) " tokens" } }
            }
            figcaption {
                "Tokens sent with " (points.len()) " user requests, each derived from the originals up to it (checkpoints aside), against "
                span.key.capacity { "the room for the view" } " and " span.key.trigger { "the compaction trigger" } "."
            }
        }
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

/// The session from its first record to its last: what the view left out or reduced, the
/// verbatim tail, and each compaction receipt (an SVG drawn with attributes only, which the
/// page's policy allows where inline styles are refused).
fn timeline(session: &str, len: u64, projection: &Projection<'_>, receipts: &[u64]) -> Markup {
    const WIDTH: u64 = 1000;
    let x = |order: u64| order.min(len) * WIDTH / len.max(1);
    let tail = projection.stats.tail_start;
    html! {
        figure.timeline {
            svg viewBox={ "0 0 " (WIDTH) " 34" } width="100%" height="34" role="img" aria-label="What the view kept, along the session" {
                rect.kept x="0" y="8" width=(WIDTH) height="14" { title { "records 0–" (len.saturating_sub(1)) ": sent as written unless marked" } }
                @for omission in &projection.omissions {
                    @let (class, label) = reason(omission);
                    @let from = x(omission.first.source_order);
                    rect class=(class) x=(from) y="8" width=((x(omission.last.source_order + 1) - from).max(1)) height="14" {
                        title { "#" (omission.first.source_order) "–#" (omission.last.source_order) ": " (label) }
                    }
                }
                rect.tail x=(x(tail)) y="24" width=(WIDTH - x(tail)) height="4" { title { "the recent tail, from #" (tail) } }
                @for receipt in receipts {
                    line.receipt x1=(x(*receipt)) x2=(x(*receipt)) y1="2" y2="32" { title { "compaction receipt #" (receipt) } }
                }
            }
            figcaption {
                "Along the session: " span.key.marker { "marker" } " " span.key.cut { "cut" } " " span.key.evidence { "evidence index" } " " span.key.tail { "recent tail" }
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
