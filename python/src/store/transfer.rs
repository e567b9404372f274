//! Records into and out of an `annal.Store`: what its `append_if_unchanged` (with metadata
//! given as JSON text), `export`, `import_` and `import_paths` methods do, and the transcript
//! format names they take.

use std::collections::BTreeMap;
use std::path::PathBuf;

use annal::error::ErrorKind;
use annal::import::TranscriptFormat;
use annal::{ExportFormat, ExportOptions, PortableRecord};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use serde_json::json;

use crate::convert::{portable_records, receipt_to_python, to_python, whole, whole_opt};
use crate::errors::{bad_input, of_kind, to_py};
use crate::guard;
use crate::imports::{self, ImportFailure};

use super::Store;

impl Store {
    /// `append` at `expected_next` when every session of `expected` still has the length given
    /// for it; None, with nothing appended, when one changed.
    pub(super) fn append_guarded(
        &self,
        py: Python<'_>,
        session: String,
        records: &Bound<'_, PyAny>,
        expected_next: i64,
        expected: Vec<(String, Option<i64>)>,
        meta_json: Option<Vec<Option<BTreeMap<String, String>>>>,
    ) -> PyResult<Py<PyAny>> {
        let expected_next = whole(py, expected_next, "expected_next")?;
        let expected = expected
            .into_iter()
            .map(|(name, length)| Ok((name, whole_opt(py, length, "length")?)))
            .collect::<PyResult<Vec<_>>>()?;
        let mut parsed = portable_records(py, records)?;
        if let Some(meta_json) = meta_json {
            with_meta_json(py, &mut parsed, meta_json)?;
        }
        let receipt = self.run(py, move |annal| {
            guard::append_if_unchanged(annal, &session, expected_next, parsed, expected)
        })?;
        match receipt {
            Some(receipt) => receipt_to_python(py, &receipt),
            None => Ok(py.None()),
        }
    }

    /// `session` as annal JSONL (lossless) or Markdown: the text, or written to `path`.
    pub(super) fn export_to(
        &self,
        py: Python<'_>,
        session: String,
        path: Option<PathBuf>,
        format: &str,
        redact: bool,
    ) -> PyResult<Py<PyAny>> {
        let format = match format {
            "jsonl" => ExportFormat::Jsonl,
            "markdown" => ExportFormat::Markdown,
            other => {
                return Err(bad_input(py, format!("format {other:?}: expected \"jsonl\" or \"markdown\"")))
            }
        };
        let options = ExportOptions { format, redact };
        let (summary, bytes) = self.run(py, move |annal| {
            let mut bytes = Vec::new();
            Ok((annal.export(&session, &options, &mut bytes)?, bytes))
        })?;
        let Some(path) = path else {
            return Ok(PyString::new(py, &String::from_utf8_lossy(&bytes)).into_any().unbind());
        };
        let written = py.detach(|| std::fs::write(&path, &bytes));
        if let Err(err) = written {
            return Err(of_kind(py, ErrorKind::Io, format!("cannot write {}: {err}", path.display())));
        }
        to_python(py, &json!({"records": summary.records, "path": path}))
    }

    /// Imports a transcript given as bytes or text, in `format` or the one detected.
    pub(super) fn import_data(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        name: String,
        format: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let bytes = if let Ok(bytes) = data.cast::<PyBytes>() {
            bytes.as_bytes().to_vec()
        } else if let Ok(bytes) = data.cast::<PyByteArray>() {
            bytes.to_vec()
        } else if let Ok(text) = data.extract::<String>() {
            text.into_bytes()
        } else {
            return Err(bad_input(py, "data must be bytes, a bytearray or text".into()));
        };
        let format = transcript_format(py, format)?;
        let summary = self.run(py, move |annal| annal.import(&bytes, &name, format))?;
        to_python(py, &imports::summary_json(&[(None, summary)], &[]))
    }

    /// Imports transcript files, and every transcript file under each folder given.
    pub(super) fn import_files(
        &self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        format: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        let format = transcript_format(py, format)?;
        let annal = self.annal(py)?;
        let imported = py.detach(move || imports::import_paths(&annal, &paths, format));
        match imported {
            Ok(value) => to_python(py, &value),
            Err(ImportFailure::Store(err)) => Err(to_py(py, &err, &self.path)),
            Err(ImportFailure::Empty(folder)) => Err(bad_input(
                py,
                format!(
                    "no transcripts (.jsonl, .json or .aider.chat.history.md files) in {}",
                    folder.display()
                ),
            )),
        }
    }
}

/// The transcript format named `name`, if one was.
fn transcript_format(py: Python<'_>, name: Option<&str>) -> PyResult<Option<TranscriptFormat>> {
    name.map(|name| {
        TranscriptFormat::parse(name).ok_or_else(|| {
            let known: Vec<&str> = TranscriptFormat::ALL.iter().map(|f| f.name()).collect();
            bad_input(py, format!("format {name:?}: expected one of {}", known.join(", ")))
        })
    })
    .transpose()
}

/// Adds each record's metadata given as JSON text (one map or None per record). The record must
/// name its entryId: a derived one hashes the record's JSON without them.
fn with_meta_json(
    py: Python<'_>,
    records: &mut [PortableRecord],
    meta_json: Vec<Option<BTreeMap<String, String>>>,
) -> PyResult<()> {
    if meta_json.len() != records.len() {
        let message = format!("meta_json has {} items for {} records", meta_json.len(), records.len());
        return Err(bad_input(py, message));
    }
    for (index, (record, texts)) in records.iter_mut().zip(meta_json).enumerate() {
        let Some(texts) = texts else { continue };
        if record.id_seed.is_some() {
            let message =
                format!("record {index}: metadata given as JSON text needs the record's \"entryId\"");
            return Err(bad_input(py, message));
        }
        record.record.meta.extend(texts);
    }
    Ok(())
}
