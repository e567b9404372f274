//! Text as a person should see it: the characters that change how text reads without showing
//! themselves (bidi overrides and isolates, zero-width spaces, tag characters: Unicode's format
//! characters) made visible, as the Markdown export and `annal ui` show them; and secrets
//! masked, as redacted exports mask them (`[redacted:openai-key]`).
//!
//! ```
//! use annal::text::visible_format;
//! assert_eq!(visible_format("invoice\u{202e}gpj.exe"), "invoice⟨U+202E⟩gpj.exe");
//! ```

pub use annal_formats::{is_format_char, redact, visible_format};
