//! Who may read the store through `annal ui`: requests to this loopback port by name, from no
//! other origin, carrying the token printed with the URL (then the cookie of this server that it
//! is exchanged for, `key.rs`); and the headers that keep a page from loading or running
//! anything but its own script.
//!
//! The `Host` check refuses DNS rebinding (a page on another site whose name resolves to
//! 127.0.0.1); the `Origin` and `Sec-Fetch-Site` checks refuse other sites' requests; the token
//! refuses other local users and programs that can reach the port.

use std::fmt::Write as _;

use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::key::now_secs;
use super::Shared;

/// Only this page's own script, styles and images; no frames, no plugins, no form posts away.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// 32 random hex digits.
pub(crate) fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| anyhow::anyhow!("cannot draw a random token: {err}"))?;
    Ok(bytes.iter().fold(String::with_capacity(32), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    }))
}

/// Refuses what may not read; a request with the token in its query gets the cookie and is
/// sent on to the same path without it, so the token does not stay in the address bar.
pub(crate) async fn check(State(ui): State<Shared>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !host_is_ours(headers, ui.port) {
        return refuse(StatusCode::MISDIRECTED_REQUEST, "this server answers only 127.0.0.1 and localhost");
    }
    if !origin_is_ours(headers, ui.port) {
        return refuse(StatusCode::FORBIDDEN, "requests from other sites are refused");
    }
    let query_token = request
        .uri()
        .query()
        .and_then(|query| query.split('&').find_map(|pair| pair.strip_prefix("token=")).map(str::to_owned));
    if let Some(given) = query_token {
        if !same(&given, &ui.token) {
            return refuse(StatusCode::FORBIDDEN, "the token in this URL is not this server's");
        }
        let mut response = Redirect::to(&without_token(request.uri())).into_response();
        if let Ok(value) = HeaderValue::from_str(&ui.key.set_cookie(now_secs())) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        return secured(response);
    }
    if !ui.key.accepts_request(headers, now_secs()) {
        return refuse(
            StatusCode::FORBIDDEN,
            "open the URL `annal ui` printed; it carries the token (a cookie of this server lasts 12 hours)",
        );
    }
    secured(super::reveal::visible_answer(next.run(request).await).await)
}

fn refuse(status: StatusCode, why: &'static str) -> Response {
    secured((status, why).into_response())
}

/// The headers every answer carries.
fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn host_is_ours(headers: &HeaderMap, port: u16) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else { return false };
    let port = port.to_string();
    ["127.0.0.1", "localhost"].iter().any(|name| host.strip_prefix(name) == Some(&format!(":{port}")))
}

/// A request from a page of this server, or from no page (typed, a bookmark); never another site.
fn origin_is_ours(headers: &HeaderMap, port: u16) -> bool {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ours = [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")];
        if !origin.to_str().is_ok_and(|o| ours.iter().any(|ours| ours == o)) {
            return false;
        }
    }
    !matches!(headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()), Some("cross-site" | "same-site"))
}

/// Compares without stopping at the first difference, so timing says nothing of the token.
fn same(given: &str, token: &str) -> bool {
    given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// The request's path and query without its `token` pair.
fn without_token(uri: &axum::http::Uri) -> String {
    let rest: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("token="))
        .collect();
    if rest.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{}", uri.path(), rest.join("&"))
    }
}
