//! Output plumbing and formatting: the buffered stdout, broken-pipe detection, aligned tables,
//! human-readable sizes and counts, and cutting long text for display.

use std::io::{self, BufWriter, StdoutLock, Write};

/// Where every command writes: stdout, locked once and buffered.
pub(crate) type Out = BufWriter<StdoutLock<'static>>;

/// The locked, buffered stdout.
pub(crate) fn stdout() -> Out {
    BufWriter::with_capacity(64 << 10, io::stdout().lock())
}

/// Whether an error is a closed stdout (`annal show s | head -1`): not a failure.
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|io| io.kind() == io::ErrorKind::BrokenPipe)
}

/// Folds an error message onto one line: errors are one line on stderr.
pub(crate) fn one_line(message: &str) -> String {
    message.split(['\n', '\r']).map(str::trim).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Writes one JSON value and a newline.
pub(crate) fn write_json_line(out: &mut impl Write, value: &serde_json::Value) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

/// Writes JSON in the pretty form scripts and people both read.
pub(crate) fn write_json_pretty(out: &mut impl Write, value: &serde_json::Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    out.write_all(b"\n")
}

/// Writes a result's JSON (in the shape the library gives every caller) in the pretty form.
pub(crate) fn write_pretty(out: &mut impl Write, json: &annal::json::Json) -> io::Result<()> {
    writeln!(out, "{}", json.pretty())
}

/// Writes a result's JSON (in the shape the library gives every caller) as one line.
pub(crate) fn write_line(out: &mut impl Write, json: &annal::json::Json) -> io::Result<()> {
    writeln!(out, "{json}")
}

/// Which side of a column its cells align to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A table printed with aligned columns and a header row.
#[derive(Debug)]
pub(crate) struct Table {
    columns: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(columns: &[(&'static str, Align)]) -> Table {
        Table { columns: columns.to_vec(), rows: Vec::new() }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Writes the table, each line starting with `indent`.
    pub(crate) fn write(&self, out: &mut impl Write, indent: &str) -> io::Result<()> {
        let mut widths: Vec<usize> = self.columns.iter().map(|(name, _)| name.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let header: Vec<String> = self.columns.iter().map(|(name, _)| (*name).to_owned()).collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::from(indent);
            for (index, ((_, align), cell)) in self.columns.iter().zip(row).enumerate() {
                let width = widths[index];
                let last = index + 1 == self.columns.len();
                match align {
                    Align::Left if last => line.push_str(cell),
                    Align::Left => line.push_str(&format!("{cell:<width$}")),
                    Align::Right => line.push_str(&format!("{cell:>width$}")),
                }
                if !last {
                    line.push_str("  ");
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// A count with thousands separators: `12,345`.
/// A hash as 64 lowercase hex digits, as the portable format writes it.
pub(crate) fn hex(hash: &[u8; 32]) -> String {
    blake3::Hash::from_bytes(*hash).to_hex().to_string()
}

pub(crate) use annal_stdx::thousands as count;

/// A size in bytes, in the largest binary unit that keeps it at or above 1: `3.4 MiB`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `line` cut to at most `width` characters, ending in `…` when cut.
pub(crate) fn cut(line: &str, width: usize) -> String {
    match line.char_indices().nth(width.saturating_sub(1)) {
        Some((end, _)) if line[end..].chars().count() > 1 => format!("{}…", &line[..end]),
        _ => line.to_owned(),
    }
}

/// `1 line`, `3 lines`: a count and a noun, plural when needed.
pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{} {noun}s", count(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_sizes() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(5 << 20), "5.0 MiB");
        assert_eq!(plural(1, "line"), "1 line");
        assert_eq!(plural(2000, "line"), "2,000 lines");
    }

    #[test]
    fn cutting_keeps_short_lines() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut("héllo wörld", 6), "héllo…");
        assert_eq!(cut("", 4), "");
    }

    #[test]
    fn errors_fold_to_one_line() {
        assert_eq!(one_line("a\nb\r\n  c  "), "a b c");
    }

    #[test]
    fn table_aligns() {
        let mut table = Table::new(&[("NAME", Align::Left), ("N", Align::Right), ("NOTE", Align::Left)]);
        table.row(vec!["alpha".into(), "1".into(), String::new()]);
        table.row(vec!["b".into(), "100".into(), "x".into()]);
        let mut out = Vec::new();
        table.write(&mut out, "").unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text, "NAME     N  NOTE\nalpha    1\nb      100  x\n");
    }
}
