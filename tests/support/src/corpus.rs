//! The one walker over a folder of real transcripts (the corpus named by `ANNAL_CORPUS`): the
//! files `annal import` would read, in its order, and the corpus's folder per format.
//!
//! A missing corpus, a missing format folder or a folder without transcripts is an error that
//! names the folder, never an empty list: a test or benchmark over no input would pass or
//! measure nothing.

use std::io;
use std::path::{Path, PathBuf};

use annal_formats::TranscriptFormat;

/// The environment variable naming the corpus folder.
pub const CORPUS_VAR: &str = "ANNAL_CORPUS";

/// The corpus's folder of each format annal imports.
pub const FORMAT_FOLDERS: [(&str, TranscriptFormat); 3] = [
    ("claude-code-jsonl", TranscriptFormat::Claude),
    ("codex-rollout-jsonl", TranscriptFormat::Codex),
    ("opencode-export-json", TranscriptFormat::OpenCode),
];

/// The transcript files under a folder, in the stable order `annal import` walks them.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Every `.jsonl` and `.json` file, searched recursively (the files `annal import` reads).
    pub files: Vec<PathBuf>,
    /// Files with other extensions, which `annal import` never opens.
    pub other_files: u64,
}

impl Corpus {
    /// Finds the transcript files under `dir`: names sorted within each folder, depth first.
    ///
    /// # Errors
    /// If `dir` is missing, is not a folder, cannot be read, or holds no `.jsonl`/`.json` file.
    pub fn find(dir: &Path) -> io::Result<Corpus> {
        if !dir.is_dir() {
            return Err(not_found(format!(
                "the corpus folder {} does not exist or is not a folder",
                dir.display()
            )));
        }
        let mut corpus = Corpus { files: Vec::new(), other_files: 0 };
        walk(dir, &mut corpus).map_err(|err| {
            io::Error::new(err.kind(), format!("cannot read the corpus folder {}: {err}", dir.display()))
        })?;
        if corpus.files.is_empty() {
            return Err(not_found(format!(
                "no transcripts (.jsonl or .json files) in the corpus folder {}",
                dir.display()
            )));
        }
        Ok(corpus)
    }
}

fn walk(folder: &Path, corpus: &mut Corpus) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(folder)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, corpus)?;
        } else if kind.is_file() {
            if matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "json")) {
                corpus.files.push(path);
            } else {
                corpus.other_files += 1;
            }
        }
    }
    Ok(())
}

fn not_found(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, message)
}

/// The corpus folder named by `ANNAL_CORPUS`.
///
/// # Errors
/// If the variable is not set.
pub fn corpus_root() -> io::Result<PathBuf> {
    std::env::var_os(CORPUS_VAR)
        .map(PathBuf::from)
        .ok_or_else(|| not_found(format!("set {CORPUS_VAR} to the corpus folder")))
}

/// A transcript of the corpus whose format its folder names.
#[derive(Clone, Debug)]
pub struct FormatFile {
    /// `folder/file name`, as reports and expectations name it.
    pub name: String,
    /// Its path.
    pub path: PathBuf,
    /// The format of its folder.
    pub format: TranscriptFormat,
}

/// Every transcript in the format folders of the corpus at `root`, sorted by name.
///
/// # Errors
/// If a format folder is missing or holds no transcript, or a file name is not UTF-8.
pub fn format_files(root: &Path) -> io::Result<Vec<FormatFile>> {
    let mut files = Vec::new();
    for (folder, format) in FORMAT_FOLDERS {
        let dir = root.join(folder);
        if !dir.is_dir() {
            return Err(not_found(format!("the corpus {} has no {folder} folder", root.display())));
        }
        for path in Corpus::find(&dir)?.files {
            let relative = path.strip_prefix(&dir).unwrap_or(&path);
            let name = relative.to_str().ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{} is not UTF-8", path.display()))
            })?;
            files.push(FormatFile { name: format!("{folder}/{name}"), path, format });
        }
    }
    files.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(files)
}

/// The corpus file `name` (`folder/file name`, as [`format_files`] names it) among `files`.
///
/// # Errors
/// If it is not there: the error names it.
pub fn format_file<'a>(files: &'a [FormatFile], name: &str) -> io::Result<&'a FormatFile> {
    files
        .iter()
        .find(|file| file.name == name)
        .ok_or_else(|| not_found(format!("the corpus has no file {name}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_empty_folder_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let missing = dir.path().join("nowhere");
        let err = Corpus::find(&missing).expect_err("a missing folder");
        assert!(err.to_string().contains("nowhere"), "{err}");
        let err = Corpus::find(dir.path()).expect_err("an empty folder");
        assert!(err.to_string().contains("no transcripts"), "{err}");
        std::fs::create_dir(dir.path().join("claude-code-jsonl")).expect("a folder");
        let err = format_files(dir.path()).expect_err("no transcripts in the first format folder");
        assert!(err.to_string().contains("claude-code-jsonl"), "{err}");
    }

    #[test]
    fn files_are_found_depth_first_in_name_order() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path();
        for (folder, _) in FORMAT_FOLDERS {
            std::fs::create_dir_all(root.join(folder).join("b")).expect("a folder");
            for file in ["c.jsonl", "a.json", "b/x.jsonl", "notes.md"] {
                std::fs::write(root.join(folder).join(file), "{}").expect("a file");
            }
        }
        let corpus = Corpus::find(&root.join("codex-rollout-jsonl")).expect("a corpus");
        let names: Vec<_> = corpus.files.iter().map(|p| p.strip_prefix(root).expect("under root")).collect();
        let expected =
            ["codex-rollout-jsonl/a.json", "codex-rollout-jsonl/b/x.jsonl", "codex-rollout-jsonl/c.jsonl"];
        assert_eq!(names, expected.map(Path::new));
        assert_eq!(corpus.other_files, 1);
        let files = format_files(root).expect("three format folders");
        assert_eq!(files.len(), 9);
        assert_eq!(files[0].name, "claude-code-jsonl/a.json");
        assert_eq!(files[8].format, TranscriptFormat::OpenCode);
    }
}
