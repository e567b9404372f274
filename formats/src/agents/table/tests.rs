//! The registry checked against what is written from it by hand: the documentation's tables,
//! the fuzz targets and their seeds, and detection (every format has a signature).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::*;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("formats sits in the workspace").to_owned()
}

fn read(path: &str) -> String {
    let path = root().join(path);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The table rows of `text` whose line `first_cell` accepts, in order.
fn rows_starting(text: &str, first_cell: impl Fn(&str) -> bool) -> Vec<&str> {
    text.lines().filter(|line| line.starts_with("| ") && first_cell(line)).collect()
}

/// Fails with the expected lines, ready to paste, when `found` is not `expected`.
fn assert_lines(file: &str, found: &[&str], expected: &[String]) {
    let found: Vec<String> = found.iter().map(|line| (*line).to_owned()).collect();
    assert!(
        found == expected,
        "{file} differs from the agent registry (formats/src/agents/<agent>/agent.rs); its rows should read:\n{}",
        expected.join("\n")
    );
}

#[test]
fn the_readmes_sync_table_is_the_registrys() {
    let readme = read("README.md");
    let expected: Vec<String> = Agent::ALL
        .iter()
        .map(|agent| format!("| `{}` {} | {} |", agent.name(), agent.title(), agent.row().docs.readme))
        .collect();
    let found = rows_starting(&readme, |line| {
        Agent::ALL.iter().any(|agent| line.starts_with(&format!("| `{}` ", agent.name())))
    });
    assert_lines("README.md", &found, &expected);
}

#[test]
fn the_format_lists_are_the_registrys() {
    let names: Vec<&str> =
        TranscriptFormat::in_agent_order().into_iter().map(TranscriptFormat::name).collect();
    let listed = format!("--format auto\\|{}]", names.join("\\|"));
    let readme = read("README.md");
    assert!(readme.contains(&listed), "README.md's `annal import` row should list {listed}");
    let errors = read("docs/errors.md");
    let hint = format!("--format {} reads a file as that format", names.join("\\|"));
    assert!(errors.contains(&hint), "docs/errors.md should quote the hint {hint}");
}

#[test]
fn the_import_docs_tables_are_the_registrys() {
    let docs = read("docs/import.md");
    let is_agent_row =
        |line: &str| Agent::ALL.iter().any(|agent| line.starts_with(&format!("| {} | ", agent.title())));
    let found = rows_starting(&docs, is_agent_row);
    let readable = Agent::ALL.iter().filter(|agent| agent.not_readable().is_none());
    let unreadable = Agent::ALL.iter().filter(|agent| agent.not_readable().is_some());
    let expected: Vec<String> = readable
        .chain(unreadable)
        .map(|agent| format!("| {} | {} |", agent.title(), agent.row().docs.import))
        .collect();
    assert_lines("docs/import.md", &found, &expected);
}

/// `[[bin]]` names in fuzz/Cargo.toml.
fn fuzz_targets() -> BTreeSet<String> {
    let manifest = read("fuzz/Cargo.toml");
    let names = manifest.lines().filter_map(|line| line.strip_prefix("name = \""));
    names.filter_map(|name| name.strip_suffix('"')).map(str::to_owned).collect()
}

#[test]
fn every_reader_has_its_fuzz_target_and_every_seed_its_agent() {
    let targets = fuzz_targets();
    let run = read("fuzz/run.sh");
    let run_all = run.lines().find(|line| line.starts_with("all=(")).expect("fuzz/run.sh lists its targets");
    let run_targets: BTreeSet<&str> =
        run_all.trim_start_matches("all=(").trim_end_matches(')').split_whitespace().collect();
    // annal's own export is a format of no agent.
    let mut of_agents: BTreeSet<String> = BTreeSet::from(["import_annal".to_owned()]);
    for agent in Agent::ALL {
        for target in agent.row().fuzz_targets {
            assert!(targets.contains(*target), "{agent}: no [[bin]] {target} in fuzz/Cargo.toml");
            assert!(run_targets.contains(target), "{agent}: fuzz/run.sh does not run {target}");
            of_agents.insert((*target).to_owned());
        }
        let seeds = root().join("formats/src/agents").join(agent.name()).join("seeds");
        for entry in fs::read_dir(&seeds).into_iter().flatten().flatten() {
            let target = entry.file_name().to_string_lossy().into_owned();
            assert!(
                agent.row().fuzz_targets.contains(&target.as_str()),
                "{}: seeds of no target of its own",
                seeds.display()
            );
        }
    }
    let importers: BTreeSet<String> = targets.into_iter().filter(|t| t.starts_with("import_")).collect();
    assert_eq!(importers, of_agents, "fuzz/Cargo.toml's import_ targets are the registry's");
}

#[test]
fn every_format_belongs_to_an_agent_and_has_a_signature() {
    for format in TranscriptFormat::ALL {
        let agent = Agent::ALL.iter().find(|agent| agent.formats().contains(&format));
        assert!(agent.is_some() || format == TranscriptFormat::Annal, "{format}: no agent writes it");
        assert!(DETECTION.iter().any(|(detected, _)| *detected == format), "{format}: no signature");
    }
    assert_eq!(TranscriptFormat::in_agent_order().len(), TranscriptFormat::ALL.len());
}

#[test]
fn names_entry_prefixes_and_wrappers() {
    for agent in Agent::ALL {
        assert_eq!(Agent::parse(agent.name()), Some(agent));
        if let Some(prefix) = agent.row().entry_prefix {
            assert_eq!(Agent::of_entry_id(&format!("{prefix}:s:7")), Some(agent));
        }
    }
    assert_eq!(Agent::of_entry_id("5c03-uuid"), None);
    let codex = "<environment_context>\n  <cwd>/srv/プロジェクト</cwd>\n</environment_context>\nfix the 🐛";
    assert_eq!(Agent::Codex.user_words(codex).trim(), "fix the 🐛");
    let claude = "<command-message>init is running…</command-message>\n<command-name>/init</command-name>\n\
                  <command-args>résumé du dépôt</command-args>";
    assert_eq!(Agent::Claude.user_words(claude).trim(), "/init\nrésumé du dépôt");
}

#[test]
fn each_home_is_one_agents_and_follows_its_override() {
    let env = Environment::with_home("/home/ユーザー 名");
    let homes: Vec<PathBuf> = Agent::ALL.iter().flat_map(|agent| agent.homes(&env)).collect();
    let distinct: BTreeSet<&PathBuf> = homes.iter().collect();
    assert_eq!(distinct.len(), homes.len(), "two agents share a home: {homes:?}");
    for agent in Agent::ALL.into_iter().filter(|agent| agent.per_project()) {
        assert_eq!(agent.homes(&env), Vec::<PathBuf>::new(), "{agent}");
    }
    let moved = env.clone().var("CLAUDE_CONFIG_DIR", "/srv/クロード🙂");
    assert_eq!(Agent::Claude.homes(&moved), [PathBuf::from("/srv/クロード🙂")]);
    // Pi expands a leading `~` in its variable, for its home as for its sessions.
    let pi = env.var("PI_CODING_AGENT_DIR", "~/pi e\u{301}");
    assert_eq!(Agent::Pi.homes(&pi), [PathBuf::from("/home/ユーザー 名/pi e\u{301}")]);
    assert_eq!(Agent::Pi.locations(&pi, &[]), [PathBuf::from("/home/ユーザー 名/pi e\u{301}/sessions")]);
}
