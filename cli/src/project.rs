//! `annal project`: the view of a session for the next model request under a token budget,
//! readable (a header with the algorithm, counts and tokens per part, then the messages) or as
//! `{"algorithmVersion","hash","messages","stats"}`.

use crate::failure::said;
use std::io::Write;

use annal::error::ProjectError;
use annal::{Algorithm, Budget, MessageBlock, ProjectOptions, Projection, ViewSource};
use anyhow::anyhow;
use clap::Args;

use crate::output::{count, hex, plural, Out};
use crate::store::StoreLocation;

// The token budget, shared by `project` and `compact`.
#[derive(Debug, Args)]
pub(crate) struct BudgetArgs {
    /// The model's context window W, in tokens
    #[arg(long, value_name = "TOKENS")]
    window: u32,
    /// The most the model may write in its reply O, in tokens
    #[arg(long = "max-output", value_name = "TOKENS")]
    max_output: u32,
    /// The recent tail kept verbatim (the newest turn is kept whole even when larger)
    #[arg(long, value_name = "TOKENS", default_value_t = 8_192)]
    tail_tokens: u32,
    /// The evidence index of tool output before the tail
    #[arg(long, value_name = "TOKENS", default_value_t = 2_048)]
    evidence_tokens: u32,
    /// The compacted history: user and assistant text, markers, summary [default: three quarters
    /// of the trigger, at least 65,536]
    #[arg(long, value_name = "TOKENS")]
    history_tokens: Option<u32>,
    /// The longest handoff summary summarized-v1 accepts
    #[arg(long, value_name = "TOKENS", default_value_t = 4_096)]
    summary_tokens: u32,
}

impl BudgetArgs {
    /// The budget, checked; no I/O.
    pub(crate) fn resolve(&self) -> anyhow::Result<Budget> {
        let scaled = Budget::new(self.window, self.max_output);
        let budget = Budget {
            tail_tokens: self.tail_tokens,
            evidence_tokens: self.evidence_tokens,
            history_tokens: self.history_tokens.unwrap_or(scaled.history_tokens),
            summary_tokens: self.summary_tokens,
            ..scaled
        };
        budget.check()?;
        Ok(budget)
    }
}

// Arguments of `annal project`.
#[derive(Debug, Args)]
pub(crate) struct ProjectArgs {
    /// The session's name
    session: String,
    #[command(flatten)]
    budget: BudgetArgs,
    /// The algorithm a compaction commits; the view shows whichever checkpoint is current, and a
    /// view derived now is deterministic-v1 (only `compact` asks a summarizer)
    #[arg(long, value_name = "VERSION", default_value = "deterministic-v1", value_parser = ["deterministic-v1", "summarized-v1"])]
    algorithm: String,
    /// Derive from the originals now, ignoring checkpoints (what `compact` would commit)
    #[arg(long)]
    originals: bool,
    /// {"algorithmVersion","hash","messages","stats"} on one line
    #[arg(long)]
    json: bool,
}

/// `project` with its budget checked.
#[derive(Debug)]
pub(crate) struct ProjectPlan {
    session: String,
    options: ProjectOptions,
    originals: bool,
    json: bool,
}

impl ProjectArgs {
    /// Checks the budget and algorithm; no I/O.
    pub(crate) fn resolve(self) -> anyhow::Result<ProjectPlan> {
        let budget = self.budget.resolve()?;
        let algorithm = Algorithm::parse(&self.algorithm)
            .ok_or_else(|| anyhow!("unknown algorithm {:?}", self.algorithm))?;
        Ok(ProjectPlan {
            session: self.session,
            options: ProjectOptions { budget, algorithm },
            originals: self.originals,
            json: self.json,
        })
    }
}

/// Describes a projection failure, naming the session and the store.
pub(crate) fn project_error(location: &StoreLocation, session: &str, err: annal::Error) -> anyhow::Error {
    match err {
        annal::Error::Project(ProjectError::UnknownSession(name)) => location.unknown_session(&name),
        other => said(other.kind(), format!("cannot project session {session:?} in {location}: {other}")),
    }
}

/// Prints the view of the planned session.
pub(crate) fn run(location: &StoreLocation, plan: &ProjectPlan, out: &mut Out) -> anyhow::Result<()> {
    let store = location.open_existing()?;
    let projection = if plan.originals {
        store.project_originals(&plan.session, &plan.options)
    } else {
        store.project(&plan.session, &plan.options)
    }
    .map_err(|err| project_error(location, &plan.session, err))?;
    if plan.json {
        projection.write_json(out)?;
        writeln!(out)?;
        return Ok(());
    }
    write_header(out, &plan.session, &projection)?;
    if plan.options.algorithm != projection.algorithm {
        writeln!(
            out,
            "  note     {} was asked for: no such checkpoint is current, and a view derived now is {} \
             (only `annal compact --summarizer-cmd` writes summaries)",
            plan.options.algorithm, projection.algorithm
        )?;
    }
    for (index, message) in projection.messages.iter().enumerate() {
        writeln!(out, "\n── {} {} ──", index + 1, message.role)?;
        for block in &message.blocks {
            write_block(out, block)?;
        }
    }
    Ok(())
}

fn source_text(projection: &Projection<'_>) -> String {
    match projection.source {
        ViewSource::Live => "every record verbatim: the session fits under the trigger".to_owned(),
        ViewSource::Derived => "derived from the originals now; no checkpoint applies".to_owned(),
        ViewSource::Checkpoint { key, receipt } => format!(
            "checkpoint {} (receipt at sourceOrder {receipt}) plus {}",
            &hex(&key)[..16],
            plural(projection.stats.later_records, "later record")
        ),
    }
}

/// The header: algorithm and hash, where the view comes from, budget, tokens per part, counts.
pub(crate) fn write_header(
    out: &mut impl Write,
    session: &str,
    projection: &Projection<'_>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "session {session:?}: {} projection {}",
        projection.algorithm,
        &hex(&projection.hash)[..16]
    )?;
    writeln!(out, "  view     {}", source_text(projection))?;
    if let Some(version) = &projection.retired_checkpoint {
        writeln!(
            out,
            "  note     the newest checkpoint was written by {version}, which is retired; it is ignored"
        )?;
    }
    if projection.compaction_due {
        writeln!(out, "  note     compaction is due: `annal compact` commits this view so later requests keep its prefix")?;
    }
    write_budget(out, projection)?;
    write_counts(out, projection)
}

/// The budget's parts, and the tokens of each kind the view sends.
fn write_budget(out: &mut impl Write, projection: &Projection<'_>) -> std::io::Result<()> {
    let (b, t) = (&projection.budget, &projection.stats.tokens);
    writeln!(
        out,
        "  budget   window {} · max output {} · margin {} · trigger {} · capacity {} tokens",
        count(b.window_tokens.into()),
        count(b.max_output_tokens.into()),
        count(b.margin_tokens().into()),
        count(b.trigger_tokens().into()),
        count(b.capacity_tokens().into()),
    )?;
    writeln!(
        out,
        "  tokens   user {} · assistant {} · markers {} · summary {} · evidence {} · tail {} · total {}",
        count(t.user),
        count(t.assistant),
        count(t.markers),
        count(t.summary),
        count(t.evidence),
        count(t.tail),
        count(t.total)
    )?;
    Ok(())
}

/// What the view keeps and what it leaves out.
fn write_counts(out: &mut impl Write, projection: &Projection<'_>) -> std::io::Result<()> {
    let s = &projection.stats;
    writeln!(
        out,
        "  kept     {} ({} cut) · {} · {} from sourceOrder {} · {}",
        plural(s.kept.user_messages + s.kept.user_messages_cut, "user message"),
        count(s.kept.user_messages_cut),
        plural(s.kept.assistant_outputs, "assistant output"),
        plural(s.kept.tail_records, "tail record"),
        count(s.tail_start),
        plural(s.kept.evidence_rows, "evidence row"),
    )?;
    writeln!(
        out,
        "  omitted  {} and {} named by {} · {} before the tail ({} with results) in the evidence index",
        plural(s.omitted.assistant_outputs, "assistant output"),
        plural(s.omitted.system_records + s.omitted.user_messages, "other record"),
        plural(s.omitted.markers, "marker"),
        plural(s.omitted.tool_records, "tool record"),
        count(s.omitted.tool_results),
    )?;
    if s.omitted.unpaired_blocks + s.omitted.cut_blocks > 0 {
        writeln!(
            out,
            "  notes    {} without their partner shown as text · {} cut to head and tail",
            plural(s.omitted.unpaired_blocks, "tool block"),
            plural(s.omitted.cut_blocks, "tail block"),
        )?;
    }
    Ok(())
}

fn write_block(out: &mut impl Write, block: &MessageBlock<'_>) -> std::io::Result<()> {
    match block {
        MessageBlock::Text { text } => writeln!(out, "{text}"),
        MessageBlock::Thinking { text } => writeln!(out, "(thinking)\n{text}"),
        MessageBlock::ToolCall { call_id, tool, input, target } => {
            let target = if target.is_empty() { String::new() } else { format!(" {target}") };
            writeln!(out, "→ call {tool}{target} [{call_id}]\n{input}")
        }
        MessageBlock::ToolResult { call_id, tool, is_error, output } => {
            let failed = if *is_error { " (error)" } else { "" };
            writeln!(out, "← result {tool} [{call_id}]{failed}\n{output}")
        }
        MessageBlock::Blob { hash, media_type, size_bytes } => {
            writeln!(out, "[blob {media_type}, {} bytes, {}]", count(*size_bytes), hex(hash))
        }
    }
}
