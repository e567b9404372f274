//! The text annal itself writes into a projection: omission markers, cut notes, notes for tool
//! blocks without their partner, the evidence label and rows, the summary label. Planning and
//! rendering both format through here, so what planning measures is what rendering writes.
//!
//! Every string is a pure function of its arguments: part of `deterministic-v1`'s output, so a
//! change here is a new algorithm version.

use crate::tokens::TokenCounter;

/// Characters of a tool output an evidence row keeps from its start.
pub(crate) const ROW_HEAD_CHARS: usize = 160;
/// Characters an evidence row keeps from the end of a longer output.
pub(crate) const ROW_TAIL_CHARS: usize = 160;

/// One omitted slot (`count == 1`) or a run of adjacent ones.
pub(crate) struct MarkerSpan<'a> {
    pub(crate) first_id: &'a str,
    pub(crate) first_order: u64,
    pub(crate) last_id: &'a str,
    pub(crate) last_order: u64,
    pub(crate) count: u64,
    pub(crate) tokens: u64,
}

/// `[omitted / not summarised: entry <id>, sourceOrder <n>, ~<t> tokens]`, or for a run the
/// first and last entry and their sourceOrders, so every id in it stays findable.
pub(crate) fn marker(span: &MarkerSpan<'_>) -> String {
    if span.count == 1 {
        format!(
            "[omitted / not summarised: entry {}, sourceOrder {}, ~{} tokens]",
            span.first_id, span.first_order, span.tokens
        )
    } else {
        format!(
            "[omitted / not summarised: {} entries, from entry {} (sourceOrder {}) to entry {} (sourceOrder {}), ~{} tokens]",
            span.count, span.first_id, span.first_order, span.last_id, span.last_order, span.tokens
        )
    }
}

/// The note between the kept head and tail of a cut text.
pub(crate) fn cut_note(entry_id: &str, order: u64, block: Option<usize>, omitted_tokens: u64) -> String {
    let block = block.map(|b| format!(" block {b},")).unwrap_or_default();
    format!(
        "[… cut: entry {entry_id}, sourceOrder {order},{block} ~{omitted_tokens} tokens omitted here; the original is kept verbatim …]"
    )
}

/// A text cut to at most `head_tokens` from its start and `tail_tokens` from its end, with a
/// note naming the original between them. Returned unchanged when it already fits.
pub(crate) fn cut_text(
    text: &str,
    head_tokens: u32,
    tail_tokens: u32,
    note: impl FnOnce(u64) -> String,
    counter: &dyn TokenCounter,
) -> Option<String> {
    let total = counter.count_tokens(text);
    if total <= head_tokens.saturating_add(tail_tokens) {
        return None;
    }
    let head = prefix_within(text, head_tokens, counter);
    let rest = &text[head.len()..];
    let tail = suffix_within(rest, tail_tokens, counter);
    let kept = counter.count_tokens(head).saturating_add(counter.count_tokens(tail));
    let note = note(u64::from(total.saturating_sub(kept)));
    let mut out = String::with_capacity(head.len() + tail.len() + note.len() + 2);
    out.push_str(head);
    if !head.is_empty() {
        out.push('\n');
    }
    out.push_str(&note);
    if !tail.is_empty() {
        out.push('\n');
    }
    out.push_str(tail);
    Some(out)
}

/// The char boundaries of `text`, plus its end.
fn boundaries(text: &str) -> Vec<usize> {
    text.char_indices().map(|(i, _)| i).chain(std::iter::once(text.len())).collect()
}

/// The longest prefix of `text` (at a char boundary) the counter puts at or under `tokens`.
pub(crate) fn prefix_within<'t>(text: &'t str, tokens: u32, counter: &dyn TokenCounter) -> &'t str {
    if counter.count_tokens(text) <= tokens {
        return text;
    }
    let ends = boundaries(text);
    // Binary search for the last boundary whose prefix fits; counts grow with length.
    let (mut low, mut high) = (0usize, ends.len() - 1);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if counter.count_tokens(&text[..ends[mid]]) <= tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    &text[..ends[low]]
}

/// The longest suffix of `text` the counter puts at or under `tokens`.
pub(crate) fn suffix_within<'t>(text: &'t str, tokens: u32, counter: &dyn TokenCounter) -> &'t str {
    if counter.count_tokens(text) <= tokens {
        return text;
    }
    let starts = boundaries(text);
    let (mut low, mut high) = (0usize, starts.len() - 1);
    // Find the first start whose suffix fits.
    while low < high {
        let mid = (low + high) / 2;
        if counter.count_tokens(&text[starts[mid]..]) <= tokens {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    &text[starts[low]..]
}

/// A call whose result is not in the view: shown as text so no call is left unanswered.
pub(crate) fn unanswered_call_note(tool: &str, call_id: &str, target: &str, input: &str) -> String {
    let target = if target.is_empty() { String::new() } else { format!(" on {target}") };
    format!("[tool call {tool}{target} (call {call_id}) has no result in this view; its input was: {input}]")
}

/// A result whose call is not in the view: shown as text so no result is left without its call.
pub(crate) fn unpaired_result_note(tool: &str, call_id: &str, is_error: bool, output: &str) -> String {
    let tool = if tool.is_empty() { String::from("a tool") } else { tool.to_owned() };
    let failed = if is_error { ", an error" } else { "" };
    format!("[result of {tool} (call {call_id}{failed}); its call is not in this view. Output:]\n{output}")
}

/// A result that arrived after the model had already taken a later step: its call is shown
/// above as a note (as it was when that step was asked for), so the result is a note as well.
pub(crate) fn late_result_note(tool: &str, call_id: &str, is_error: bool, output: &str) -> String {
    let tool = if tool.is_empty() { String::from("a tool") } else { tool.to_owned() };
    let failed = if is_error { ", an error" } else { "" };
    format!(
        "[result of {tool} (call {call_id}{failed}), which arrived after a later step; its call is shown above as a note. Output:]\n{output}"
    )
}

/// The label that opens the evidence index: the sourceOrder range of the tool records before
/// the tail (every call and result there is kept verbatim in the journal), their result count,
/// and how many rows follow.
pub(crate) fn evidence_label(first_order: u64, last_order: u64, results: u64, rows: u64) -> String {
    format!(
        "[evidence index, not a summary: the tool calls and results from sourceOrder {first_order} to \
         {last_order} are not shown as calls. {rows} of their {results} results follow as one JSON object per \
         line, most relevant first: errors; configuration, schema, validation and test targets; the latest and \
         the first call of each tool and target; then the newest. Each row names its original by entryId and \
         blockIndex; every original is kept verbatim and can be retrieved in full.]"
    )
}

/// The label ahead of a handoff summary.
pub(crate) fn summary_label(upto: u64) -> String {
    format!(
        "[handoff summary, written by a model when this conversation was compacted (sourceOrder 0 to {}). \
         It may be incomplete or wrong: the verbatim messages and the originals named here take precedence.]",
        upto.saturating_sub(1)
    )
}

/// The summary block's text: label, blank line, summary.
pub(crate) fn summary_block(upto: u64, summary: &str) -> String {
    format!("{}\n\n{summary}", summary_label(upto))
}

fn first_chars(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// The last `chars` characters, found from the end: outputs can be megabytes long.
fn last_chars(text: &str, chars: usize) -> &str {
    match chars.checked_sub(1).and_then(|n| text.char_indices().rev().nth(n)) {
        Some((start, _)) => &text[start..],
        None if chars == 0 => "",
        None => text,
    }
}

/// What an evidence row says about one tool result.
pub(crate) struct RowFields<'a> {
    pub(crate) entry_id: &'a str,
    pub(crate) block_index: usize,
    pub(crate) source_order: u64,
    pub(crate) tool: &'a str,
    pub(crate) target: &'a str,
    pub(crate) is_error: bool,
    pub(crate) output: &'a str,
}

/// One evidence row: a single JSON object with the output's first and last characters. An
/// output no longer than both excerpts together is given whole in `head`.
pub(crate) fn evidence_row(fields: &RowFields<'_>) -> String {
    let output = fields.output;
    // Only as many characters are walked as the excerpts need.
    let (head, tail) = if first_chars(output, ROW_HEAD_CHARS + ROW_TAIL_CHARS).len() == output.len() {
        (output, "")
    } else {
        (first_chars(output, ROW_HEAD_CHARS), last_chars(output, ROW_TAIL_CHARS))
    };
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""));
    format!(
        "{{\"entryId\":{},\"blockIndex\":{},\"sourceOrder\":{},\"tool\":{},\"target\":{},\"error\":{},\"head\":{},\"tail\":{}}}",
        quote(fields.entry_id),
        fields.block_index,
        fields.source_order,
        quote(fields.tool),
        quote(fields.target),
        fields.is_error,
        quote(head),
        quote(tail)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::CharsPerFour;

    #[test]
    fn markers_name_their_entries() {
        let one = MarkerSpan {
            first_id: "a1",
            first_order: 4,
            last_id: "a1",
            last_order: 4,
            count: 1,
            tokens: 120,
        };
        assert_eq!(marker(&one), "[omitted / not summarised: entry a1, sourceOrder 4, ~120 tokens]");
        let run = MarkerSpan { last_id: "a9", last_order: 30, count: 3, ..one };
        let text = marker(&run);
        assert!(text.contains("entry a1 (sourceOrder 4)") && text.contains("entry a9 (sourceOrder 30)"));
    }

    #[test]
    fn cuts_keep_head_and_tail_within_their_tokens() {
        let text: String = (0..400).map(|i| format!("w{i} ")).collect();
        let cut = cut_text(&text, 10, 5, |n| format!("<{n}>"), &CharsPerFour).unwrap_or_default();
        let (head, rest) = cut.split_once('\n').unwrap_or_default();
        let (note, tail) = rest.split_once('\n').unwrap_or_default();
        assert!(text.starts_with(head) && text.ends_with(tail));
        assert!(CharsPerFour.count_tokens(head) <= 10 && CharsPerFour.count_tokens(tail) <= 5);
        assert_eq!(head.chars().count(), 40);
        assert!(note.starts_with('<'));
        assert!(cut_text("short", 10, 5, |n| format!("{n}"), &CharsPerFour).is_none());
        assert_eq!(prefix_within("héllo wörld", 1, &CharsPerFour), "héll");
        assert_eq!(suffix_within("héllo wörld", 1, &CharsPerFour), "örld");
    }

    #[test]
    fn rows_are_one_json_object() {
        let output = "x".repeat(1000);
        let row = evidence_row(&RowFields {
            entry_id: "e\"1",
            block_index: 2,
            source_order: 7,
            tool: "Bash",
            target: "cargo test",
            is_error: true,
            output: &output,
        });
        let value: serde_json::Value = serde_json::from_str(&row).unwrap_or_default();
        assert_eq!(value["entryId"], "e\"1");
        assert_eq!(value["head"].as_str().map(str::len), Some(ROW_HEAD_CHARS));
        assert_eq!(value["tail"].as_str().map(str::len), Some(ROW_TAIL_CHARS));
        assert!(row.starts_with("{\"entryId\""));
        assert_eq!(last_chars("héllo", 2), "lo");
        assert_eq!(last_chars("héllo", 4), "éllo");
        assert_eq!(last_chars("hé", 5), "hé");
        assert_eq!(last_chars("hé", 0), "");
        assert!(!row.contains('\n'));
    }
}
