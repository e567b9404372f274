//! An agent loop on annal: each turn is appended as it happens, the model is sent the
//! projection (compacted when it says so), and "what did we decide about X" is answered by
//! searching the originals, including those the projection left out.
//!
//! The model and the tool are scripted, so this runs anywhere in a second:
//! `cargo run -p annal --example agent_loop`

use std::error::Error;

use annal::{
    Annal, Block, Budget, CompactOptions, CompactStatus, Message, MessageBlock, ProjectOptions, Record, Role,
    SearchRequest, ViewSource,
};

/// What the user asks, turn by turn.
const ASKS: [&str; 10] = [
    "The API is slow under load. Find out why.",
    "Look at the database queries.",
    "Could a cache help?",
    "Which cache should we use?",
    "Add it to the user endpoint.",
    "Run the load test again.",
    "Check the error rate too.",
    "Tune the pool size.",
    "Write the changelog entry.",
    "Anything left?",
];

/// The scripted model: a reply and one tool call per turn. A real loop calls the model with
/// `messages` here.
fn model(turn: usize, messages: &[Message<'_>]) -> (String, String) {
    let reply = match turn {
        3 => "We decided to use an in-process LRU cache with a 60 s TTL; Redis is not worth \
              another service yet."
            .to_owned(),
        _ => format!(
            "Looking into it (context: {} messages). The latency comes in bursts that line up \
             with the pool running dry; the next check narrows down which query holds connections \
             longest, then we compare p99 before and after the change under the same load.",
            messages.len()
        ),
    };
    (reply, format!("./loadtest --step {turn}"))
}

/// The scripted tool: a long output, as load tests and test runners print.
fn run_tool(command: &str) -> String {
    let mut output = format!("$ {command}\n");
    for second in 0..100 {
        output.push_str(&format!("t={second:>2}s p50=41ms p99=380ms rps=1200 errors=0\n"));
    }
    output
}

/// The entryIds the omission markers of a view name.
fn marker_entries(messages: &[Message<'_>]) -> Vec<String> {
    let mut ids = Vec::new();
    for message in messages {
        for block in &message.blocks {
            let MessageBlock::Text { text } = block else { continue };
            for marker in text.split("[omitted / not summarised: ").skip(1) {
                for part in marker.split(']').next().unwrap_or_default().split("entry ").skip(1) {
                    ids.extend(part.split([',', ' ']).next().map(str::to_owned));
                }
            }
        }
    }
    ids
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let annal = Annal::open(dir.path().join("agent.redb"))?;
    // A small model window, so that ten turns need compacting.
    let budget =
        Budget { tail_tokens: 1_500, evidence_tokens: 512, history_tokens: 256, ..Budget::new(8_000, 1_000) };
    let options = ProjectOptions::new(budget);
    let session = "load-test";

    for (index, ask) in ASKS.iter().enumerate() {
        let turn = index + 1;
        annal.append(session, None, vec![Record::text(format!("u{turn}"), Role::User, *ask)])?;

        // Before each model call: the view to send; compact when it has grown past the trigger.
        let mut view = annal.project(session, &options)?;
        if view.compaction_due {
            let outcome = annal.compact(session, &CompactOptions::new(options))?;
            if outcome.status == CompactStatus::Committed {
                println!("turn {turn:>2}: compacted records [0, {}) into a checkpoint", outcome.upto);
            }
            view = annal.project(session, &options)?;
        }
        let source = match view.source {
            ViewSource::Live => "live",
            ViewSource::Derived => "derived",
            ViewSource::Checkpoint { .. } => "checkpoint",
        };
        println!(
            "turn {turn:>2}: sending {} messages, {} tokens ({source}; capacity {})",
            view.messages.len(),
            view.stats.tokens.total,
            budget.capacity_tokens()
        );

        let (reply, command) = model(turn, &view.messages);
        let call = Block::tool_call(format!("c{turn}"), "Bash", serde_like_command(&command));
        annal.append(
            session,
            None,
            vec![Record::new(format!("a{turn}"), Role::Assistant, vec![Block::text(reply), call])],
        )?;
        let result = Block::tool_result(format!("c{turn}"), "Bash", false, run_tool(&command));
        annal.append(session, None, vec![Record::new(format!("t{turn}"), Role::Tool, vec![result])])?;
    }

    // What the projection left out is named by its markers and still on disk.
    let view = annal.project(session, &options)?;
    let omitted = marker_entries(&view.messages);
    println!("\nthe last view names {} omitted entries: {}", omitted.len(), omitted.join(", "));
    if let Some(id) = omitted.first() {
        let original = annal.get(id, None)?;
        let text = original.blocks.first().and_then(|b| b.text.as_deref()).unwrap_or_default();
        println!("{id} read back verbatim: {text:?}");
    }

    // "What did we decide about the cache?"
    let question = "decided cache";
    let hits = annal.search(&SearchRequest::new(question))?;
    println!("\nsearch {question:?}: {} hit(s)", hits.len());
    for hit in &hits {
        println!("  {} (sourceOrder {}): {}", hit.id(), hit.source_order, hit.snippet.marked("[", "]"));
    }
    let best = hits.first().ok_or("the decision was not found")?;
    let original = annal.get(&best.id(), None)?;
    let decision = original.blocks.first().and_then(|b| b.text.as_deref()).unwrap_or_default();
    println!("the decision, verbatim: {decision}");
    assert!(decision.contains("LRU cache"), "search found the decision");
    assert!(annal.verify(None)?.is_ok());
    annal.close()?;
    Ok(())
}

/// The call's input as JSON text (a real framework passes the model's tool input through).
fn serde_like_command(command: &str) -> String {
    format!("{{\"command\":{command:?}}}")
}
