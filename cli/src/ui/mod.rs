//! `annal ui`: a local, read-only web view of the store, served on loopback to the holder of a
//! random token: every session, search as you type, a session's records, and what the model saw.
//!
//! Pages are rendered on the server (maud templates escape every value they interpolate), so
//! reading works with JavaScript off; `app.js` only adds search as you type and live updates.
//! Store work runs on tokio's blocking pool, one call per request; a failed call is that
//! request's error page, never the server's end.

mod catalog;
mod charts;
mod diff;
mod guard;
mod key;
mod layout;
mod markdown;
mod pages;
mod record;
mod reveal;
mod seen;
mod session;
mod sidebar;

use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use annal::Annal;
use anyhow::Context as _;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use clap::Args;

use crate::store::StoreLocation;

// Arguments of `annal ui` (the store comes from the global `--db`).
#[derive(Debug, Args)]
pub(crate) struct UiArgs {
    /// The loopback port to listen on (0: any free port)
    #[arg(long, default_value_t = 4321)]
    port: u16,
    /// Print the URL without opening a browser
    #[arg(long)]
    no_open: bool,
}

/// What every request handler shares.
#[derive(Debug)]
pub(crate) struct Ui {
    pub(crate) annal: Annal,
    pub(crate) location: StoreLocation,
    /// The secret in the printed URL; a request must carry it, or the cookie it sets.
    pub(crate) token: String,
    /// The port the server listens on: the only `Host` and `Origin` it answers.
    pub(crate) port: u16,
    /// Issues and checks the cookie the token is exchanged for.
    pub(crate) key: key::CookieKey,
    /// Session summaries, kept between requests and refreshed for sessions that grew.
    pub(crate) catalog: Mutex<catalog::Catalog>,
    /// "What the model saw", rendered once per session, window and length.
    pub(crate) seen: Mutex<seen::Cache>,
}

pub(crate) type Shared = Arc<Ui>;

/// Serves until interrupted.
pub(crate) fn run(location: StoreLocation, args: &UiArgs) -> anyhow::Result<()> {
    // A search waits this long for records committed before it (a session captured a moment
    // ago); an index that is up to date answers at once.
    let annal = location.open_serving(std::time::Duration::from_secs(10))?;
    let token = guard::new_token()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the web server's runtime")?;
    runtime.block_on(async move {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .with_context(|| format!("cannot listen on {address} (pass --port N for another port)"))?;
        let port = listener.local_addr().context("cannot read the listening address")?.port();
        let key = key::CookieKey::new(&token, port);
        let ui = Arc::new(Ui {
            annal,
            location,
            token,
            port,
            key,
            catalog: Mutex::default(),
            seen: Mutex::default(),
        });
        // The list's summaries are read while the browser starts, so its first page is warm.
        let warming = ui.clone();
        tokio::task::spawn_blocking(move || {
            let _ = catalog(&warming).refresh(&warming.annal);
        });
        let url = format!("http://127.0.0.1:{port}/?token={}", ui.token);
        // Whoever reads the URL may close the pipe after it: the server goes on regardless.
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "annal ui: {url}");
        let _ = writeln!(stdout, "(serving {} read-only; Ctrl-C stops)", ui.location);
        let _ = stdout.flush();
        if !args.no_open && webbrowser::open(&url).is_err() {
            let _ = writeln!(std::io::stderr(), "annal: cannot open a browser; open the URL above");
        }
        axum::serve(listener, router(ui)).await.context("the web server stopped")
    })
}

/// Every page and endpoint, behind the guard.
fn router(ui: Shared) -> Router {
    Router::new()
        .route("/", get(pages::sessions))
        .route("/events", get(pages::events))
        .route("/search", get(pages::search))
        .route("/session", get(session::page))
        .route("/record", get(session::record))
        .route("/export", get(session::export))
        .route("/seen", get(seen::page))
        .route("/assets/app.css", get(layout::css))
        .route("/assets/app.js", get(layout::js))
        .layer(axum::middleware::from_fn_with_state(ui.clone(), guard::check))
        .with_state(ui)
}

/// Runs store work on the blocking pool; its failure becomes the request's error page.
pub(crate) async fn blocking<T: Send + 'static>(
    ui: &Shared,
    work: impl FnOnce(&Ui) -> Result<T, Failure> + Send + 'static,
) -> Result<T, Failure> {
    let ui = ui.clone();
    match tokio::task::spawn_blocking(move || work(&ui)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failure::internal("the request's work stopped unexpectedly")),
    }
}

/// A request that could not be answered: its status and one line saying why.
#[derive(Debug)]
pub(crate) struct Failure {
    status: StatusCode,
    message: String,
}

impl Failure {
    pub(crate) fn not_found(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::NOT_FOUND, message: message.into() }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::BAD_REQUEST, message: message.into() }
    }

    pub(crate) fn internal(message: impl Into<String>) -> Failure {
        Failure { status: StatusCode::INTERNAL_SERVER_ERROR, message: message.into() }
    }
}

impl From<annal::Error> for Failure {
    fn from(err: annal::Error) -> Failure {
        let status = match err.kind() {
            annal::error::ErrorKind::NotFound => StatusCode::NOT_FOUND,
            annal::error::ErrorKind::BadInput => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Failure { status, message: annal::error::message(&err) }
    }
}

impl From<annal::error::ReadError> for Failure {
    fn from(err: annal::error::ReadError) -> Failure {
        Failure::from(annal::Error::from(err))
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let page = layout::shell(
            "Error",
            None,
            maud::html! {
                h1 { "Cannot show this" }
                p.failure { (self.message) }
                p { a href="/" { "All sessions" } }
            },
        );
        (self.status, Html(page.into_string())).into_response()
    }
}

/// The session named `name` in `snapshot`, or the request's 404.
pub(crate) fn session_info(snapshot: &annal::Snapshot, name: &str) -> Result<annal::SessionInfo, Failure> {
    snapshot.session(name)?.ok_or_else(|| Failure::not_found(format!("no session named {name:?}")))
}

/// Locks the catalog; a panic elsewhere leaves summaries that are still whole.
pub(crate) fn catalog(ui: &Ui) -> std::sync::MutexGuard<'_, catalog::Catalog> {
    ui.catalog.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks the rendered pages of "what the model saw"; a panic elsewhere leaves whole entries.
pub(crate) fn seen_cache(ui: &Ui) -> std::sync::MutexGuard<'_, seen::Cache> {
    ui.seen.lock().unwrap_or_else(PoisonError::into_inner)
}
