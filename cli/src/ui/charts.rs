//! The drawings of "what the model saw": a timeline of what the view kept along the session,
//! and a chart of the tokens sent with each request against the window, both SVG drawn with
//! attributes only (the page's policy refuses inline styles).

use annal::snapshot::Digest;
use annal::{Budget, ProjectOptions, Projection};
use maud::{html, Markup};

use super::layout::link;
use super::seen::reason;
use super::Failure;
use crate::output::count;

/// The most requests the chart derives a view for (spread evenly, the last always among them):
/// each is a projection of its own.
const CHART_REQUESTS_MAX: usize = 40;

/// The user requests the chart draws (each user record, up to [`CHART_REQUESTS_MAX`] spread
/// evenly, the last among them), by sourceOrder.
pub(crate) fn requests(digests: &[(u64, Digest)]) -> Vec<u64> {
    let users: Vec<u64> = digests
        .iter()
        .filter(|(_, digest)| digest.role == annal::Role::User)
        .map(|(order, _)| *order)
        .collect();
    let step = users.len().div_ceil(CHART_REQUESTS_MAX).max(1);
    let mut picked: Vec<u64> = users.iter().rev().step_by(step).copied().collect();
    picked.reverse();
    picked
}

/// For each of `requests`: its sourceOrder and the tokens the view derived from the originals
/// up to it carries. Each is a projection of its own, so they are split between two threads
/// (alternately, as later requests cost more).
pub(crate) fn per_request(
    ui: &super::Ui,
    session: &str,
    budget: Budget,
    requests: &[u64],
) -> Result<Vec<(u64, u64)>, Failure> {
    let options = ProjectOptions::new(budget);
    let derive = |parity: usize| -> Result<Vec<(usize, u64, u64)>, Failure> {
        let mut points = Vec::new();
        for (index, order) in requests.iter().enumerate().filter(|(index, _)| index % 2 == parity) {
            let view = ui.annal.project_originals_until(session, &options, order + 1)?;
            points.push((index, *order, view.stats.tokens.total));
        }
        Ok(points)
    };
    let (even, odd) = std::thread::scope(|scope| {
        let other = scope.spawn(|| derive(1));
        (derive(0), other.join())
    });
    // A panic there is re-raised here, where the request's task turns it into its error page.
    let odd = odd.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let mut points: Vec<(usize, u64, u64)> = even?.into_iter().chain(odd?).collect();
    points.sort_unstable();
    Ok(points.into_iter().map(|(_, order, tokens)| (order, tokens)).collect())
}

/// Tokens sent with each request against the room for the view and the compaction trigger, on
/// a scale of tokens (left) and of the requests' records (below).
pub(crate) fn chart(session: &str, budget: Budget, points: &[(u64, u64)]) -> Markup {
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
pub(crate) fn receipts(
    snapshot: &annal::Snapshot,
    session: &str,
    digests: &[(u64, Digest)],
) -> Result<Vec<u64>, Failure> {
    let mut found = Vec::new();
    // A receipt is a system record: only those are read.
    for (order, _) in digests.iter().filter(|(_, digest)| digest.role == annal::Role::System) {
        let Some(guard) = snapshot.record(session, *order)? else { continue };
        if guard.view()?.meta().any(|(key, _)| key == annal::snapshot::RECEIPT_META_KEY) {
            found.push(*order);
        }
    }
    Ok(found)
}

/// The session from its first record to its last, one lane for each kind of reduction (so a
/// long span of one kind hides no other), the verbatim tail and each compaction receipt, with
/// record numbers below (an SVG drawn with attributes only, which the page's policy allows
/// where inline styles are refused).
pub(crate) fn timeline(session: &str, len: u64, projection: &Projection<'_>, receipts: &[u64]) -> Markup {
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
