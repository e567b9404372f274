//! The last step of every page, fragment and text download: format characters that would change
//! how the page reads without showing (a bidi override in a file name, a zero-width space in a
//! session name, tag characters) are written out as `⟨U+202E⟩` (`annal::text::visible_format`).
//!
//! Templates escape what could run; this shows what could mislead. Doing it to the finished
//! answer rather than at each place text is put into a page means a place added later cannot
//! miss it: session names, tool names, targets, snippets, the search box and titles alike. The
//! pages' own text holds no format character, so nothing of the page's making changes.

use axum::body::Body;
use axum::http::header::{self, HeaderMap};
use axum::response::{IntoResponse, Response};
use std::borrow::Cow;

/// `response` with the format characters of its text shown; other answers (the event stream,
/// the stylesheet and script) are passed on untouched.
pub(crate) async fn visible_answer(response: Response) -> Response {
    if !is_text(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // Pages are whole strings already: collecting the body copies nothing that was streaming.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return super::Failure::internal("the page could not be read back to finish it").into_response();
    };
    let text = String::from_utf8_lossy(&bytes);
    let body = match annal::text::visible_format(&text) {
        Cow::Borrowed(_) => Body::from(bytes),
        Cow::Owned(shown) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(shown)
        }
    };
    Response::from_parts(parts, body)
}

fn is_text(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|kind| kind.to_str().ok())
        .is_some_and(|kind| kind.starts_with("text/html") || kind.starts_with("text/markdown"))
}
