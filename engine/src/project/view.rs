//! The view for the next request: the current checkpoint plus every later record verbatim, or,
//! when no checkpoint applies, a fresh derivation from the originals.
//!
//! Between compactions the view only grows at its end, so successive requests share their
//! prefix byte for byte. A fresh derivation covers the same records a compaction would commit
//! (up to `compaction_upto`), so committing it leaves the view's bytes unchanged.

use std::borrow::Cow;
use std::sync::Arc;

use super::current::{current_checkpoint, Current};
use super::receipt::receipt_summary;
use crate::error::ReadError;
use crate::store::Store;

use super::budget::Budget;
use super::loaded::Loaded;
use super::message::projection_hash;
use super::outline::Outline;
use super::plan::Plan;
use super::render::{needed_orders, render, EntryIds, RenderInput};
use super::resolve::{derive, DeriveInput};
use super::source::ProjectionSnapshot;
use super::{Algorithm, ProjectError, ProjectOptions, Projection, ViewSource};

/// Where a view's summary text comes from.
#[derive(Debug)]
enum SummaryText {
    None,
    /// Handed in (a compaction about to commit it).
    Given(String),
    /// In the receipt at this sourceOrder.
    Receipt(u64),
}

/// A planned view with its records loaded; [`PreparedProjection::render`] borrows their text.
#[derive(Debug)]
pub struct PreparedProjection<'s> {
    source: &'s ProjectionSnapshot,
    /// The records the view covers.
    outline: Outline,
    plan: Plan,
    loaded: Loaded<'s>,
    /// The evidence rows, when a derivation in this snapshot formatted them already.
    rows: Option<Arc<Vec<String>>>,
    summary: SummaryText,
    origin: ViewSource,
    budget: Budget,
    retired: Option<String>,
    /// Where a compaction now would end.
    compaction_upto: u64,
}

impl ProjectionSnapshot {
    /// Plans the view of `session` for the next request: the current checkpoint plus every
    /// later record, or (no checkpoint, or the checkpoint view would pass the capacity) a
    /// derivation from the originals with `deterministic-v1`.
    ///
    /// # Errors
    /// [`ProjectError`].
    pub fn prepare(
        &self,
        session: &str,
        options: &ProjectOptions,
    ) -> Result<PreparedProjection<'_>, ProjectError> {
        options.budget.check()?;
        let outline = Outline::load(self, session)?;
        let mut retired = None;
        match current_checkpoint(self, session, &outline)? {
            Current::Checkpoint { key, receipt, plan } => {
                let later: u64 = outline
                    .items()
                    .iter()
                    .filter(|i| i.order >= plan.end)
                    .map(|i| u64::from(i.tokens_total))
                    .sum();
                let estimate = plan.frozen_tokens + plan.tail_tokens + later;
                if estimate <= u64::from(options.budget.capacity_tokens()) {
                    let upto = outline.compaction_upto();
                    let mut prepared =
                        self.prepare_checkpoint(outline, key, receipt, *plan, options.budget)?;
                    prepared.compaction_upto = upto;
                    return Ok(prepared);
                }
            }
            Current::Retired { version } => retired = Some(version),
            Current::None => {}
        }
        self.prepare_derived(session, outline, options.budget, Algorithm::DeterministicV1, None, retired)
    }

    /// Plans a derivation from the originals, whatever checkpoints exist: what a compaction
    /// would commit now with `deterministic-v1`.
    ///
    /// # Errors
    /// [`ProjectError`].
    pub fn prepare_originals(
        &self,
        session: &str,
        options: &ProjectOptions,
    ) -> Result<PreparedProjection<'_>, ProjectError> {
        options.budget.check()?;
        let outline = Outline::load(self, session)?;
        self.prepare_derived(session, outline, options.budget, Algorithm::DeterministicV1, None, None)
    }

    /// As [`ProjectionSnapshot::prepare_originals`], as if the session ended before sourceOrder
    /// `end`: what `deterministic-v1` would have sent with the request that followed record
    /// `end - 1`. Checkpoints are left aside, as in `prepare_originals`.
    ///
    /// # Errors
    /// [`ProjectError`].
    pub fn prepare_originals_until(
        &self,
        session: &str,
        options: &ProjectOptions,
        end: u64,
    ) -> Result<PreparedProjection<'_>, ProjectError> {
        options.budget.check()?;
        let outline = Outline::load(self, session)?.truncated(end);
        self.prepare_derived(session, outline, options.budget, Algorithm::DeterministicV1, None, None)
    }

    /// Derives the plan of `[0, compaction_upto)` over every record of `outline` (with `summary`
    /// for summarized-v1) and loads the view.
    pub(crate) fn prepare_derived(
        &self,
        session: &str,
        outline: Outline,
        budget: Budget,
        algorithm: Algorithm,
        summary: Option<String>,
        retired: Option<String>,
    ) -> Result<PreparedProjection<'_>, ProjectError> {
        let upto = outline.compaction_upto();
        let derivation = derive(&DeriveInput {
            source: self,
            session,
            outline: &outline,
            upto,
            budget,
            algorithm,
            summary: summary.as_deref(),
            counter: self.counter(),
        })?;
        let under_trigger = outline.tokens_before(outline.len) <= u64::from(budget.trigger_tokens())
            && derivation.plan.is_verbatim();
        let origin = if under_trigger { ViewSource::Live } else { ViewSource::Derived };
        let summary = match summary {
            Some(text) if derivation.plan.summary.is_some() => SummaryText::Given(text),
            _ => SummaryText::None,
        };
        let prepared = PreparedProjection {
            source: self,
            outline,
            plan: derivation.plan,
            loaded: derivation.loaded,
            rows: Some(Arc::new(derivation.rows)),
            summary,
            origin,
            budget,
            retired,
            compaction_upto: upto,
        };
        prepared.load()
    }

    /// Loads the view of a committed checkpoint over `outline` (every record for a view, the
    /// records up to the plan's end for the checkpoint alone).
    pub(crate) fn prepare_checkpoint(
        &self,
        outline: Outline,
        key: crate::hash::Hash,
        receipt: u64,
        plan: Plan,
        budget: Budget,
    ) -> Result<PreparedProjection<'_>, ProjectError> {
        let summary = if plan.summary.is_some() { SummaryText::Receipt(receipt) } else { SummaryText::None };
        let compaction_upto = plan.upto;
        let prepared = PreparedProjection {
            source: self,
            outline,
            plan,
            loaded: Loaded::default(),
            rows: self.cache().and_then(|cache| cache.rows(&key)),
            summary,
            origin: ViewSource::Checkpoint { key, receipt },
            budget,
            retired: None,
            compaction_upto,
        };
        prepared.load()
    }
}

impl<'s> PreparedProjection<'s> {
    /// Loads every record rendering reads.
    fn load(mut self) -> Result<PreparedProjection<'s>, ProjectError> {
        let ids = EntryIds { cache: self.source.cache(), outline: &self.outline };
        let mut orders = needed_orders(&self.input(&ids));
        if let SummaryText::Receipt(order) = self.summary {
            orders.push(order);
            orders.sort_unstable();
        }
        self.loaded.ensure(self.source, &self.outline, &orders)?;
        Ok(self)
    }

    fn input<'a>(&'a self, ids: &'a EntryIds<'a>) -> RenderInput<'a> {
        RenderInput {
            snapshot: self.source.snapshot(),
            items: self.outline.items(),
            plan: &self.plan,
            counter: self.source.counter(),
            ids,
            rows: self.rows.as_deref().map(Vec::as_slice),
            count_only: false,
        }
    }
}

impl PreparedProjection<'_> {
    /// The plan's algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.plan.algorithm
    }

    /// Where the view comes from.
    pub fn source(&self) -> ViewSource {
        self.origin
    }

    /// The records the plan covers: sourceOrders `[0, upto)`.
    pub fn upto(&self) -> u64 {
        self.plan.upto
    }

    pub(crate) fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The evidence rows as formatted by the derivation, if it ran in this snapshot.
    pub(crate) fn formatted_rows(&self) -> Option<Arc<Vec<String>>> {
        self.rows.clone()
    }

    /// Renders the messages, borrowing text from the stored records.
    ///
    /// # Errors
    /// [`ProjectError::Corrupted`] if a record fails validation; I/O.
    pub fn render(&self) -> Result<Projection<'_>, ProjectError> {
        let views = self.loaded.views();
        let snapshot = self.source.snapshot();
        let summary: Option<Cow<'_, str>> = match &self.summary {
            SummaryText::None => None,
            SummaryText::Given(text) => Some(Cow::Borrowed(text.as_str())),
            SummaryText::Receipt(order) => {
                let text = receipt_summary(snapshot, &views.get(*order)?)?;
                let hash = text.as_ref().map(|t| *blake3::hash(t.as_bytes()).as_bytes());
                if hash != self.plan.summary {
                    return Err(ProjectError::Corrupted {
                        reason: format!(
                            "the receipt at sourceOrder {order} does not carry its checkpoint's summary"
                        ),
                    });
                }
                text
            }
        };
        let ids = EntryIds { cache: self.source.cache(), outline: &self.outline };
        let rendered = render(&self.input(&ids), &views, summary.as_deref())?;
        if let (ViewSource::Checkpoint { key, .. }, Some(rows), Some(cache)) =
            (self.origin, rendered.rows.clone(), self.source.cache())
        {
            // A checkpoint's rows are fixed by its plan and the journal: format them once.
            cache.keep_rows(key, Arc::new(rows));
        }
        // Due when compacting now would change the view: a derivation is not committed yet; a
        // checkpoint view past the trigger has later records a new checkpoint would fold in. A
        // live view past the trigger only through a pending exchange cannot shrink yet.
        let compaction_due = self.retired.is_some()
            || match self.origin {
                ViewSource::Derived => true,
                ViewSource::Live => false,
                ViewSource::Checkpoint { .. } => {
                    rendered.stats.tokens.total > u64::from(self.budget.trigger_tokens())
                        && self.plan.upto < self.compaction_upto
                }
            };
        Ok(Projection {
            algorithm: self.plan.algorithm,
            hash: projection_hash(&rendered.messages),
            messages: rendered.messages,
            stats: rendered.stats,
            omissions: rendered.omissions,
            budget: self.budget,
            source: self.origin,
            compaction_due,
            retired_checkpoint: self.retired.clone(),
        })
    }
}

impl Store {
    /// A consistent read view for projections, with this store's token counter.
    ///
    /// # Errors
    /// I/O or corruption.
    pub fn projection_snapshot(&self) -> Result<ProjectionSnapshot, ReadError> {
        let (txn, layer) = self.paired()?;
        ProjectionSnapshot::new(
            txn,
            layer,
            self.options().token_counter.clone(),
            Some(self.projection_cache()),
        )
    }

    /// The view of `session` for the next model request, owned: the current checkpoint plus
    /// every later record, or a derivation from the originals. Between compactions successive
    /// views share their prefix byte for byte. For zero-copy rendering use
    /// [`Store::projection_snapshot`] and [`ProjectionSnapshot::prepare`].
    ///
    /// # Examples
    /// A host's step: send the view; compact when it says so.
    /// ```
    /// use annal_engine::{Budget, CompactOptions, ProjectOptions, Record, Role, Store, StoreOptions};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let store = Store::open(dir.path().join("annal.redb"), StoreOptions::default())?;
    /// store.append("s", None, vec![Record::text("e1", Role::User, "Fix the ledger.")])?;
    /// let options = ProjectOptions::new(Budget::new(200_000, 32_000));
    /// let view = store.project("s", &options)?;
    /// assert_eq!(view.messages.len(), 1);
    /// if view.compaction_due {
    ///     store.compact("s", &CompactOptions::new(options))?;
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`ProjectError`].
    pub fn project(
        &self,
        session: &str,
        options: &ProjectOptions,
    ) -> Result<Projection<'static>, ProjectError> {
        let source = self.projection_snapshot()?;
        let projection = source.prepare(session, options)?.render()?.into_owned();
        // A checkpoint view is chosen by an estimate from digests, and the notes written for
        // calls whose results are not in the view cost more than their digests say: one that
        // comes out past the capacity is derived instead, as a view estimated past it is.
        let capacity = u64::from(options.budget.capacity_tokens());
        if matches!(projection.source, ViewSource::Checkpoint { .. })
            && projection.stats.tokens.total > capacity
        {
            return Ok(source.prepare_originals(session, options)?.render()?.into_owned());
        }
        Ok(projection)
    }
}

#[cfg(test)]
mod tests {
    use redb::TableHandle;

    use super::*;
    use crate::options::StoreOptions;
    use crate::record::{Record, Role};
    use crate::tables::{CHECKPOINTS, CLAIMS, RECEIPTS};

    #[test]
    fn a_store_without_the_checkpoint_tables_gets_them_at_open() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("old.redb");
        let store = Store::open(&path, StoreOptions::default())?;
        store.append("s", Some(0), vec![Record::text("e1", Role::User, "hello")])?;
        store.close()?;
        // What a store written before these tables existed looks like.
        let db = redb::Database::create(&path)?;
        let txn = db.begin_write()?;
        for table in [CHECKPOINTS.name(), RECEIPTS.name(), CLAIMS.name()] {
            assert!(txn.delete_table(redb::TableDefinition::<&str, &str>::new(table))?, "{table} existed");
        }
        txn.commit()?;
        drop(db);
        let store = Store::open(&path, StoreOptions::default())?;
        let projection = store.project("s", &ProjectOptions::new(Budget::new(16_000, 2_000)))?;
        assert_eq!(projection.source, ViewSource::Live);
        assert_eq!(projection.messages.len(), 1);
        Ok(())
    }
}
