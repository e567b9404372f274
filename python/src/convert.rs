//! Values crossing into and out of Python: JSON values as Python dicts and lists (through the
//! standard `json` module, so Python sees exactly the shapes `annal ... --json` prints), and the
//! keyword arguments that become open, budget and search options.

use std::time::Duration;

use annal::{AppendReceipt, Block, PortableRecord, SearchRequest, Sharing};
use annal_bindings::{BudgetArgs, SearchArgs};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList, PyTuple};
use serde_json::Value;

use crate::errors::{bad_input, failed};

/// `json.loads`, looked up once: an import on every call cost a receipt's conversion about a
/// tenth of an append's own work.
static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// The `encode` of a `json.JSONEncoder(allow_nan=False)`, made once: `json.dumps` with an
/// argument builds an encoder at every call.
static ENCODE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A JSON value as the Python object `json.loads` makes of it.
pub(crate) fn to_python(py: Python<'_>, value: &Value) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| bad_input(py, format!("cannot encode: {e}")))?;
    text_to_python(py, &text)
}

/// An append's receipt as the dict `annal append --json` prints, keys in its (sorted) order:
/// made here directly, since an append hands one back on every call and its JSON text read by
/// `json.loads` cost more.
pub(crate) fn receipt_to_python(py: Python<'_>, receipt: &AppendReceipt) -> PyResult<Py<PyAny>> {
    let dict = PyDict::new(py);
    dict.set_item("appended", receipt.appended)?;
    dict.set_item("next", receipt.next)?;
    dict.set_item("sourceOrders", PyList::new(py, &receipt.source_orders)?)?;
    Ok(dict.into_any().unbind())
}

/// JSON text the facade wrote as the Python object `json.loads` makes of it.
pub(crate) fn json_to_python(py: Python<'_>, json: &annal::json::Json) -> PyResult<Py<PyAny>> {
    text_to_python(py, json.as_str())
}

/// JSON text as the Python object `json.loads` makes of it.
pub(crate) fn text_to_python(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(LOADS.import(py, "json", "loads")?.call1((text,))?.unbind())
}

/// A Python object as JSON text, as `json.dumps` writes it (NaN and infinities are refused).
pub(crate) fn json_text(object: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let py = object.py();
    let encode = ENCODE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let kwargs = [("allow_nan", false)].into_py_dict(py)?;
        let encoder = py.import("json")?.getattr("JSONEncoder")?.call((), Some(&kwargs))?;
        Ok(encoder.getattr("encode")?.unbind())
    })?;
    let dumped = encode.bind(py).call1((object,));
    match dumped {
        Ok(text) => text.extract(),
        Err(err) => Err(bad_input(py, format!("{what} is not JSON: {}", err.value(py)))),
    }
}

/// The sharing mode named `name`: `processes` (default) or `exclusive`.
pub(crate) fn sharing(py: Python<'_>, name: &str) -> PyResult<Sharing> {
    annal_bindings::sharing(name).map_err(|failure| failed(py, failure))
}

/// A seconds value as a duration; negative, NaN or endless values are bad input.
pub(crate) fn seconds(py: Python<'_>, value: f64, what: &str) -> PyResult<Duration> {
    annal_bindings::seconds(value, what).map_err(|failure| failed(py, failure))
}

/// The token budget of a projection or compaction, its numbers as given from Python, each
/// checked.
pub(crate) fn budget(
    py: Python<'_>,
    window: i64,
    max_output: i64,
    tail: Option<i64>,
    evidence: Option<i64>,
    history: Option<i64>,
) -> PyResult<BudgetArgs> {
    Ok(BudgetArgs {
        window: whole(py, window, "window")?,
        max_output: whole(py, max_output, "max_output")?,
        tail: whole_opt(py, tail, "tail")?,
        evidence: whole_opt(py, evidence, "evidence")?,
        history: whole_opt(py, history, "history")?,
    })
}

/// The request of a search with `args`, its filters checked.
pub(crate) fn search_request(py: Python<'_>, args: SearchArgs, query: String) -> PyResult<SearchRequest> {
    args.request(query).map_err(|failure| failed(py, failure))
}

/// A whole number given from Python as the unsigned type `T` (a count, a position, a token
/// budget): a negative or too large one is bad input naming `what`.
pub(crate) fn whole<T: TryFrom<i64>>(py: Python<'_>, value: i64, what: &str) -> PyResult<T> {
    T::try_from(value).map_err(|_| failed(py, annal_bindings::out_of_range(what, value)))
}

/// [`whole`] for an optional argument.
pub(crate) fn whole_opt<T: TryFrom<i64>>(
    py: Python<'_>,
    value: Option<i64>,
    what: &str,
) -> PyResult<Option<T>> {
    value.map(|value| whole(py, value, what)).transpose()
}

/// Records given from Python (a list or tuple of dicts in the portable format, as json.dumps
/// takes either), each one's JSON text made once and read once. A blob block's `data` may be
/// bytes rather than base64 text: the payload then goes into the record as it is, neither
/// encoded nor read as JSON, and the record must name its entryId (a derived id hashes the
/// record's JSON text, which would not hold the payload).
pub(crate) fn portable_records(py: Python<'_>, records: &Bound<'_, PyAny>) -> PyResult<Vec<PortableRecord>> {
    if !records.is_instance_of::<PyList>() && !records.is_instance_of::<PyTuple>() {
        return Err(bad_input(py, "records must be a list of dicts".into()));
    }
    let mut parsed = Vec::new();
    for (index, record) in records.try_iter()?.enumerate() {
        let (record, payloads) = take_payloads(&record?)?;
        let text = json_text(&record, &format!("record {index}"))?;
        let mut record =
            PortableRecord::parse(&text).map_err(|e| bad_input(py, format!("record {index}: {e}")))?;
        if !payloads.is_empty() && record.id_seed.is_some() {
            let message = format!("record {index}: a blob given as bytes needs the record's \"entryId\"");
            return Err(bad_input(py, message));
        }
        for (block, payload) in payloads {
            if let Some(Block::Blob { data, .. }) = record.record.blocks.get_mut(block) {
                *data = payload;
            }
        }
        parsed.push(record);
    }
    Ok(parsed)
}

/// The bytes of a record's blob blocks, by the index of their block.
type Payloads = Vec<(usize, Vec<u8>)>;

/// `record` with the data of each blob block given as bytes left empty, and those bytes by the
/// block's index; `record` itself when it has none. The caller's dicts are not changed.
fn take_payloads<'py>(record: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Payloads)> {
    let py = record.py();
    let found = record.cast::<PyDict>().ok().map(|dict| dict.get_item("blocks")).transpose()?.flatten();
    let Some(blocks) = found.as_ref().and_then(|blocks| blocks.cast::<PyList>().ok()) else {
        return Ok((record.clone(), Vec::new()));
    };
    let mut payloads = Vec::new();
    let copied = PyList::empty(py);
    for (index, block) in blocks.iter().enumerate() {
        match blob_bytes(&block)? {
            Some((dict, payload)) => {
                let emptied = dict.copy()?;
                emptied.set_item("data", "")?;
                copied.append(emptied)?;
                payloads.push((index, payload));
            }
            None => copied.append(block)?,
        }
    }
    if payloads.is_empty() {
        return Ok((record.clone(), payloads));
    }
    let record = record.cast::<PyDict>()?.copy()?;
    record.set_item("blocks", copied)?;
    Ok((record.into_any(), payloads))
}

/// A blob block whose data is bytes, and a copy of those bytes; None for any other block.
fn blob_bytes<'py>(block: &Bound<'py, PyAny>) -> PyResult<Option<(Bound<'py, PyDict>, Vec<u8>)>> {
    let Ok(dict) = block.cast::<PyDict>() else { return Ok(None) };
    let is_blob = match dict.get_item("type")? {
        Some(kind) => kind.eq("blob")?,
        None => false,
    };
    let data = if is_blob { dict.get_item("data")? } else { None };
    let Some(bytes) = data.as_ref().and_then(|data| data.cast::<PyBytes>().ok()) else { return Ok(None) };
    let payload = bytes.as_bytes().to_vec();
    Ok(Some((dict.clone(), payload)))
}
