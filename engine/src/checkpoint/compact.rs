//! The compaction protocol (`Store::compact`): check the view against the trigger, reuse a
//! committed key, claim it, derive the checkpoint from the originals (with a summary for
//! summarized-v1), and commit it with its receipt in one transaction.
//!
//! A new compaction always derives from the originals (never from the previous projection), so
//! errors do not compound along a chain of compactions. A summarized-v1 request that gets no
//! usable summary commits `deterministic-v1` under the same key, with the reason in the
//! receipt; the key stays committed, so that prefix is not summarised again.

use crate::hash::{hash_to_hex, Hash};
use crate::prepare::prepare_batch;
use crate::project::{
    checkpoint_at, checkpoint_key, encode_plan, read_receipt, receipt_record, receipt_summary_owned,
    Algorithm, Current, Outline, Plan, PreparedProjection, ProjectError, Projection, ProjectionSnapshot,
    ReceiptBody, ReceiptInfo,
};
use crate::store::Store;

use super::claims::Owner;
use super::durable::{CheckpointRequest, CommitMode, CommitRefused};
use super::key::new_owner;
use super::options::{CompactOptions, CompactOutcome, CompactStatus};
use super::summarize::{summarize_within, SummaryRequest};
use super::writes::{refusal_error, Claimed, Held};
use super::CompactError;

impl Store {
    /// Compacts `session`: commits a checkpoint of its records `[0, upto)` atomically with a
    /// receipt record in its journal, unless that checkpoint is committed already (then it is
    /// reused, without calling the summarizer) or the view fits under the trigger (then nothing
    /// is written). The checkpoint is derived from the originals. For summarized-v1, a failed,
    /// late, empty or oversized summary commits deterministic-v1 with the reason recorded.
    ///
    /// A compaction holds a claim on its key while it works: another compaction of the same key
    /// waits up to `claim_wait` and then fails with [`CompactError::Claimed`]; after the lease
    /// it may take over, and the slow owner's commit is then refused with
    /// [`CompactError::Fenced`]. Note that the receipt takes a sourceOrder: appends that pass
    /// `expected_next` must read the session's length again.
    ///
    /// # Errors
    /// [`CompactError`]; never because a summary failed.
    pub fn compact(&self, session: &str, options: &CompactOptions) -> Result<CompactOutcome, CompactError> {
        let budget = options.project.budget;
        budget.check().map_err(ProjectError::from)?;
        let requested = options.project.algorithm;
        let source = self.projection_snapshot()?;
        let view = source.prepare(session, &options.project)?.render()?.into_owned();
        let view_tokens = view.stats.tokens.total;
        let outline = Outline::load(&source, session)?;
        let upto = outline.compaction_upto();
        let key = checkpoint_key(session, upto, requested, &budget);
        if let Some(outcome) = self.reuse(&source, session, &outline, key, requested, view_tokens)? {
            return Ok(outcome);
        }
        if !options.force && !view.compaction_due {
            return Ok(CompactOutcome {
                status: CompactStatus::NotNeeded,
                key: None,
                upto,
                requested,
                algorithm: view.algorithm,
                fallback_reason: None,
                receipt: None,
                fencing_token: 0,
                projection_hash: view.hash,
                stats: view.stats,
                view_tokens,
            });
        }
        let owner = new_owner();
        let held = match self.claim(session, key, owner, options)? {
            Claimed::Granted(held) => held,
            Claimed::Committed => {
                // Committed by someone else since the snapshot: read it anew and reuse it.
                let source = self.projection_snapshot()?;
                let outline = Outline::load(&source, session)?;
                return self.reuse(&source, session, &outline, key, requested, view_tokens)?.ok_or_else(
                    || CompactError::Corrupted {
                        reason: format!(
                            "checkpoint {} is committed but no receipt names it",
                            hash_to_hex(&key)
                        ),
                    },
                );
            }
        };
        let job =
            ClaimedCompaction { source: &source, session, outline: &outline, key, owner, held, options };
        let result = self.compact_claimed(&job, view);
        if result.is_err() {
            self.claims().release(key, owner, held.local_token);
            let token = held.durable.token;
            // Best effort: an unreleased claim expires with its lease anyway.
            let _ = self.checkpoint_request(|reply| CheckpointRequest::Release { key, owner, token, reply });
        }
        result
    }

    /// Derives the checkpoint of a compaction that holds its claim and commits it with its
    /// receipt; `view` is the view the compaction was asked for, summarised for summarized-v1.
    fn compact_claimed(
        &self,
        job: &ClaimedCompaction<'_>,
        view: Projection<'static>,
    ) -> Result<CompactOutcome, CompactError> {
        let view_tokens = view.stats.tokens.total;
        let mut summary = self.summarize(job, view);
        let derived = derive_checkpoint(job, &mut summary)?;
        self.commit_claimed(job, &derived, summary, view_tokens)
    }

    /// The summary for a summarized-v1 compaction, or why it has none; nothing for
    /// deterministic-v1.
    fn summarize(&self, job: &ClaimedCompaction<'_>, view: Projection<'static>) -> Summary {
        let budget = job.options.project.budget;
        let outline = job.outline;
        if job.options.project.algorithm != Algorithm::SummarizedV1 {
            return Summary::default();
        }
        // The same test the derivation makes: a session under the trigger is shown whole.
        if outline.tokens_before(outline.len) <= u64::from(budget.trigger_tokens()) {
            return Summary::fallback(
                "the records fit under the trigger, so there is nothing to summarise".to_owned(),
            );
        }
        let Some(summarizer) = &job.options.summarizer else {
            return Summary::fallback("no summarizer was given".to_owned());
        };
        let request =
            SummaryRequest::new(job.session, outline.compaction_upto(), budget.summary_tokens, view.messages);
        match summarize_within(summarizer, request) {
            Ok(text) => {
                let tokens = self.options().token_counter.count_tokens(&text);
                if tokens > budget.summary_tokens {
                    Summary::fallback(format!(
                        "the summary has {tokens} tokens, more than the {} allowed",
                        budget.summary_tokens
                    ))
                } else {
                    Summary { text: Some(text), fallback_reason: None }
                }
            }
            Err(why) => Summary::fallback(why),
        }
    }

    /// Commits the derived checkpoint with its receipt under the held claim.
    fn commit_claimed(
        &self,
        job: &ClaimedCompaction<'_>,
        derived: &PreparedProjection<'_>,
        summary: Summary,
        view_tokens: u64,
    ) -> Result<CompactOutcome, CompactError> {
        let (session, key, owner, held) = (job.session, job.key, job.owner, job.held);
        let projection = derived.render()?;
        let plan = derived.plan();
        let info = receipt_info(job, plan, &projection, summary.fallback_reason.clone());
        let body = ReceiptBody {
            session,
            info: &info,
            stats: &projection.stats,
            summary: summary.text.as_deref(),
            reinstated: false,
        };
        let receipt = prepare_batch(session, vec![receipt_record(&body, &owner)], self.options())
            .map_err(CompactError::Receipt)?;
        let mode = CommitMode::Claimed { owner, token: held.durable.token, plan: encode_plan(plan) };
        let committed: Result<u64, CommitRefused> = self.checkpoint_request(|reply| {
            CheckpointRequest::Commit { key, session: session.to_owned(), mode, receipt, reply }
        })?;
        let order = committed.map_err(|refused| refusal_error(session, key, held.durable.token, refused))?;
        let _ = self.claims().commit(key, owner, held.local_token);
        self.claims().mark_committed(key);
        if let Some(rows) = derived.formatted_rows() {
            self.projection_cache().keep_rows(key, rows);
        }
        Ok(CompactOutcome {
            status: CompactStatus::Committed,
            key: Some(key),
            upto: info.upto,
            requested: info.requested,
            algorithm: plan.algorithm,
            fallback_reason: summary.fallback_reason,
            receipt: Some(order),
            fencing_token: held.durable.token,
            projection_hash: projection.hash,
            stats: projection.stats,
            view_tokens,
        })
    }

    /// Reuses a committed checkpoint for `key`: nothing to write when it is current, a new
    /// receipt when another one is. `None` when the key is not committed.
    fn reuse(
        &self,
        source: &ProjectionSnapshot,
        session: &str,
        outline: &Outline,
        key: Hash,
        requested: Algorithm,
        view_tokens: u64,
    ) -> Result<Option<CompactOutcome>, CompactError> {
        let Some(receipt) = outline.receipts().iter().rev().find(|r| r.key == key).copied() else {
            return Ok(None);
        };
        let Ok(info) = read_receipt(source, session, receipt.order)? else { return Ok(None) };
        let Current::Checkpoint { plan, .. } = checkpoint_at(source, session, outline, receipt.order)? else {
            return Ok(None);
        };
        let prefix = outline.truncated(plan.end);
        let prepared = source.prepare_checkpoint(prefix, key, receipt.order, *plan, info.budget)?;
        let projection = prepared.render()?;
        let mut outcome = CompactOutcome {
            status: CompactStatus::Reused,
            key: Some(key),
            upto: info.upto,
            requested,
            algorithm: projection.algorithm,
            fallback_reason: info.fallback_reason.clone(),
            receipt: Some(receipt.order),
            fencing_token: info.fencing_token,
            projection_hash: info.projection_hash,
            stats: projection.stats,
            view_tokens,
        };
        if outline.latest_receipt().map(|r| r.key) == Some(key) {
            return Ok(Some(outcome));
        }
        let summary = receipt_summary_owned(source, session, receipt.order)?;
        let body = ReceiptBody {
            session,
            info: &info,
            stats: &projection.stats,
            summary: summary.as_deref(),
            reinstated: true,
        };
        let record = prepare_batch(session, vec![receipt_record(&body, &new_owner())], self.options())
            .map_err(CompactError::Receipt)?;
        let committed: Result<u64, CommitRefused> =
            self.checkpoint_request(|reply| CheckpointRequest::Commit {
                key,
                session: session.to_owned(),
                mode: CommitMode::Reinstate,
                receipt: record,
                reply,
            })?;
        match committed {
            Ok(order) => {
                outcome.status = CompactStatus::Reinstated;
                outcome.receipt = Some(order);
                Ok(Some(outcome))
            }
            Err(CommitRefused::AlreadyCurrent) => Ok(Some(outcome)),
            Err(refused) => Err(refusal_error(session, key, info.fencing_token, refused)),
        }
    }
}

/// A compaction that holds the claim on its key: what each of its steps reads.
struct ClaimedCompaction<'a> {
    source: &'a ProjectionSnapshot,
    session: &'a str,
    /// The session's outline in `source`; the checkpoint covers its records up to
    /// `compaction_upto`.
    outline: &'a Outline,
    key: Hash,
    owner: Owner,
    held: Held,
    options: &'a CompactOptions,
}

/// A summarized-v1 compaction's summary, or the reason it has none (recorded in the receipt);
/// neither for deterministic-v1.
#[derive(Default)]
struct Summary {
    text: Option<String>,
    fallback_reason: Option<String>,
}

impl Summary {
    fn fallback(reason: String) -> Summary {
        Summary { text: None, fallback_reason: Some(reason) }
    }
}

/// What the receipt of a claimed compaction's checkpoint says of it.
fn receipt_info(
    job: &ClaimedCompaction<'_>,
    plan: &Plan,
    projection: &Projection<'_>,
    fallback_reason: Option<String>,
) -> ReceiptInfo {
    ReceiptInfo {
        key: job.key,
        algorithm_version: plan.algorithm.as_str().to_owned(),
        requested: job.options.project.algorithm,
        upto: job.outline.compaction_upto(),
        end: plan.end,
        budget: job.options.project.budget,
        projection_hash: projection.hash,
        summary_hash: plan.summary,
        fencing_token: job.held.durable.token,
        fallback_reason,
    }
}

/// Derives the checkpoint from the originals, with the summary when there is one; a summary the
/// capacity cannot hold is dropped for deterministic-v1, the reason kept in `summary`.
fn derive_checkpoint<'s>(
    job: &ClaimedCompaction<'s>,
    summary: &mut Summary,
) -> Result<PreparedProjection<'s>, CompactError> {
    let (source, session, budget) = (job.source, job.session, job.options.project.budget);
    let prefix = job.outline.clone();
    let algorithm = if summary.text.is_some() { Algorithm::SummarizedV1 } else { Algorithm::DeterministicV1 };
    let derived =
        source.prepare_derived(session, prefix.clone(), budget, algorithm, summary.text.clone(), None);
    match derived {
        Err(ProjectError::DoesNotFit { tokens, capacity, .. }) if summary.text.is_some() => {
            *summary = Summary::fallback(format!(
                "with the summary the projection needs {tokens} tokens, more than the capacity of {capacity}"
            ));
            Ok(source.prepare_derived(session, prefix, budget, Algorithm::DeterministicV1, None, None)?)
        }
        other => Ok(other?),
    }
}
