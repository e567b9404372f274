//! docs/ARCHITECTURE.md's code map checked against the tree: every path it names exists, every
//! source file is named, the facade's name count is the one `annal/src/lib.rs` exports, and no
//! file cites a design document the repository does not hold.
//!
//! The map's convention (stated at the top of its "Code map" section): paths are written in
//! backticks, relative to the repository root; the first column of each table in that section
//! names what the row owns, one or more paths; a path ending in `/` is a folder and covers every
//! file under it. Files that must be named: every `.rs` under a workspace member's `src/`, every
//! file under a member's `tests/` and `examples/`, and every `.rs` under `fuzz/` (a workspace of
//! its own). A new file fails this test until the map says what it owns. Anywhere else in the
//! document, a backticked path that starts at a top-level folder of the workspace must exist.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const MAP: &str = "docs/ARCHITECTURE.md";
const MAP_SECTION: &str = "## Code map";

/// Folders no walk enters: build output, caches and tools' own state.
fn skipped(name: &str) -> bool {
    name == "target" || name == "__pycache__" || name == "node_modules" || name.starts_with('.')
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the annal crate sits in the workspace").to_owned()
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every file under `folder` (none if it does not exist), as paths relative to the root with `/`.
fn files_under(root: &Path, folder: &str, out: &mut Vec<String>) {
    let path = root.join(folder);
    if !path.is_dir() {
        return;
    }
    let entries = fs::read_dir(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("cannot read an entry of {}: {e}", path.display()));
        let name = entry.file_name().to_string_lossy().into_owned();
        if skipped(&name) || name.ends_with(".pyc") {
            continue;
        }
        let relative = format!("{folder}/{name}");
        if entry.path().is_dir() {
            files_under(root, &relative, out);
        } else {
            out.push(relative);
        }
    }
}

/// The workspace members, as the root manifest lists them.
fn members(root: &Path) -> Vec<String> {
    let manifest = read(&root.join("Cargo.toml"));
    let start = manifest.find("members").expect("the root manifest lists its members");
    let list = &manifest[start..];
    let open = list.find('[').expect("members = [");
    let close = list.find(']').expect("members = [...]");
    let members: Vec<String> =
        list[open + 1..close].split('"').skip(1).step_by(2).map(str::to_owned).collect();
    assert!(!members.is_empty(), "no workspace members found in Cargo.toml");
    members
}

/// The files the map must name.
fn source_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for member in members(root) {
        let mut sources = Vec::new();
        files_under(root, &format!("{member}/src"), &mut sources);
        files.extend(sources.into_iter().filter(|f| f.ends_with(".rs")));
        files_under(root, &format!("{member}/tests"), &mut files);
        files_under(root, &format!("{member}/examples"), &mut files);
    }
    let mut fuzz = Vec::new();
    files_under(root, "fuzz", &mut fuzz);
    files.extend(fuzz.into_iter().filter(|f| f.ends_with(".rs")));
    files.sort();
    files.dedup();
    files
}

/// The text between backticks.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// The document without its fenced code blocks, whose backticks are not Markdown's.
fn without_code_blocks(doc: &str) -> String {
    let mut fenced = false;
    let mut kept = String::new();
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The code map section of the document: from its heading to the next heading of its level.
fn map_section(doc: &str) -> &str {
    let start =
        doc.find(&format!("\n{MAP_SECTION}\n")).unwrap_or_else(|| panic!("{MAP} has no \"{MAP_SECTION}\""));
    let body = &doc[start + 1 + MAP_SECTION.len()..];
    let end = body.find("\n## ").unwrap_or(body.len());
    &body[..end]
}

/// The paths the first column of the section's tables names.
fn named_paths(section: &str) -> Vec<String> {
    let mut named = Vec::new();
    for line in section.lines() {
        let Some(row) = line.trim().strip_prefix('|') else { continue };
        let first = row.split('|').next().unwrap_or_default();
        named.extend(backticked(first).map(str::to_owned));
    }
    named
}

/// Whether a backticked text outside the tables' first column is a root-relative path this
/// test should check: a plain path whose first component is a top-level folder of the
/// workspace (so `storage/` or `db/sqlite.rs`, said of a folder the row already names, are not).
fn is_checked_path(text: &str, top: &BTreeSet<String>) -> bool {
    let plain = text.chars().all(|c| c.is_ascii_alphanumeric() || "_-./".contains(c));
    let first = text.split('/').next().unwrap_or_default();
    plain && text.contains('/') && top.contains(first)
}

fn top_folders(root: &Path) -> BTreeSet<String> {
    let mut top: BTreeSet<String> =
        members(root).iter().map(|m| m.split('/').next().unwrap_or_default().to_owned()).collect();
    top.extend(["fuzz".to_owned(), "docs".to_owned()]);
    top
}

fn stale(root: &Path, path: &str) -> Option<String> {
    let full = root.join(path);
    if path.ends_with('/') && !full.is_dir() {
        Some(format!("{path}: no such folder"))
    } else if !path.ends_with('/') && !full.is_file() {
        Some(format!("{path}: no such file"))
    } else {
        None
    }
}

#[test]
fn every_path_the_map_names_exists() {
    let root = root();
    let doc = read(&root.join(MAP));
    let section = map_section(&doc);
    let named = named_paths(section);
    assert!(
        named.len() > 20,
        "{MAP}'s code map names only {} paths; is its table layout still parsed?",
        named.len()
    );
    let mut problems: BTreeSet<String> = BTreeSet::new();
    for path in &named {
        if path.starts_with('/') || path.contains("..") || path.contains(' ') {
            problems.insert(format!("{path}: not a path relative to the repository root"));
        } else if let Some(problem) = stale(&root, path) {
            problems.insert(problem);
        }
    }
    // Elsewhere in the document a path may name a file or a folder, with or without its `/`.
    let top = top_folders(&root);
    let prose = without_code_blocks(&doc);
    for text in backticked(&prose).filter(|t| is_checked_path(t, &top)) {
        if !root.join(text).exists() {
            problems.insert(format!("{text}: no such file or folder"));
        }
    }
    assert!(
        problems.is_empty(),
        "{MAP} names paths that do not exist (fix the map to the tree):\n  {}",
        problems.into_iter().collect::<Vec<_>>().join("\n  ")
    );
}

#[test]
fn every_source_file_is_in_the_map() {
    let root = root();
    let doc = read(&root.join(MAP));
    let named = named_paths(map_section(&doc));
    let files = source_files(&root);
    assert!(files.len() > 100, "found only {} source files under {}", files.len(), root.display());
    let missing: Vec<&String> = files
        .iter()
        .filter(|file| {
            !named
                .iter()
                .any(|path| path == *file || (path.ends_with('/') && file.starts_with(path.as_str())))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "{MAP}'s code map does not name these files (add a row for each, or a folder row that covers it):\n  {}",
        missing.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n  ")
    );
}

/// The names a `use` tree brings in: the last segment of each leaf, or its alias.
fn use_leaves(tree: &str, parent: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let close = tree.rfind('}').unwrap_or_else(|| panic!("unbalanced braces in `pub use {tree}`"));
        let prefix = tree[..open].trim_end_matches("::");
        let last = prefix.rsplit("::").next().unwrap_or(prefix);
        let inner = &tree[open + 1..close];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_leaves(&inner[start..i], last, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        use_leaves(&inner[start..], last, out);
        return;
    }
    assert!(!tree.ends_with('*'), "`pub use {tree}`: a glob re-export cannot be counted; name each item");
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias.trim(),
        None => tree.rsplit("::").next().unwrap_or(tree),
    };
    out.push(if name == "self" { parent.to_owned() } else { name.to_owned() });
}

/// The public names at the top level of a crate root: every `pub use` leaf and every `pub` item.
fn top_level_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        let Some(item) = line.strip_prefix("pub ") else { continue };
        if let Some(tree) = item.strip_prefix("use ") {
            let mut text = tree.to_owned();
            while !text.contains(';') {
                let next = lines.next().expect("a `pub use` ends with `;`");
                text.push(' ');
                text.push_str(next.split("//").next().unwrap_or_default());
            }
            let tree = text.split(';').next().unwrap_or_default();
            use_leaves(tree, "", &mut names);
        } else {
            // `pub mod error;`, `pub fn f(`, `pub const fn f(`, `pub struct S {`: the word after
            // the item's keyword, past any qualifier that is itself a keyword (`const fn`).
            let words: Vec<&str> = item.split_whitespace().collect();
            let keywords = ["mod", "fn", "struct", "enum", "union", "trait", "type", "const", "static"];
            let at = words
                .windows(2)
                .position(|pair| keywords.contains(&pair[0]) && !keywords.contains(&pair[1]))
                .unwrap_or_else(|| panic!("cannot read the name of `pub {item}`"));
            let name: String =
                words[at + 1].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn the_facade_count_is_what_lib_rs_exports() {
    let root = root();
    let doc = read(&root.join(MAP));
    let names = top_level_names(&read(&root.join("annal/src/lib.rs")));
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "annal/src/lib.rs exports a name twice: {names:?}");
    let marker = "public names at the top level";
    let at = doc.find(marker).unwrap_or_else(|| {
        panic!(
            "{MAP} must state the facade's size as \"<N> {marker}\" (annal/src/lib.rs has {})",
            names.len()
        )
    });
    let stated: String = doc[..at].trim_end().chars().rev().take_while(char::is_ascii_digit).collect();
    let stated: usize = stated.chars().rev().collect::<String>().parse().unwrap_or_else(|_| {
        panic!("{MAP}: \"{marker}\" must follow its number (annal/src/lib.rs has {})", names.len())
    });
    assert_eq!(
        stated,
        names.len(),
        "{MAP} says the facade has {stated} {marker}; annal/src/lib.rs has {}: {}",
        names.len(),
        names.join(", ")
    );
}

#[test]
fn no_file_cites_a_design_document_outside_the_repository() {
    // Spelled in two pieces so this file does not match itself.
    let needles = [concat!("DES", "IGN §"), concat!("DES", "IGN.md")];
    let root = root();
    let mut files = Vec::new();
    for entry in fs::read_dir(&root).expect("the workspace root is readable") {
        let name = entry.expect("a root entry").file_name().to_string_lossy().into_owned();
        if skipped(&name) {
            continue;
        }
        if root.join(&name).is_dir() {
            files_under(&root, &name, &mut files);
        } else {
            files.push(name);
        }
    }
    let checked: Vec<&String> = files
        .iter()
        .filter(|f| {
            f.starts_with("docs/")
                || [".rs", ".md", ".py", ".pyi", ".toml"].iter().any(|ext| f.ends_with(ext))
        })
        .collect();
    assert!(checked.len() > 100, "found only {} files to check", checked.len());
    let mut found = Vec::new();
    for file in checked {
        let Ok(text) = fs::read_to_string(root.join(file)) else { continue };
        for (number, line) in text.lines().enumerate() {
            if needles.iter().any(|needle| line.contains(needle)) {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "these lines cite a design document the repository does not hold; point to docs/design.md \
         or docs/projection.md instead:\n  {}",
        found.join("\n  ")
    );
}
