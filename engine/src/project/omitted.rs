//! The structured list of what a projection leaves out or cuts: one entry per marker, cut user
//! message, cut tail block and for the tool records the evidence index stands in for, naming
//! the originals by entry id and sourceOrder, so a host fetches them without parsing text.

use serde_json::{json, Value};

use super::item::Item;

/// A record a projection names without showing it whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmittedEntry {
    /// Its entry id (what `history get` takes).
    pub entry_id: String,
    /// Its sourceOrder in the session.
    pub source_order: u64,
}

/// Why an original is not shown verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OmissionReason {
    /// A run of records before the tail named by one marker: assistant and system text the
    /// history had no room for, or user messages under the last step of the capacity rule.
    Marker,
    /// A user message before the tail cut to head and tail under the capacity rule.
    UserCut,
    /// A block of the tail cut to head and tail to fit the capacity.
    BlockCut {
        /// The block's index in its record.
        block: u32,
    },
    /// The tool calls and results before the tail, not shown as calls: the evidence index
    /// shows `rows` of their `results` result records as rows; the rest are left out for its
    /// budget.
    ToolRecords {
        /// Result records in the range.
        results: u64,
        /// Rows the index shows.
        rows: u64,
    },
}

impl OmissionReason {
    /// The name `project --json` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            OmissionReason::Marker => "marker",
            OmissionReason::UserCut => "userCut",
            OmissionReason::BlockCut { .. } => "blockCut",
            OmissionReason::ToolRecords { .. } => "toolRecords",
        }
    }
}

/// One entry of [`crate::Projection::omissions`]: a record or a run of records, in sourceOrder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Omission {
    /// Why.
    pub reason: OmissionReason,
    /// The first record (the only one, unless it is a run).
    pub first: OmittedEntry,
    /// The last record of a run (the same as `first` for one record).
    pub last: OmittedEntry,
    /// Records in `[first, last]` this entry covers (a run's records with text for a marker,
    /// the tool records for the evidence index).
    pub records: u64,
    /// Estimated tokens left out: a run's whole text, what a cut removed, the tool records'.
    pub tokens: u64,
}

impl Omission {
    /// One record.
    pub(crate) fn one(reason: OmissionReason, entry_id: &str, source_order: u64, tokens: u64) -> Omission {
        let entry = OmittedEntry { entry_id: entry_id.to_owned(), source_order };
        Omission { reason, first: entry.clone(), last: entry, records: 1, tokens }
    }

    /// The entry as `project --json` writes it.
    pub(crate) fn to_json(&self) -> Value {
        let mut value = json!({
            "why": self.reason.as_str(),
            "entryId": self.first.entry_id,
            "sourceOrder": self.first.source_order,
            "tokens": self.tokens,
        });
        let Some(object) = value.as_object_mut() else { return value };
        if self.records > 1 || self.first != self.last {
            object.insert("records".into(), self.records.into());
            object.insert("lastEntryId".into(), self.last.entry_id.clone().into());
            object.insert("lastSourceOrder".into(), self.last.source_order.into());
        }
        match self.reason {
            OmissionReason::BlockCut { block } => {
                object.insert("block".into(), block.into());
            }
            OmissionReason::ToolRecords { results, rows } => {
                object.insert("results".into(), results.into());
                object.insert("rows".into(), rows.into());
            }
            OmissionReason::Marker | OmissionReason::UserCut => {}
        }
        value
    }
}

/// The entry for the tool records among `history` (before the tail), which the evidence index
/// stands in for with `rows` rows; `entry` names a record by its sourceOrder.
pub(crate) fn tool_records<E>(
    history: &[Item],
    rows: u64,
    entry: impl Fn(u64) -> Result<OmittedEntry, E>,
) -> Result<Option<Omission>, E> {
    let tools: Vec<&Item> = history.iter().filter(|i| i.is_call() || i.is_result()).collect();
    let (Some(first), Some(last)) = (tools.first(), tools.last()) else { return Ok(None) };
    Ok(Some(Omission {
        reason: OmissionReason::ToolRecords {
            results: tools.iter().filter(|i| i.is_result()).count() as u64,
            rows,
        },
        first: entry(first.order)?,
        last: entry(last.order)?,
        records: tools.len() as u64,
        tokens: tools.iter().map(|i| u64::from(i.tokens_total)).sum(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_the_originals() {
        let cut = Omission::one(OmissionReason::UserCut, "u1", 4, 900);
        assert_eq!(
            cut.to_json(),
            json!({"why": "userCut", "entryId": "u1", "sourceOrder": 4, "tokens": 900})
        );
        let run = Omission {
            reason: OmissionReason::ToolRecords { results: 3, rows: 2 },
            first: OmittedEntry { entry_id: "a".into(), source_order: 1 },
            last: OmittedEntry { entry_id: "b".into(), source_order: 9 },
            records: 6,
            tokens: 1_200,
        };
        let value = run.to_json();
        assert_eq!(value["lastEntryId"], "b");
        assert_eq!((value["results"].as_u64(), value["rows"].as_u64()), (Some(3), Some(2)));
        assert_eq!(value["records"], 6);
    }
}
