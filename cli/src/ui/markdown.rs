//! Transcript text as HTML that can run nothing: Markdown for user and assistant text (raw HTML
//! in it shown as text, links only to web and mail addresses, images as links), and plain text
//! with terminal escapes made visible.

use maud::{html, Markup, PreEscaped};
use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Markdown rendered with everything a transcript could use to run or load something defused.
pub(crate) fn render(text: &str) -> Markup {
    let text = visible_controls(text);
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(&text, options).map(|event| match event {
        // `<script>`, `<img onerror=…>`: shown as the text they are.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
        }
        // An image would load from anywhere the text says: it becomes a link to it instead.
        Event::Start(Tag::Image { dest_url, title, id, .. }) => {
            Event::Start(Tag::Link { link_type: LinkType::Inline, dest_url: safe_url(dest_url), title, id })
        }
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    pulldown_cmark::html::push_html(&mut out, events);
    // pulldown-cmark escapes every text and attribute it writes; raw HTML was turned into text.
    html! { div.md { (PreEscaped(out)) } }
}

/// Text shown as written, in a block that keeps its lines.
pub(crate) fn plain(text: &str) -> Markup {
    html! { pre.plain { (visible_controls(text)) } }
}

/// Links keep only web, mail and same-page addresses; `javascript:`, `data:` and the rest go.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim_start().to_ascii_lowercase();
    let scheme_end = lower.find([':', '/', '?', '#']);
    let has_scheme = scheme_end.is_some_and(|end| lower.as_bytes()[end] == b':');
    if !has_scheme || ["http:", "https:", "mailto:"].iter().any(|ok| lower.starts_with(ok)) {
        url
    } else {
        CowStr::Borrowed("")
    }
}

/// Terminal escapes and other control characters as visible symbols (`␛[31m`), so colour codes
/// in tool output read as what they are; tabs and line breaks stay. Format characters (a bidi
/// override) are written out as `⟨U+202E⟩`, before Markdown reads the text.
pub(crate) fn visible_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let is_hidden = |c: char| c.is_control() && !matches!(c, '\n' | '\t' | '\r');
    let text = annal::text::visible_format(text);
    if !text.contains(is_hidden) {
        return text;
    }
    text.chars()
        .map(|c| match c {
            '\u{1b}' => '\u{241b}',
            c if is_hidden(c) && (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            c if is_hidden(c) => '\u{fffd}',
            c => c,
        })
        .collect::<String>()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_in_a_transcript_becomes_markup_that_runs() {
        // A line that opens with a tag is an HTML block: all of it becomes text.
        let block =
            render("<script>alert(1)</script> <img src=x onerror=\"alert(2)\"> \u{1b}[31mred").into_string();
        assert!(!block.contains("<script") && !block.contains("<img"), "{block}");
        assert!(block.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{block}");
        assert!(block.contains("\u{241b}[31mred") && !block.contains('\u{1b}'), "{block}");
        // Inline HTML and links in prose.
        let prose = render(
            "see <img src=x onerror=alert(2)> [go](javascript:alert(3)) [data](DATA:text/html,x) \
             ![x](https://example.com/x.png) [ok](https://example.com) [here](#top) [rel](docs/a.md)",
        )
        .into_string();
        assert!(!prose.contains("<img"), "{prose}");
        assert!(prose.contains("&lt;img src=x onerror=alert(2)&gt;"), "{prose}");
        assert!(!prose.to_ascii_lowercase().contains("javascript:"), "{prose}");
        assert!(!prose.to_ascii_lowercase().contains("data:"), "{prose}");
        assert!(prose.contains("<a href=\"\">go</a>"), "{prose}");
        assert!(prose.contains("<a href=\"https://example.com/x.png\">x</a>"), "{prose}");
        assert!(prose.contains("<a href=\"https://example.com\">ok</a>"), "{prose}");
        assert!(
            prose.contains("<a href=\"#top\">here</a>") && prose.contains("<a href=\"docs/a.md\">rel</a>"),
            "{prose}"
        );
    }

    #[test]
    fn multi_byte_text_survives() {
        let text = "日本語のテキスト\u{3000}と絵文字 🦀 e\u{301} — fine";
        assert!(render(text).into_string().contains(text));
        assert!(plain(text).into_string().contains(text));
    }

    #[test]
    fn format_characters_are_shown_before_markdown_reads_them() {
        let html = render("see invoice\u{202e}gpj.exe and `a\u{2066}b` [x\u{200b}](https://example.com)")
            .into_string();
        assert!(html.contains("invoice⟨U+202E⟩gpj.exe") && html.contains("a⟨U+2066⟩b"), "{html}");
        assert!(!html.chars().any(annal::text::is_format_char), "{html}");
        assert!(plain("\u{1b}[1m\u{202d}x").into_string().contains("\u{241b}[1m⟨U+202D⟩x"));
    }

    /// Markdown is a tree: quotes, lists, emphasis and links nested as deep as a transcript
    /// cares to go render on a small stack (pulldown-cmark keeps its own, on the heap).
    #[test]
    fn markdown_nested_a_hundred_thousand_deep_renders_on_a_small_stack() {
        let deep = [
            ">".repeat(100_000) + " quoted",
            "[".repeat(100_000) + "a" + &"](b)".repeat(100_000),
            "*".repeat(100_000) + "a" + &"*".repeat(100_000),
            "> - ".repeat(50_000) + "a",
            (0..1_000).map(|i| format!("{}- item\n", "  ".repeat(i))).collect(),
            "![".repeat(50_000) + "a" + &"](b)".repeat(50_000),
        ];
        let rendered = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || deep.iter().map(|text| render(text).into_string().len()).collect::<Vec<_>>())
            .map(|thread| thread.join());
        match rendered {
            Ok(Ok(lengths)) => assert!(lengths.iter().all(|&n| n > 0), "{lengths:?}"),
            _ => panic!("rendering failed"),
        }
    }
}
