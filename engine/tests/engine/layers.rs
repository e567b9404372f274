//! The engine's layers point one way and its modules form no circle, checked on the source:
//! the record model, then the journal, then projections, then compaction. The compiler
//! enforces the crate boundaries (the transcript formats are a crate above this one); this
//! test enforces the order inside the crate, where the compiler cannot.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules of `engine/src` by layer, lowest layer first. An entry names a module and every
/// module under it; the longest entry that matches a module decides its layer, so a group's
/// folder (`model/`, `write/`) can hold modules of a lower layer than the rest of it. A module
/// may use its own layer and those before it, never one after it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "record model",
        &[
            "model::record",
            "model::codec",
            "model::hash",
            "model::view",
            "model::digest",
            "model::target",
            "model::tokens",
            "model::time",
            "write::claim",
            "kind",
        ],
    ),
    ("journal", &["model", "write", "log", "store", "read", "error"]),
    ("projections", &["project"]),
    ("compaction", &["checkpoint"]),
];

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(folder: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(folder).unwrap_or_else(|e| panic!("cannot read {}: {e}", folder.display()));
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `project/view.rs` → `project::view`; `project/mod.rs` → `project`.
fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).expect("under the source root").with_extension("");
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file without its comments and its unit tests (tests may reach anywhere).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) if text[at..].contains("mod tests") => &text[..at],
        _ => text,
    };
    text.lines().filter(|line| !line.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The names after `prefix`: `crate::a::b` gives `a::b`, `super::{x, y}` gives `x` and `y`.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(inner.split(',').map(|name| vec![name.trim().to_owned()]));
        } else {
            let path: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(path.split("::").filter(|p| !p.is_empty()).map(str::to_owned).collect());
        }
    }
    out
}

/// The short names the crate root gives grouped modules (`use crate::model::{codec, hash};` in
/// `lib.rs`), so that `crate::codec::x` is read as `crate::model::codec::x`.
fn root_aliases(lib: &str) -> BTreeMap<String, Vec<String>> {
    let mut aliases = BTreeMap::new();
    for line in lib.lines() {
        let Some(tree) = line.trim().strip_prefix("use crate::") else { continue };
        let tree = tree.trim_end_matches(';');
        let (group, names) = match tree.split_once("::{") {
            Some((group, names)) => (group, names.trim_end_matches('}')),
            None => tree.rsplit_once("::").unwrap_or(("", tree)),
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let mut path: Vec<String> = group.split("::").map(str::to_owned).collect();
            path.push(name.to_owned());
            aliases.insert(name.to_owned(), path);
        }
    }
    aliases
}

/// The module a path names: the longest prefix of it that is a module of the crate.
fn resolve(modules: &BTreeSet<String>, base: &[String], path: &[String]) -> Option<String> {
    let mut best = None;
    let mut current: Vec<String> = base.to_vec();
    if !base.is_empty() && modules.contains(&current.join("::")) {
        best = Some(current.join("::"));
    }
    for part in path {
        current.push(part.clone());
        let name = current.join("::");
        if modules.contains(&name) {
            best = Some(name);
        } else {
            break;
        }
    }
    best
}

/// Every module and the modules its code uses.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = source_root();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&root, f)).collect();
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("engine/src/lib.rs is readable");
    let aliases = root_aliases(&lib);
    for (name, path) in &aliases {
        assert!(modules.contains(&path.join("::")), "lib.rs names `{name}` for {path:?}, which is no module");
    }
    let mut edges = BTreeMap::new();
    for file in &files {
        let module = module_of(&root, file);
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let code = code_of(&text);
        let parent: Vec<String> = module.split("::").map(str::to_owned).collect::<Vec<_>>();
        let parent = &parent[..parent.len().saturating_sub(1)];
        let mut uses = BTreeSet::new();
        for mut path in paths_after(&code, "crate::") {
            if let Some(full) = path.first().and_then(|first| aliases.get(first)) {
                path.splice(..1, full.iter().cloned());
            }
            uses.extend(resolve(&modules, &[], &path));
        }
        for path in paths_after(&code, "super::") {
            uses.extend(resolve(&modules, parent, &path));
        }
        uses.remove(&module);
        edges.insert(module, uses);
    }
    edges
}

fn layer_of(module: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None; // (length of the entry, its layer)
    for (layer, (_, entries)) in LAYERS.iter().enumerate() {
        for entry in *entries {
            let under =
                module.strip_prefix(entry).is_some_and(|rest| rest.is_empty() || rest.starts_with("::"));
            if under && best.is_none_or(|(length, _)| entry.len() > length) {
                best = Some((entry.len(), layer));
            }
        }
    }
    best.map(|(_, layer)| layer)
}

#[test]
fn every_module_uses_only_its_own_layer_and_those_below() {
    let graph = graph();
    assert!(graph.len() > 40, "found only {} modules under {}", graph.len(), source_root().display());
    let mut wrong = Vec::new();
    for (module, uses) in &graph {
        if module == "lib" {
            continue; // the crate's list of public names
        }
        let Some(layer) = layer_of(module) else {
            wrong.push(format!("{module} is in no layer: add it to LAYERS"));
            continue;
        };
        for used in uses {
            match layer_of(used) {
                Some(other) if other > layer => wrong.push(format!(
                    "{module} ({}) uses {used} ({}), a layer above it",
                    LAYERS[layer].0, LAYERS[other].0
                )),
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn no_modules_form_a_circle() {
    let graph = graph();
    let mut circles = Vec::new();
    for (module, uses) in &graph {
        for first in uses {
            // Is `module` reachable back from what it uses?
            let mut stack = vec![(first.clone(), vec![module.clone(), first.clone()])];
            let mut seen = BTreeSet::new();
            while let Some((at, path)) = stack.pop() {
                if at == *module {
                    circles.push(path.join(" -> "));
                    break;
                }
                if !seen.insert(at.clone()) {
                    continue;
                }
                for next in graph.get(&at).into_iter().flatten() {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(circles.is_empty(), "modules in a circle:\n{}", circles.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_and_an_upward_use() {
    // The checks above must be able to fail: a made-up crate with both faults.
    let modules: BTreeSet<String> = ["a", "b", "b::c"].iter().map(|s| (*s).to_owned()).collect();
    let code = code_of("use crate::b::c::Thing;\n// use crate::a;\nuse super::{x, y};\n#[cfg(test)]\nmod tests { use crate::a; }");
    let paths = paths_after(&code, "crate::");
    assert_eq!(paths, vec![vec!["b".to_owned(), "c".to_owned(), "Thing".to_owned()]]);
    assert_eq!(resolve(&modules, &[], &paths[0]).as_deref(), Some("b::c"));
    assert_eq!(paths_after(&code, "super::").len(), 2);
    assert_eq!(layer_of("project::view"), Some(2));
    assert_eq!(layer_of("write::apply"), Some(1));
    assert_eq!(layer_of("write::claim"), Some(0));
    assert_eq!(layer_of("model::codec"), Some(0));
    assert_eq!(layer_of("model::portable"), Some(1));
    assert_eq!(layer_of("modelling"), None);
    assert!(layer_of("nowhere").is_none());
    let aliases =
        root_aliases("use crate::model::{codec, hash};\nuse crate::read::verify;\npub use crate::x::Y;");
    assert_eq!(aliases["codec"], ["model", "codec"]);
    assert_eq!(aliases["verify"], ["read", "verify"]);
    assert!(!aliases.contains_key("Y"));
}
