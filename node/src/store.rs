//! `NativeStore`: one open store and its search index, shared by every call of the program.
//! Each method returns a promise of JSON text (the shapes `annal ... --json` prints), its work
//! done off the JavaScript thread.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use annal::json::Json;
use annal::{Annal, Error, ExportFormat, ExportOptions, Snapshot};
use annal_bindings::Failure;
use napi::bindgen_prelude::{AsyncTask, Env, Task};
use napi_derive::napi;

use crate::args::{optional, portable_records, whole, BudgetOptions, OpenOptions, SearchOptions};
use crate::errors::to_napi;
use crate::items;
use crate::task::{failed, spawn, Job};

/// An annal store: an append-only journal of agent sessions, with projections under a token
/// budget, compaction, full-text search over every original, forks, export and verification.
#[napi]
#[derive(Debug)]
pub struct NativeStore {
    path: PathBuf,
    /// `None` once closed.
    handle: Arc<RwLock<Option<Arc<Annal>>>>,
}

/// Opening a store, on a pool thread (opening may wait for another process's lock).
#[derive(Debug)]
pub struct Opening {
    path: PathBuf,
    options: Option<annal::Options>,
}

impl Task for Opening {
    type Output = Annal;
    type JsValue = NativeStore;

    fn compute(&mut self) -> napi::Result<Annal> {
        let options = self.options.take().unwrap_or_default();
        Annal::open_with(&self.path, &options).map_err(|err| to_napi(Failure::of(&err, &self.path)))
    }

    fn resolve(&mut self, _env: Env, annal: Annal) -> napi::Result<NativeStore> {
        let handle = Arc::new(RwLock::new(Some(Arc::new(annal))));
        Ok(NativeStore { path: self.path.clone(), handle })
    }
}

/// Opens the store at `path` (created if missing) and its search index beside it.
#[napi(js_name = "openStore", ts_return_type = "Promise<NativeStore>")]
pub fn open_store(path: String, options: Option<OpenOptions>) -> napi::Result<AsyncTask<Opening>> {
    let options = options.unwrap_or_default().options().map_err(to_napi)?;
    Ok(AsyncTask::new(Opening { path: PathBuf::from(path), options: Some(options) }))
}

impl NativeStore {
    /// Runs `call` on the open store on a pool thread; its error as annal's.
    fn run(&self, call: impl FnOnce(&Annal) -> Result<String, Error> + Send + 'static) -> AsyncTask<Job> {
        let open = self.handle.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(annal) = open else {
            return failed(Failure::closed(&self.path));
        };
        let path = self.path.clone();
        spawn(move || call(&annal).map_err(|err| Failure::of(&err, &path)))
    }

    /// [`NativeStore::run`] after checking the arguments.
    fn run_checked<A: Send + 'static>(
        &self,
        checked: Result<A, Failure>,
        call: impl FnOnce(&Annal, A) -> Result<String, Error> + Send + 'static,
    ) -> AsyncTask<Job> {
        match checked {
            Ok(args) => self.run(move |annal| call(annal, args)),
            Err(failure) => failed(failure),
        }
    }
}

#[napi]
impl NativeStore {
    /// The store file.
    #[napi(getter)]
    pub fn path(&self) -> String {
        self.path.display().to_string()
    }

    /// Whether `close` was called.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.handle.read().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Appends records (each the JSON text of one in the portable format) to `session` as one
    /// atomic batch; the receipt.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn append(
        &self,
        session: String,
        records: Vec<String>,
        expected_next: Option<f64>,
    ) -> AsyncTask<Job> {
        let checked =
            optional(expected_next, "expectedNext").and_then(|e| Ok((e, portable_records(&records)?)));
        self.run_checked(checked, move |annal, (expected, records)| {
            Ok(annal::json::receipt(&annal.append_portable(&session, expected, records)?).into_string())
        })
    }

    /// [`NativeStore::append`], then what [`NativeStore::sessions_marked`] reads of `names` in a
    /// snapshot begun after it: `[receipt, [mark | null, [facts | null, ...]]]`. A caller that
    /// keeps what it read learns in the same call whether anything but its append changed.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_marked(
        &self,
        session: String,
        records: Vec<String>,
        expected_next: Option<f64>,
        names: Vec<String>,
    ) -> AsyncTask<Job> {
        let checked =
            optional(expected_next, "expectedNext").and_then(|e| Ok((e, portable_records(&records)?)));
        self.run_checked(checked, move |annal, (expected, records)| {
            let receipt = annal::json::receipt(&annal.append_portable(&session, expected, records)?);
            Ok(format!("[{},{}]", receipt.as_str(), marked_facts(annal, &names)?))
        })
    }

    /// Appends OpenAI Responses-API items (JSON texts), one record each under `ids`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn append_items(
        &self,
        session: String,
        items: Vec<String>,
        ids: Vec<String>,
        expected_next: Option<f64>,
    ) -> AsyncTask<Job> {
        let checked = optional(expected_next, "expectedNext")
            .and_then(|e| Ok((e, annal_bindings::records(&ids, &items, items::record)?)));
        self.run_checked(checked, move |annal, (expected, records)| {
            Ok(annal::json::receipt(&annal.append(&session, expected, records)?).into_string())
        })
    }

    /// The Responses items of `session`'s records `[start, end)`: `[[sourceOrder, itemText]]`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn items(&self, session: String, start: f64, end: Option<f64>) -> AsyncTask<Job> {
        self.run_checked(range(start, end), move |annal, orders| {
            let found = annal_bindings::read(annal, &session, orders)?;
            Ok(serde_json::Value::from(
                found.into_iter().map(|(order, text)| serde_json::json!([order, text])).collect::<Vec<_>>(),
            )
            .to_string())
        })
    }

    /// Where the Agents session `id` stands from `generation` on:
    /// `[name, records, generation, sealedAt | null, nextTaken]`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn generation_head(&self, id: String, generation: f64) -> AsyncTask<Job> {
        self.run_checked(whole::<u64>(generation, "generation"), move |annal, generation| {
            let head = annal_bindings::head(annal, &id, generation)?;
            Ok(serde_json::json!([head.name, head.records, head.generation, head.sealed_at, head.next_taken])
                .to_string())
        })
    }

    /// The records of `session` in `[start, end)`, in the portable format.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn records(&self, session: String, start: f64, end: Option<f64>) -> AsyncTask<Job> {
        self.run_checked(range(start, end), move |annal, orders| {
            let snapshot = annal.snapshot()?;
            let mut values = Vec::new();
            for guard in snapshot.records(&session, orders)? {
                values.push(annal::json::record(&snapshot, &guard?.view()?)?);
            }
            Ok(Json::array(values).into_string())
        })
    }

    /// One session's facts, or `null` when there is no such session.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn session(&self, name: String) -> AsyncTask<Job> {
        self.run(move |annal| {
            Ok(match annal.snapshot()?.session(&name)? {
                Some(info) => annal::json::session(&info).into_string(),
                None => "null".to_owned(),
            })
        })
    }

    /// The facts of each session named, `null` for one there is none of, read in one snapshot:
    /// one call where a thread of several generations would take one each.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn sessions_named(&self, names: Vec<String>) -> AsyncTask<Job> {
        self.run(move |annal| named_facts(&annal.snapshot()?, &names))
    }

    /// [`NativeStore::sessions_named`] with the mark of the snapshot they were read in:
    /// `[mark | null, [facts | null, ...]]`, the mark for [`NativeStore::unchanged_since`].
    #[napi(ts_return_type = "Promise<string>")]
    pub fn sessions_marked(&self, names: Vec<String>) -> AsyncTask<Job> {
        self.run(move |annal| marked_facts(annal, &names))
    }

    /// Whether no session was appended to, forked or made, by any process, since the snapshot
    /// whose mark is `mark`, told on the JavaScript thread: it never waits for a lock or a sync
    /// (`Annal::mark_now`). False when it did change, when that cannot be told at once (another
    /// writer holds the log), or on any failure: the caller then reads the store as usual.
    #[napi]
    pub fn unchanged_since(&self, mark: String) -> bool {
        let open = self.handle.read().unwrap_or_else(PoisonError::into_inner).clone();
        let Some(annal) = open else { return false };
        let Some(then) = annal::snapshot::ChangeMark::from_hex(&mark) else { return false };
        matches!(annal.mark_now(), Ok(Some(now)) if now == then)
    }

    /// Every session, in name order.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn sessions(&self) -> AsyncTask<Job> {
        self.run(|annal| Ok(Json::array(annal.sessions()?.iter().map(annal::json::session)).into_string()))
    }

    /// The view of `session` for the next model request under the budget.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn project(&self, session: String, budget: Option<BudgetOptions>) -> AsyncTask<Job> {
        let budget = budget.unwrap_or_default();
        let with_items = budget.responses_items.unwrap_or(false);
        self.run_checked(budget.options(), move |annal, options| {
            let view = annal.project(&session, &options)?;
            let json = annal::json::projection(&view).into_string();
            if !with_items {
                return Ok(json);
            }
            // The projection is one JSON object: its items join it as one more member.
            let items = annal::responses::projection_items(&view).join(",");
            Ok(format!("{},\"items\":[{items}]}}", json.strip_suffix('}').unwrap_or(&json)))
        })
    }

    /// Commits a checkpoint of `session` so later views keep a stable prefix.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn compact(&self, session: String, budget: Option<BudgetOptions>) -> AsyncTask<Job> {
        let budget = budget.unwrap_or_default();
        let force = budget.force.unwrap_or(false);
        self.run_checked(budget.options(), move |annal, options| {
            let mut options = annal::CompactOptions::new(options);
            options.force = force;
            // Another process compacting the same session: wait for it rather than fail.
            options.claim_wait = std::time::Duration::from_secs(10);
            Ok(annal::json::compact_outcome(&annal.compact(&session, &options)?).into_string())
        })
    }

    /// Searches every original, best matches first.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn search(&self, query: String, options: Option<SearchOptions>) -> AsyncTask<Job> {
        self.run_checked(options.unwrap_or_default().request(query), |annal, request| {
            Ok(Json::array(annal.search(&request)?.iter().map(annal::json::hit)).into_string())
        })
    }

    /// The original named `id` (`entryId`, or `entryId#block`), verbatim; with `firstLine` and
    /// `lastLine`, only those lines (from 1, inclusive) of each text.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn get(&self, id: String, first_line: Option<f64>, last_line: Option<f64>) -> AsyncTask<Job> {
        let lines = match (first_line, last_line) {
            (Some(first), Some(last)) => whole::<usize>(first, "firstLine")
                .and_then(|a| Ok(Some(a..=whole::<usize>(last, "lastLine")?))),
            (None, None) => Ok(None),
            _ => Err(Failure::bad_input("firstLine and lastLine are given together")),
        };
        self.run_checked(lines, move |annal, lines| {
            Ok(annal::json::original(&annal.get(&id, lines)?).into_string())
        })
    }

    /// Forks `session` at `at` into `newName`, sharing records `[0, at)` without copying them.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn fork(&self, session: String, at: f64, new_name: String) -> AsyncTask<Job> {
        self.run_checked(whole::<u64>(at, "at"), move |annal, at| {
            Ok(annal::json::session(&annal.fork(&session, at, &new_name)?).into_string())
        })
    }

    /// `session` as annal JSONL (lossless, `"jsonl"`) or `"markdown"`: the text.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn export(&self, session: String, format: Option<String>, redact: Option<bool>) -> AsyncTask<Job> {
        let format = match format.as_deref().unwrap_or("jsonl") {
            "jsonl" => Ok(ExportFormat::Jsonl),
            "markdown" => Ok(ExportFormat::Markdown),
            other => Err(Failure::bad_input(format!("format {other:?}: expected \"jsonl\" or \"markdown\""))),
        };
        let redact = redact.unwrap_or(false);
        self.run_checked(format, move |annal, format| {
            let mut bytes = Vec::new();
            annal.export(&session, &ExportOptions { format, redact }, &mut bytes)?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        })
    }

    /// Recomputes every content hash and chain (of `session`, or of the whole store).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn verify(&self, session: Option<String>) -> AsyncTask<Job> {
        self.run(
            move |annal| Ok(annal::json::verify_report(&annal.verify(session.as_deref())?).into_string()),
        )
    }

    /// Commits what the index has pending and closes the store; later calls reject with
    /// `ClosedError`. Resolves `"true"` when it closed now, `"false"` while another call still
    /// runs (it closes when that returns). Closing twice is harmless.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn close(&self) -> AsyncTask<Job> {
        let taken = self.handle.write().unwrap_or_else(PoisonError::into_inner).take();
        let path = self.path.clone();
        spawn(move || {
            let Some(annal) = taken else { return Ok("true".to_owned()) };
            match Arc::try_unwrap(annal) {
                Ok(annal) => annal.close().map(|_| "true".to_owned()).map_err(|err| Failure::of(&err, &path)),
                Err(_) => Ok("false".to_owned()),
            }
        })
    }
}

/// The facts of each session of `names` in `snapshot` (`null` for one there is none of), as one
/// JSON array.
fn named_facts(snapshot: &Snapshot, names: &[String]) -> Result<String, Error> {
    let mut facts = Vec::with_capacity(names.len());
    for name in names {
        facts.push(match snapshot.session(name)? {
            Some(info) => annal::json::session(&info).into_string(),
            None => "null".to_owned(),
        });
    }
    Ok(format!("[{}]", facts.join(",")))
}

/// The facts of `names` in a snapshot begun now, with its mark: `[mark | null, [...]]`.
fn marked_facts(annal: &Annal, names: &[String]) -> Result<String, Error> {
    let snapshot = annal.snapshot()?;
    let mark = snapshot.mark().map(|mark| serde_json::Value::from(mark.to_hex()));
    Ok(format!("[{},{}]", mark.unwrap_or_default(), named_facts(&snapshot, names)?))
}

/// A `[start, end)` range of positions given from JavaScript.
fn range(start: f64, end: Option<f64>) -> Result<std::ops::Range<u64>, Failure> {
    Ok(whole(start, "start")?..optional(end, "end")?.unwrap_or(u64::MAX))
}
