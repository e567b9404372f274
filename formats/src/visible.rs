//! Characters that change how text reads without showing themselves, made visible: bidi
//! overrides and isolates, zero-width spaces and joiners, word joiners, the byte order mark,
//! tag characters: every character of Unicode's general category Cf ("format").
//!
//! `invoice\u{202e}gpj.exe` displays as "invoiceexe.jpg", and text after the override reads
//! backwards to the end of its paragraph; a zero-width space makes two names that look the same
//! differ; tag characters carry text no one sees (instructions smuggled to a model). A transcript
//! is shown as what it holds: each such character as `⟨U+202E⟩`. Only the joiners that make an
//! emoji sequence, a joined script or a subdivision flag what it is stay as they are, since there
//! they are how the text is written and hide nothing.

use std::borrow::Cow;

/// Category Cf of Unicode 15.1, as inclusive ranges.
const FORMAT: [(u32, u32); 21] = [
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

const ZWNJ: char = '\u{200C}';
const ZWJ: char = '\u{200D}';
/// The black flag a subdivision flag (🏴 England, Scotland, Wales) starts with.
const BLACK_FLAG: char = '\u{1F3F4}';
const CANCEL_TAG: char = '\u{E007F}';

/// Whether `c` is of category Cf.
pub fn is_format_char(c: char) -> bool {
    let c = c as u32;
    FORMAT.iter().any(|&(first, last)| (first..=last).contains(&c))
}

/// `text` with every format character shown as `⟨U+XXXX⟩`, but for the joiners inside an
/// emoji sequence or between letters of a script that joins, and the tags of a subdivision
/// flag. Borrowed when there is nothing to show.
pub fn visible_format(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_format_char) {
        return Cow::Borrowed(text);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if let Some(len) = flag_tags(&chars, at) {
            out.extend(&chars[at..at + len]);
            at += len;
            continue;
        }
        let before = at.checked_sub(1).map(|i| chars[i]);
        let after = chars.get(at + 1).copied();
        if !is_format_char(c) || joins(c, before, after) {
            out.push(c);
        } else {
            out.push_str(&format!("⟨U+{:04X}⟩", c as u32));
        }
        at += 1;
    }
    Cow::Owned(out)
}

/// Whether a joiner between `before` and `after` is part of how the text is written: emoji
/// sequences and the scripts that join (Persian, Devanagari) write it between characters
/// outside ASCII; between ASCII letters it only hides a difference.
fn joins(c: char, before: Option<char>, after: Option<char>) -> bool {
    let (Some(before), Some(after)) = (before, after) else { return false };
    let written = |c: char| !c.is_ascii() && !c.is_whitespace() && !c.is_control() && !is_format_char(c);
    matches!(c, ZWJ | ZWNJ) && written(before) && written(after)
}

/// The length of the tags of a subdivision flag starting at `at` (just after its black flag):
/// lower-case letters and digits, then the cancel tag.
fn flag_tags(chars: &[char], at: usize) -> Option<usize> {
    if at == 0 || chars[at - 1] != BLACK_FLAG {
        return None;
    }
    let tag = |c: char| matches!(c as u32, 0xE0030..=0xE0039 | 0xE0061..=0xE007A);
    let letters = chars[at..].iter().take_while(|&&c| tag(c)).count();
    ((1..=7).contains(&letters) && chars.get(at + letters) == Some(&CANCEL_TAG)).then_some(letters + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_isolates_and_zero_width_characters_are_shown() {
        assert_eq!(visible_format("invoice\u{202e}gpj.exe"), "invoice⟨U+202E⟩gpj.exe");
        assert_eq!(
            visible_format("\u{2066}a\u{2069} \u{202a}\u{202b}\u{202c}\u{202d} \u{2067}\u{2068}"),
            "⟨U+2066⟩a⟨U+2069⟩ ⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩ ⟨U+2067⟩⟨U+2068⟩"
        );
        assert_eq!(visible_format("pay\u{200b}pal\u{feff}"), "pay⟨U+200B⟩pal⟨U+FEFF⟩");
        assert_eq!(visible_format("a\u{200e}b\u{200f}c\u{61c}d"), "a⟨U+200E⟩b⟨U+200F⟩c⟨U+061C⟩d");
        assert_eq!(visible_format("\u{2060}\u{2061}\u{2062}\u{2063}\u{2064}").matches("⟨U+206").count(), 5);
        // Tag characters spelling "hi" after ordinary text: smuggled, shown.
        assert_eq!(visible_format("ok\u{e0068}\u{e0069}"), "ok⟨U+E0068⟩⟨U+E0069⟩");
        // A joiner between ASCII letters hides a difference.
        assert_eq!(visible_format("ad\u{200d}min"), "ad⟨U+200D⟩min");
    }

    #[test]
    fn text_that_joins_as_it_is_written_is_kept() {
        for kept in [
            "plain ASCII, 日本語\u{3000}テキスト, مرحبا, e\u{301}",
            "👨\u{200d}👩\u{200d}👧\u{200d}👦 🏳\u{fe0f}\u{200d}🌈",
            "می\u{200c}خواهم",
            "क्\u{200d}ष",
            "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}",
        ] {
            assert_eq!(visible_format(kept), kept);
        }
    }

    #[test]
    fn every_category_cf_character_of_the_table_is_shown_somewhere() {
        for &(first, last) in &FORMAT {
            for code in first..=last {
                let c = char::from_u32(code).unwrap_or_default();
                let shown = visible_format(&format!("x{c}x")).into_owned();
                assert_eq!(shown, format!("x⟨U+{code:04X}⟩x"));
            }
        }
    }
}
