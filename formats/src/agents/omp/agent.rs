//! Oh My Pi (`omp`, a fork of Pi): its row in the agent registry. It writes Pi's session format
//! under a folder of its own, so Pi's reader reads it; only where it keeps them differs.
//!
//! Locations follow `packages/utils/src/dirs.ts` of `can1357/oh-my-pi` at `7777cfcb`: the config
//! root is `~/.omp` (`PI_CONFIG_DIR` names another folder in the home), sessions are in its
//! `agent/sessions/`, a named profile's in `profiles/<name>/agent/sessions/`, and after
//! `omp config migrate` in `$XDG_DATA_HOME/omp/sessions/`. `PI_CODING_AGENT_DIR` moves omp's
//! agent folder too, but Pi reads that variable first: Pi's row looks there, and looking twice
//! would report each session twice.

use std::path::{Path, PathBuf};

use crate::agents::environment::Environment;
use crate::agents::row::{Docs, Row};
use crate::agents::TranscriptFormat;

/// Oh My Pi's row.
pub(super) const ROW: Row = Row {
    name: "omp",
    title: "Oh My Pi",
    formats: &[TranscriptFormat::Pi],
    overrides: &["PI_CONFIG_DIR"],
    locations,
    home,
    per_project: false,
    session_file: Some(session_file),
    not_readable: None,
    // Pi's reader names the records it reads `pi:…`.
    entry_prefix: None,
    wrappers: &[],
    fuzz_targets: &["import_pi"],
    docs: Docs {
        readme: r#"`~/.omp/agent/sessions/--<cwd>--/*.jsonl` and each profile's, in Pi's format (`PI_CONFIG_DIR`, `XDG_DATA_HOME`)"#,
        import: r#"Pi's JSONL, with entries of its own (`session_init`, `ttsr_injection`, `mode_change`) and images kept in its blob store (`blob:sha256:<hash>`, left in `meta`) | `~/.omp/agent/sessions/--<cwd>--/<time>_<id>.jsonl`, `~/.omp/profiles/<profile>/agent/sessions/` (`PI_CONFIG_DIR` for `.omp`; `$XDG_DATA_HOME/omp/sessions/` once migrated) | `can1357/oh-my-pi` `packages/utils/src/dirs.ts` at `7777cfcb` and `packages/coding-agent/docs/session.md`"#,
    },
};

/// The folder it makes for itself at its first run (settings, logs), whether or not it has kept
/// a session yet.
fn home(env: &Environment) -> Option<PathBuf> {
    let home = env.home.as_ref()?;
    // omp joins the variable to the home folder as Node's `path.join` does, a leading `/` too.
    Some(match env.dir_var("PI_CONFIG_DIR") {
        Some(dir) => home.join(dir.strip_prefix("/").unwrap_or(&dir)),
        None => home.join(".omp"),
    })
}

fn locations(env: &Environment, _projects: &[PathBuf]) -> Vec<PathBuf> {
    let Some(root) = home(env) else { return Vec::new() };
    let mut places = vec![root.join("agent/sessions"), root.join("profiles")];
    places.extend(env.dir_var("XDG_DATA_HOME").map(|data| data.join("omp/sessions")));
    places
}

/// `sessions/--<cwd>--/<time>_<id>.jsonl`, as Pi's.
fn session_file(_path: &Path, name: &str, parent: &str) -> Option<TranscriptFormat> {
    let session = parent.starts_with("--") && name.ends_with(".jsonl");
    session.then_some(TranscriptFormat::Pi)
}

#[cfg(test)]
mod tests {
    use crate::agents::{detect_format, parse_transcript, Agent, Environment, TranscriptFormat};

    #[test]
    fn its_folders_default_and_moved() {
        let env = Environment::with_home("/home/ユーザー");
        let places = Agent::OhMyPi.locations(&env, &[]);
        assert_eq!(
            places,
            ["/home/ユーザー/.omp/agent/sessions", "/home/ユーザー/.omp/profiles"]
                .map(std::path::PathBuf::from)
        );
        let moved = env.clone().var("PI_CONFIG_DIR", "/.omp-work").var("XDG_DATA_HOME", "/data");
        assert_eq!(
            Agent::OhMyPi.locations(&moved, &[]),
            [
                "/home/ユーザー/.omp-work/agent/sessions",
                "/home/ユーザー/.omp-work/profiles",
                "/data/omp/sessions"
            ]
            .map(std::path::PathBuf::from)
        );
        // Pi's variable stays Pi's.
        let pi = env.var("PI_CODING_AGENT_DIR", "/pi");
        assert_eq!(
            Agent::OhMyPi.locations(&pi, &[])[0],
            std::path::Path::new("/home/ユーザー/.omp/agent/sessions")
        );
    }

    #[test]
    fn its_sessions_are_pi_transcripts() {
        let session =
            std::path::Path::new("/h/.omp/profiles/work/agent/sessions/--src-app--/2026_1f9d.jsonl");
        assert_eq!(Agent::OhMyPi.transcript_format(session), Some(TranscriptFormat::Pi));
        let breadcrumb = std::path::Path::new("/h/.omp/agent/terminal-sessions/pts-3");
        assert_eq!(Agent::OhMyPi.transcript_format(breadcrumb), None);
    }

    #[test]
    fn its_seed_reads_whole_as_pi() {
        let bytes = include_bytes!("seeds/import_pi/omp-session.jsonl");
        assert_eq!(detect_format(bytes), Some(TranscriptFormat::Pi));
        let parsed = parse_transcript(bytes, TranscriptFormat::Pi, "f");
        assert_eq!((parsed.unrecognised, parsed.skipped.len()), (0, 0));
        assert_eq!(parsed.sessions[0].name, "1f9d2a6b9c0d1234");
        assert_eq!(parsed.record_count(), 7);
    }
}
