//! `annal.Store`: one store and its search index, shared by every thread of the program. Each
//! call releases the interpreter lock while it reads, writes or searches, so other threads run.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use annal::json::Json;
use annal::responses::record_from_responses_item;
use annal::{Annal, Error, Options};
use pyo3::prelude::*;
use serde_json::Value;

use annal_bindings::{Failure, SearchArgs};

use crate::convert::{
    budget, json_to_python, portable_records, receipt_to_python, search_request, seconds, text_to_python,
    to_python, whole, whole_opt,
};
use crate::errors::{failed, to_py};
use crate::guard;

mod transfer;

/// An annal store: an append-only journal of agent sessions, with projections under a token
/// budget, compaction, full-text search over every original, forks, export and verification.
#[pyclass(module = "annal._annal", name = "Store", frozen)]
#[derive(Debug)]
pub(crate) struct Store {
    path: PathBuf,
    /// `None` once closed.
    handle: RwLock<Option<Arc<Annal>>>,
}

impl Store {
    /// The open store, or `ClosedError`.
    fn annal(&self, py: Python<'_>) -> PyResult<Arc<Annal>> {
        let open = self.handle.read().unwrap_or_else(PoisonError::into_inner).clone();
        open.ok_or_else(|| failed(py, Failure::closed(&self.path)))
    }

    /// Runs `call` on the store without the interpreter lock; its error raised as annal's.
    pub(crate) fn run<T: Send>(
        &self,
        py: Python<'_>,
        call: impl FnOnce(&Annal) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        let annal = self.annal(py)?;
        py.detach(move || call(&annal)).map_err(|err| to_py(py, &err, &self.path))
    }
}

#[pymethods]
impl Store {
    /// Opens the store at `path` (created if missing) and its search index beside it.
    #[new]
    #[pyo3(signature = (path, *, sharing = "processes", read_only = false, index_eagerly = true, search_wait_seconds = 30.0))]
    fn open(
        py: Python<'_>,
        path: PathBuf,
        sharing: &str,
        read_only: bool,
        index_eagerly: bool,
        search_wait_seconds: f64,
    ) -> PyResult<Store> {
        let options = Options {
            sharing: crate::convert::sharing(py, sharing)?,
            read_only,
            index_eagerly,
            search_wait: seconds(py, search_wait_seconds, "search_wait_seconds")?,
            ..Options::default()
        };
        let opened = {
            let path = path.clone();
            py.detach(move || Annal::open_with(path, &options))
        };
        let annal = opened.map_err(|err| to_py(py, &err, &path))?;
        Ok(Store { path, handle: RwLock::new(Some(Arc::new(annal))) })
    }

    /// The store file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.handle.read().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// The metadata of one record (values as JSON), or None when the session has no record at
    /// `source_order`.
    fn meta(&self, py: Python<'_>, session: String, source_order: i64) -> PyResult<Py<PyAny>> {
        let order: u64 = whole(py, source_order, "source_order")?;
        let meta = self.run(py, move |annal| {
            let snapshot = annal.snapshot()?;
            let Some(guard) = snapshot.record(&session, order)? else { return Ok(None) };
            let view = guard.view()?;
            let pairs = view.meta().map(|(key, value)| {
                let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
                (key.to_owned(), value)
            });
            Ok(Some(Value::Object(pairs.collect())))
        })?;
        to_python(py, &meta.unwrap_or(Value::Null))
    }

    /// Appends records (dicts in the portable format) to `session` as one atomic batch.
    #[pyo3(signature = (session, records, *, expected_next = None))]
    fn append(
        &self,
        py: Python<'_>,
        session: String,
        records: &Bound<'_, PyAny>,
        expected_next: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let expected_next = whole_opt(py, expected_next, "expected_next")?;
        let parsed = portable_records(py, records)?;
        let receipt = self.run(py, move |annal| annal.append_portable(&session, expected_next, parsed))?;
        receipt_to_python(py, &receipt)
    }

    /// `append` at `expected_next` when every session of `expected` still has the length given
    /// for it (None: still does not exist); None, with nothing appended, when one changed.
    /// `meta_json`, one per record (or None), holds metadata values as JSON text, taken as they
    /// are when already in the store's canonical form.
    #[pyo3(signature = (session, records, *, expected_next, expected, meta_json = None))]
    fn append_if_unchanged(
        &self,
        py: Python<'_>,
        session: String,
        records: &Bound<'_, PyAny>,
        expected_next: i64,
        expected: Vec<(String, Option<i64>)>,
        meta_json: Option<Vec<Option<BTreeMap<String, String>>>>,
    ) -> PyResult<Py<PyAny>> {
        self.append_guarded(py, session, records, expected_next, expected, meta_json)
    }

    /// The number of records of each session of `names` (None where there is no such session),
    /// read together.
    fn lengths(&self, py: Python<'_>, names: Vec<String>) -> PyResult<Vec<Option<u64>>> {
        self.run(py, move |annal| guard::lengths(annal, &names))
    }

    /// Appends OpenAI Responses-API items (JSON texts), one record each under `ids`.
    #[pyo3(signature = (session, items, ids, *, expected_next = None))]
    fn append_items(
        &self,
        py: Python<'_>,
        session: String,
        items: Vec<String>,
        ids: Vec<String>,
        expected_next: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let expected_next = whole_opt(py, expected_next, "expected_next")?;
        let records = annal_bindings::records(&ids, &items, record_from_responses_item)
            .map_err(|failure| failed(py, failure))?;
        let receipt = self.run(py, move |annal| annal.append(&session, expected_next, records))?;
        receipt_to_python(py, &receipt)
    }

    /// The Responses items of `session`'s records `[start, end)`, as (sourceOrder, JSON text).
    #[pyo3(signature = (session, start = 0, end = None))]
    fn items(
        &self,
        py: Python<'_>,
        session: String,
        start: i64,
        end: Option<i64>,
    ) -> PyResult<Vec<(u64, String)>> {
        let (start, end) = range(py, start, end)?;
        self.run(py, move |annal| annal_bindings::read(annal, &session, start..end))
    }

    /// Where the Agents SDK session `id` stands, from `generation` on: (annal session, records,
    /// generation, where its seal forks it or None, whether the next generation's name is
    /// taken by a session that is not its fork).
    fn generation_head(
        &self,
        py: Python<'_>,
        id: String,
        generation: i64,
    ) -> PyResult<(String, u64, u64, Option<u64>, bool)> {
        let generation = whole(py, generation, "generation")?;
        let head = self.run(py, move |annal| annal_bindings::head(annal, &id, generation))?;
        Ok((head.name, head.records, head.generation, head.sealed_at, head.next_taken))
    }

    /// The records of `session` in `[start, end)`, in the portable format.
    #[pyo3(signature = (session, start = 0, end = None))]
    fn records(&self, py: Python<'_>, session: String, start: i64, end: Option<i64>) -> PyResult<Py<PyAny>> {
        let (start, end) = range(py, start, end)?;
        let values = self.run(py, move |annal| {
            let snapshot = annal.snapshot()?;
            let mut values = Vec::new();
            for guard in snapshot.records(&session, start..end)? {
                values.push(annal::json::record(&snapshot, &guard?.view()?)?);
            }
            Ok(values)
        })?;
        json_to_python(py, &Json::array(values))
    }

    /// One session's facts, or None when there is no such session.
    fn session(&self, py: Python<'_>, name: String) -> PyResult<Py<PyAny>> {
        let info = self.run(py, move |annal| Ok(annal.snapshot()?.session(&name)?))?;
        match info {
            Some(info) => json_to_python(py, &annal::json::session(&info)),
            None => Ok(py.None()),
        }
    }

    /// Every session, in name order.
    fn sessions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let sessions = self.run(py, Annal::sessions)?;
        json_to_python(py, &Json::array(sessions.iter().map(annal::json::session)))
    }

    /// The view of `session` for the next model request under the budget.
    #[pyo3(signature = (session, window = 200_000, max_output = 32_000, *, tail = None, evidence = None, history = None, responses_items = false))]
    #[allow(clippy::too_many_arguments)]
    fn project(
        &self,
        py: Python<'_>,
        session: String,
        window: i64,
        max_output: i64,
        tail: Option<i64>,
        evidence: Option<i64>,
        history: Option<i64>,
        responses_items: bool,
    ) -> PyResult<Py<PyAny>> {
        let options = budget(py, window, max_output, tail, evidence, history)?.options();
        let text = self.run(py, move |annal| {
            let view = annal.project(&session, &options)?;
            let json = annal::json::projection(&view).into_string();
            if !responses_items {
                return Ok(json);
            }
            // The projection is one JSON object: its items join it as one more member, as text.
            let items = annal::responses::projection_items(&view).join(",");
            Ok(format!("{},\"items\":[{items}]}}", json.strip_suffix('}').unwrap_or(&json)))
        })?;
        text_to_python(py, &text)
    }

    /// Commits a checkpoint of `session` so later views keep a stable prefix.
    #[pyo3(signature = (session, window = 200_000, max_output = 32_000, *, tail = None, evidence = None, history = None, force = false))]
    #[allow(clippy::too_many_arguments)]
    fn compact(
        &self,
        py: Python<'_>,
        session: String,
        window: i64,
        max_output: i64,
        tail: Option<i64>,
        evidence: Option<i64>,
        history: Option<i64>,
        force: bool,
    ) -> PyResult<Py<PyAny>> {
        let budget = budget(py, window, max_output, tail, evidence, history)?;
        let mut options = annal::CompactOptions::new(budget.options());
        options.force = force;
        // Another thread or process compacting the same session: wait for it rather than fail.
        options.claim_wait = std::time::Duration::from_secs(10);
        let outcome = self.run(py, move |annal| annal.compact(&session, &options))?;
        json_to_python(py, &annal::json::compact_outcome(&outcome))
    }

    /// Searches every original, best matches first.
    #[pyo3(signature = (query, *, session = None, role = None, tool = None, errors_only = false, literal = false, limit = 10, start = None, end = None))]
    #[allow(clippy::too_many_arguments)]
    fn search(
        &self,
        py: Python<'_>,
        query: String,
        session: Option<String>,
        role: Option<String>,
        tool: Option<String>,
        errors_only: bool,
        literal: bool,
        limit: i64,
        start: Option<i64>,
        end: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let limit = whole(py, limit, "limit")?;
        let (start, end) = (whole_opt(py, start, "start")?, whole_opt(py, end, "end")?);
        let args = SearchArgs { session, role, tool, errors_only, literal, limit, start, end };
        let request = search_request(py, args, query)?;
        let hits = self.run(py, move |annal| annal.search(&request))?;
        json_to_python(py, &Json::array(hits.iter().map(annal::json::hit)))
    }

    /// The original named `id` (`entryId`, or `entryId#block`), verbatim; with `lines`
    /// `(first, last)`, only those lines (from 1, inclusive) of each text.
    #[pyo3(signature = (id, lines = None))]
    fn get(&self, py: Python<'_>, id: String, lines: Option<(i64, i64)>) -> PyResult<Py<PyAny>> {
        let lines = match lines {
            Some((first, last)) => {
                Some((whole::<usize>(py, first, "first line")?, whole::<usize>(py, last, "last line")?))
            }
            None => None,
        };
        let original = self.run(py, move |annal| annal.get(&id, lines.map(|(a, b)| a..=b)))?;
        json_to_python(py, &annal::json::original(&original))
    }

    /// Forks `session` at `at` into `new_name`, sharing records `[0, at)` without copying them.
    fn fork(&self, py: Python<'_>, session: String, at: i64, new_name: String) -> PyResult<Py<PyAny>> {
        let at: u64 = whole(py, at, "at")?;
        let info = self.run(py, move |annal| annal.fork(&session, at, &new_name))?;
        json_to_python(py, &annal::json::session(&info))
    }

    /// `session` as annal JSONL (lossless) or Markdown: the text, or written to `path`.
    #[pyo3(signature = (session, path = None, *, format = "jsonl", redact = false))]
    fn export(
        &self,
        py: Python<'_>,
        session: String,
        path: Option<PathBuf>,
        format: &str,
        redact: bool,
    ) -> PyResult<Py<PyAny>> {
        self.export_to(py, session, path, format, redact)
    }

    /// Imports a transcript given as bytes or text (of any agent `annal import` reads, or an
    /// annal export), in `format` or the one detected.
    #[pyo3(name = "import_", signature = (data, name, *, format = None))]
    fn import_bytes(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        name: String,
        format: Option<&str>,
    ) -> PyResult<Py<PyAny>> {
        self.import_data(py, data, name, format)
    }

    /// Imports transcript files, and every transcript file under each folder given.
    #[pyo3(signature = (paths, *, format = None))]
    fn import_paths(&self, py: Python<'_>, paths: Vec<PathBuf>, format: Option<&str>) -> PyResult<Py<PyAny>> {
        self.import_files(py, paths, format)
    }

    /// Recomputes every content hash and chain (of `session`, or of the whole store with blobs).
    #[pyo3(signature = (session = None))]
    fn verify(&self, py: Python<'_>, session: Option<String>) -> PyResult<Py<PyAny>> {
        let report = self.run(py, move |annal| annal.verify(session.as_deref()))?;
        json_to_python(py, &annal::json::verify_report(&report))
    }

    /// Commits what the index has pending and closes the store; later calls raise
    /// `ClosedError`. Returns whether it closed now (False while another thread's call still
    /// runs: it closes when that returns). Closing twice is harmless.
    fn close(&self, py: Python<'_>) -> PyResult<bool> {
        let taken = self.handle.write().unwrap_or_else(PoisonError::into_inner).take();
        let Some(annal) = taken else { return Ok(true) };
        match Arc::try_unwrap(annal) {
            Ok(annal) => py.detach(move || annal.close()).map_err(|err| to_py(py, &err, &self.path)),
            Err(_) => Ok(false),
        }
    }

    fn __enter__(slf: Py<Store>) -> Py<Store> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("Store({:?}, {state})", self.path.display().to_string())
    }
}

/// A `[start, end)` range of positions given from Python.
fn range(py: Python<'_>, start: i64, end: Option<i64>) -> PyResult<(u64, u64)> {
    Ok((whole(py, start, "start")?, whole_opt(py, end, "end")?.unwrap_or(u64::MAX)))
}
