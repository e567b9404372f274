//! The real-transcript corpus of the `corpus` tests: the folder named by `ANNAL_CORPUS`, the
//! format folders annal imports, and their files. Anything missing is an error naming it, so a
//! corpus test never passes over data it did not read.

use std::error::Error;
use std::path::PathBuf;

use annal_engine::TranscriptFormat;

/// The corpus folder of each format annal imports. The corpus holds folders of other formats
/// too (not imported yet): they are not read, and their presence is no error.
pub const FOLDERS: [(&str, TranscriptFormat); 3] = [
    ("claude-code-jsonl", TranscriptFormat::Claude),
    ("codex-rollout-jsonl", TranscriptFormat::Codex),
    ("opencode-export-json", TranscriptFormat::OpenCode),
];

/// A corpus file: `folder/file name`, its path, its format.
pub type CorpusFile = (String, PathBuf, TranscriptFormat);

/// The corpus folder named by `ANNAL_CORPUS`.
///
/// # Errors
/// If `ANNAL_CORPUS` is not set or names no folder.
pub fn root() -> Result<PathBuf, Box<dyn Error>> {
    let root = std::env::var_os("ANNAL_CORPUS").ok_or("set ANNAL_CORPUS to the corpus folder")?;
    let root = PathBuf::from(root);
    if !root.is_dir() {
        return Err(format!("ANNAL_CORPUS={}: no such folder", root.display()).into());
    }
    Ok(root)
}

/// Every file of every folder in [`FOLDERS`], sorted by name.
///
/// # Errors
/// If the corpus folder, one of the format folders, or any file in one is missing or unreadable:
/// the error names what is missing.
pub fn files() -> Result<Vec<CorpusFile>, Box<dyn Error>> {
    let root = root()?;
    let mut files = Vec::new();
    for (folder, format) in FOLDERS {
        let dir = root.join(folder);
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            format!("the corpus has no readable format folder {folder} ({}): {e}", dir.display())
        })?;
        let before = files.len();
        for entry in entries {
            let path = entry?.path();
            if path.is_file() {
                let name = path.file_name().and_then(|n| n.to_str()).ok_or("file name is not UTF-8")?;
                files.push((format!("{folder}/{name}"), path, format));
            }
        }
        if files.len() == before {
            return Err(format!("the corpus format folder {folder} ({}) holds no file", dir.display()).into());
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// The file `folder/file` (as [`files`] names it) of `files`.
///
/// # Errors
/// If it is not there: the error names it.
pub fn file<'a>(files: &'a [CorpusFile], name: &str) -> Result<&'a CorpusFile, Box<dyn Error>> {
    files.iter().find(|(n, ..)| n == name).ok_or_else(|| format!("the corpus has no file {name}").into())
}
