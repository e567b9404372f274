//! `annal.Fleet`: a connection to a NATS JetStream fleet, and the calls that publish a
//! store's sessions to it, follow it into a store, and append to a session shared through it.

use std::sync::Arc;
use std::time::Duration;

use annal::fleet::{Fleet as Connection, FleetOptions, FollowOptions, PublishOptions};
use annal::responses::record_from_responses_item;
use pyo3::prelude::*;
use serde_json::json;

use crate::convert::{portable_records, receipt_to_python, seconds, to_python, whole_opt};
use crate::errors::{bad_input, failed, of_kind};
use crate::store::Store;

/// A connection to a fleet's servers and its stream (created if missing). Share one between
/// stores and threads; each call releases the interpreter lock while it waits on the servers.
#[pyclass(module = "annal._annal", name = "Fleet", frozen)]
#[derive(Debug)]
pub(crate) struct Fleet {
    servers: String,
    connection: Arc<Connection>,
}

#[pymethods]
impl Fleet {
    /// Connects to `urls` (comma-separated; credentials from the URLs or the environment).
    #[new]
    #[pyo3(signature = (urls, *, stream = None, prefix = None, replicas = 3, timeout_seconds = 10.0))]
    fn connect(
        py: Python<'_>,
        urls: &str,
        stream: Option<String>,
        prefix: Option<String>,
        replicas: usize,
        timeout_seconds: f64,
    ) -> PyResult<Fleet> {
        let fleet_error = |py: Python<'_>, err: annal::fleet::FleetError| {
            of_kind(py, err.kind(), annal::error::message(&err))
        };
        let mut options = FleetOptions::from_urls(urls).map_err(|err| fleet_error(py, err))?;
        if let Some(stream) = stream {
            options.prefix = annal::fleet::prefix_for(&stream);
            options.stream = stream;
        }
        if let Some(prefix) = prefix {
            options.prefix = prefix;
        }
        options.replicas = replicas;
        options.timeout = seconds(py, timeout_seconds, "timeout_seconds")?.max(Duration::from_millis(100));
        let servers = options.servers_shown();
        let connection =
            py.detach(move || Connection::connect(options)).map_err(|err| fleet_error(py, err))?;
        Ok(Fleet { servers, connection: Arc::new(connection) })
    }

    /// Publishes what the fleet lacks of `store`'s sessions (or those `sessions` matches).
    #[pyo3(signature = (store, *, sessions = None))]
    fn publish(&self, py: Python<'_>, store: &Store, sessions: Option<String>) -> PyResult<Py<PyAny>> {
        let fleet = Arc::clone(&self.connection);
        let report = store.run(py, move |annal| {
            let mut options = PublishOptions::default();
            options.sessions = sessions;
            annal.publish(&fleet, &options)
        })?;
        let value = json!({
            "records": report.records, "bytes": report.bytes, "forks": report.forks,
            "sessions": report.sessions, "diverged": report.diverged, "deferred": report.deferred,
            "stopped": report.stopped,
        });
        to_python(py, &value)
    }

    /// Applies the fleet's records to `store` (those of `sessions` when given), each checked
    /// against its session's chain. A session that does not chain stops and is named in
    /// "stopped"; it is not an exception. Sessions an earlier pass stopped are named in
    /// "stillStopped".
    #[pyo3(signature = (store, *, sessions = None))]
    fn follow(&self, py: Python<'_>, store: &Store, sessions: Option<String>) -> PyResult<Py<PyAny>> {
        let fleet = Arc::clone(&self.connection);
        let report = store.run(py, move |annal| {
            let mut options = FollowOptions::default();
            options.sessions = sessions;
            annal.follow(&fleet, &options, &|| true)
        })?;
        let value = json!({
            "records": report.records, "bytes": report.bytes, "forks": report.forks,
            "passedOver": report.passed_over, "stopped": report.stopped, "foreign": report.foreign,
            "sequence": report.sequence, "stillStopped": report.still_stopped,
        });
        to_python(py, &value)
    }

    /// Brings `store`'s copy of the shared session `session` up to the fleet's.
    fn refresh(&self, py: Python<'_>, store: &Store, session: String) -> PyResult<u64> {
        let fleet = Arc::clone(&self.connection);
        store.run(py, move |annal| annal.shared(&fleet, &session).refresh())
    }

    /// Appends records (dicts in the portable format, each with an entryId) to the shared
    /// session `session`: returns once the fleet holds them, with `expected_next` checked by
    /// the servers (`ConflictError` when another writer took the position).
    #[pyo3(signature = (store, session, records, *, expected_next = None))]
    fn append(
        &self,
        py: Python<'_>,
        store: &Store,
        session: String,
        records: &Bound<'_, PyAny>,
        expected_next: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let expected_next = whole_opt(py, expected_next, "expected_next")?;
        let mut parsed = Vec::new();
        for (index, record) in portable_records(py, records)?.into_iter().enumerate() {
            if record.record.entry_id.is_empty() {
                return Err(bad_input(
                    py,
                    format!("record {index}: a shared session's records need an entryId"),
                ));
            }
            parsed.push(record.record);
        }
        let fleet = Arc::clone(&self.connection);
        let receipt =
            store.run(py, move |annal| annal.shared(&fleet, &session).append(expected_next, parsed))?;
        receipt_to_python(py, &receipt)
    }

    /// Appends OpenAI Responses-API items (JSON texts), one record each under `ids`, to the
    /// shared session `session`, as :meth:`append` does.
    #[pyo3(signature = (store, session, items, ids, *, expected_next = None))]
    fn append_items(
        &self,
        py: Python<'_>,
        store: &Store,
        session: String,
        items: Vec<String>,
        ids: Vec<String>,
        expected_next: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        let expected_next = whole_opt(py, expected_next, "expected_next")?;
        let records = annal_bindings::records(&ids, &items, record_from_responses_item)
            .map_err(|failure| failed(py, failure))?;
        let fleet = Arc::clone(&self.connection);
        let receipt =
            store.run(py, move |annal| annal.shared(&fleet, &session).append(expected_next, records))?;
        receipt_to_python(py, &receipt)
    }

    /// Per session of `store`: records here and on the fleet, waiting to be published, lag, and
    /// who signed its records here.
    #[pyo3(signature = (store, *, sessions = None))]
    fn status(&self, py: Python<'_>, store: &Store, sessions: Option<String>) -> PyResult<Py<PyAny>> {
        let fleet = Arc::clone(&self.connection);
        let rows = store.run(py, move |annal| annal.fleet_status(&fleet, sessions.as_deref()))?;
        let rows: Vec<_> = rows
            .into_iter()
            .map(|row| {
                json!({
                    "session": row.session, "local": row.local, "fleet": row.fleet,
                    "unpublished": row.unpublished, "lag": row.lag, "stopped": row.stopped,
                    "forkedTo": row.forked_to, "unsigned": row.unsigned,
                    "signers": row.signers.iter()
                        .map(|(signer, records)| json!({"signer": signer, "records": records}))
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        to_python(py, &serde_json::Value::Array(rows))
    }

    fn __repr__(&self) -> String {
        format!("Fleet({:?})", self.servers)
    }
}
