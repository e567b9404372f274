//! The fleet benchmark's report: a Markdown table for each of (1), (2) and (3), with the
//! targets beside the figures.

use std::fmt::Write as _;
use std::time::Duration;

use annal_bench::report::{ms, thousands};

use crate::append::Latencies;
use crate::failover::FailoverResult;
use crate::follow::FollowResult;
use crate::Args;

/// The label of the rows without annal, under the shared append they compare with.
pub(crate) const RAW_LABEL: &str = "↳ same cluster, the record's JSON published with async-nats alone";

pub(crate) fn met(ok: bool) -> &'static str {
    if ok {
        "**met**"
    } else {
        "**missed**"
    }
}

pub(crate) fn row(out: &mut String, cells: &[&str]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

pub(crate) fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

pub(crate) fn append_table(out: &mut String, rows: &[Latencies], args: &Args, payload_mean: usize) {
    let _ = writeln!(
        out,
        "(1) Checked appends, one writer, one ordinary record (mean {payload_mean} B of payload text) per \
         call, {} calls timed after {} untimed.",
        thousands(args.appends as u64),
        args.warmup
    );
    let _ = writeln!(out);
    row(out, &["configuration", "p50", "p99", "max", "appends/s", "target", "result"]);
    row(out, &["---", "--:", "--:", "--:", "--:", "---", "---"]);
    for latencies in rows {
        let (target, result) = if latencies.label.starts_with("3 nodes, 3 replicas, server defaults") {
            let ok =
                latencies.p50() <= Duration::from_millis(2) && latencies.p99() <= Duration::from_millis(20);
            ("p50 ≤ 2 ms, p99 ≤ 20 ms", met(ok))
        } else {
            ("–", "–")
        };
        row(
            out,
            &[
                &latencies.label,
                &ms(latencies.p50()),
                &ms(latencies.p99()),
                &ms(latencies.max()),
                &thousands(latencies.rate().round() as u64),
                target,
                result,
            ],
        );
    }
    let _ = writeln!(out);
    for (i, latencies) in rows.iter().enumerate() {
        if latencies.conflicts > 0 {
            let above = i.checked_sub(1).map_or("", |j| rows[j].label.as_str());
            let _ = writeln!(
                out,
                "The async-nats row under \"{above}\": {} publishes refused as \"wrong last sequence\" \
                 with no other writer (their time is in the figures).",
                latencies.conflicts
            );
            let _ = writeln!(out);
        }
    }
}

pub(crate) fn follow_table(out: &mut String, result: &FollowResult) {
    let w = &result.workload;
    let _ = writeln!(
        out,
        "(2) A new follower catching up: {} sessions, {} records, {} B of payload text ({} tool outputs \
         of 45–55 KB), published to a 3-replica stream in {} ({:.1} MB/s of record JSON, {} records/s).",
        thousands(result.sessions as u64),
        thousands(w.records as u64),
        thousands(w.payload_bytes as u64),
        thousands(w.large as u64),
        seconds(result.publish_time),
        result.publish_bytes as f64 / 1e6 / result.publish_time.as_secs_f64().max(1e-9),
        thousands(
            (result.publish_records as f64 / result.publish_time.as_secs_f64().max(1e-9)).round() as u64
        ),
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "For scale: the same records went into the publisher's store with `Store::append`, 1,000 per \
         call, in {} ({:.1} MB/s of the follower's record JSON).",
        seconds(result.source_time),
        result
            .runs
            .first()
            .map_or(0.0, |run| run.bytes as f64 / 1e6 / result.source_time.as_secs_f64().max(1e-9)),
    );
    let _ = writeln!(out);
    row(
        out,
        &["follower", "records", "MB of record JSON", "follow", "index", "total", "MB/s", "target", "result"],
    );
    row(out, &["---", "--:", "--:", "--:", "--:", "--:", "--:", "---", "---"]);
    for run in &result.runs {
        let indexed = run.label.contains("search index");
        let target = if indexed { "≥ 50 MB/s into a search-ready store" } else { "–" };
        let result = if indexed { met(run.mb_per_s() >= 50.0) } else { "–" };
        row(
            out,
            &[
                &run.label,
                &thousands(run.records),
                &format!("{:.1}", run.bytes as f64 / 1e6),
                &seconds(run.follow),
                &if indexed { seconds(run.index) } else { "–".to_owned() },
                &seconds(run.total()),
                &format!("{:.1}", run.mb_per_s()),
                target,
                result,
            ],
        );
    }
    let _ = writeln!(out);
}

pub(crate) fn failover_table(out: &mut String, r: &FailoverResult, args: &Args) {
    let _ = writeln!(
        out,
        "(3) One writer appending to a shared session on 3 nodes, 3 replicas; the stream leader \
         ({}) SIGKILLed after {} s, appends going on for {} s more; {} took over.",
        r.leader_before, args.before_kill, args.after_kill, r.leader_after
    );
    let _ = writeln!(out);
    row(out, &["measure", "value", "target", "result"]);
    row(out, &["---", "--:", "---", "---"]);
    row(out, &["appends acknowledged", &thousands(r.acknowledged as u64), "–", "–"]);
    row(out, &["errors returned (each retried)", &thousands(r.errors as u64), "–", "–"]);
    row(
        out,
        &[
            "longest gap between acknowledged appends",
            &ms(r.longest_gap),
            "≤ 5 s",
            met(r.longest_gap <= Duration::from_secs(5)),
        ],
    );
    let began = if r.gap_after_kill_ms < 0.0 {
        format!("{:.0} ms before the kill", -r.gap_after_kill_ms)
    } else {
        format!("{:.0} ms after the kill", r.gap_after_kill_ms)
    };
    row(out, &["the longest gap began", &began, "–", "–"]);
    let kill = r.kill_to_next.map_or_else(|| "none".to_owned(), ms);
    row(out, &["kill → next acknowledged append", &kill, "–", "–"]);
    row(out, &["records a new follower read", &thousands(r.followed as u64), "–", "–"]);
    row(out, &["acknowledged but missing", &thousands(r.lost as u64), "0", met(r.lost == 0)]);
    row(out, &["duplicated entryIds", &thousands(r.duplicates as u64), "0", met(r.duplicates == 0)]);
    row(
        out,
        &["acknowledged out of order", if r.out_of_order { "yes" } else { "no" }, "no", met(!r.out_of_order)],
    );
    row(out, &["stored but not acknowledged", &thousands(r.unacknowledged_present as u64), "–", "–"]);
    let fork = r.writing_to != "failover";
    row(out, &["writes went to an offline fork", if fork { "yes" } else { "no" }, "no", met(!fork)]);
    let _ = writeln!(out);
    if let Some(error) = &r.first_error {
        let _ = writeln!(out, "First error: `{error}`");
        let _ = writeln!(out);
    }
}
