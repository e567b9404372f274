//! What an embedder and `annal mcp` see: library searches on the largest store while another
//! thread appends to it; and `annal mcp`: its peak memory, and how soon what another process
//! appends is found through it.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use annal_engine::{Record, Role, Store, StoreOptions};
use annal_query::{IndexOptions, SearchIndex, SearchRequest};
use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use crate::queries::ProcessQuery;

/// What the index beside `store_file` takes on disk, as annal-query counts it (opened read-only:
/// an up-to-date index takes no writer and the store file is not written).
pub(crate) fn index_bytes(store_file: &Path) -> anyhow::Result<u64> {
    let store = Arc::new(Store::open_read_only(store_file, StoreOptions::default())?);
    let index = SearchIndex::open(store, IndexOptions::default())?;
    let bytes = index.size_bytes()?;
    index.close()?;
    Ok(bytes)
}

/// Library search latencies while appending.
pub(crate) struct Library {
    pub(crate) latencies: Vec<Duration>,
    pub(crate) appends: usize,
}

/// Every query `rounds` times through `SearchIndex::search`, while a second thread appends one
/// record every 10 ms (each durable, and indexed by the same index as the searches run).
pub(crate) fn measure(store_file: &Path, queries: &[ProcessQuery], rounds: usize) -> anyhow::Result<Library> {
    let store = Arc::new(Store::open(store_file, StoreOptions::default())?);
    let index = SearchIndex::open(Arc::clone(&store), IndexOptions::default())?;
    index.wait_searchable(Duration::from_secs(3_600))?;
    let stop = Arc::new(AtomicBool::new(false));
    let appender = {
        let (store, stop) = (Arc::clone(&store), Arc::clone(&stop));
        std::thread::spawn(move || -> anyhow::Result<usize> {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let text =
                    format!("appended while searching, number {n}: cache retry budget src/live_{n}.rs");
                store.append(
                    "bench-live",
                    None,
                    vec![Record::text(format!("live-{n}"), Role::User, text)],
                )?;
                n += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(n)
        })
    };
    let mut latencies = Vec::with_capacity(rounds * queries.len());
    for _ in 0..rounds {
        for query in queries {
            let mut request = SearchRequest::new(query.annal());
            request.session = query.session.clone();
            request.limit = crate::systems::TOP;
            let started = Instant::now();
            let hits = index.search(&request)?;
            latencies.push(started.elapsed());
            std::hint::black_box(hits);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let appends = appender.join().map_err(|_| anyhow::anyhow!("the appending thread panicked"))??;
    index.close()?;
    Ok(Library { latencies, appends })
}

/// What `annal mcp` did: its peak resident memory, and for each record this process appended
/// while it ran, the time from the append's return to a search through the server finding it.
pub(crate) struct Mcp {
    pub(crate) peak_rss_bytes: u64,
    pub(crate) lags: Vec<Duration>,
}

/// Starts `annal mcp`, asks one search of each query, then `probes` times appends a record from
/// this process (another process to the server) and searches for it through the server;
/// closes its input and returns what it measured.
pub(crate) fn mcp(
    binary: &Path,
    store: &Path,
    queries: &[ProcessQuery],
    probes: usize,
) -> anyhow::Result<Mcp> {
    let report = tempfile::NamedTempFile::new()?;
    let mut mcp = Command::new(binary);
    mcp.arg("--db").arg(store).arg("mcp");
    let mut child = crate::process::under_time(&mcp, report.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start annal mcp")?;
    let mut input = child.stdin.take().context("no stdin")?;
    let mut output = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut send = |value: Value| -> anyhow::Result<()> { Ok(writeln!(input, "{value}")?) };
    let mut answer = |id: u64| -> anyhow::Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if output.read_line(&mut line)? == 0 {
                bail!("annal mcp closed its output before answering request {id}");
            }
            let value: Value = serde_json::from_str(&line)?;
            if value["id"] == json!(id) {
                return Ok(value);
            }
        }
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "search-process-bench", "version": "1"}}}))?;
    answer(1)?;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    for (n, query) in queries.iter().enumerate() {
        let id = 2 + n as u64;
        let mut arguments = json!({"query": query.annal(), "limit": 10});
        if let Some(session) = &query.session {
            arguments["session"] = json!(session);
        }
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "history_search", "arguments": arguments}}))?;
        let reply = answer(id)?;
        if reply["result"]["isError"] == json!(true) || reply.get("error").is_some() {
            bail!("annal mcp failed a search: {reply}");
        }
    }
    let appender = Store::open(store, StoreOptions::default())?;
    let mut lags = Vec::with_capacity(probes);
    for probe in 0..probes {
        let token = format!("lagprobe{probe}x");
        let record =
            Record::text(format!("lag-{probe}"), Role::User, format!("appended by another process: {token}"));
        appender.append("bench-lag", None, vec![record])?;
        let appended = Instant::now();
        let id = 10_000 + probe as u64;
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "history_search", "arguments": {"query": token, "limit": 1}}}))?;
        let reply = answer(id)?;
        if !reply.to_string().contains(&format!("lag-{probe}")) {
            bail!("annal mcp did not find a record appended before the search: {reply}");
        }
        lags.push(appended.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    appender.close()?;
    drop(input);
    let status = child.wait()?;
    anyhow::ensure!(status.success(), "annal mcp exited with {status}");
    Ok(Mcp { peak_rss_bytes: crate::process::peak_rss(report.path())?, lags })
}
