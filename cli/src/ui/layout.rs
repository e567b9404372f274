//! The page shell every page of `annal ui` shares, its embedded stylesheet and script, and the
//! links between pages (query strings built from any session name or entry id).

use axum::http::header;
use axum::response::IntoResponse;
use maud::{html, Markup, DOCTYPE};
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");

/// A whole page: title, navigation and `body`; `search` pre-fills the search box.
pub(crate) fn shell(title: &str, search: Option<&str>, body: Markup) -> Markup {
    page(title, search, None, body)
}

/// A page about one session: `body` beside the sidebar of sessions.
pub(crate) fn beside(title: &str, sidebar: Markup, body: Markup) -> Markup {
    page(title, None, Some(sidebar), body)
}

fn page(title: &str, search: Option<&str>, sidebar: Option<Markup>, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · annal" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "annal" }
                    form.search action="/search" method="get" role="search" {
                        input #q type="search" name="q" value=(search.unwrap_or(""))
                            placeholder="Search every original: words, identifiers, \"phrases\", role:user, tool:bash"
                            autocomplete="off" aria-label="Search";
                    }
                }
                @if let Some(sidebar) = sidebar {
                    div.frame { (sidebar) main { (body) } }
                } @else {
                    main { (body) }
                }
            }
        }
    }
}

/// A link with query pairs, each value percent-encoded.
pub(crate) fn link(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = path.to_owned();
    for (index, (key, value)) in pairs.iter().enumerate() {
        out.push(if index == 0 { '?' } else { '&' });
        out.push_str(key);
        out.push('=');
        out.extend(utf8_percent_encode(value, NON_ALPHANUMERIC));
    }
    out
}

/// The link to a record: its session's page that holds it, scrolled to it (browsers decode a
/// fragment's escapes before looking for the element with that id).
pub(crate) fn record_link(session: &str, source_order: u64, entry_id: &str) -> String {
    let page = link("/session", &[("name", session), ("at", &source_order.to_string())]);
    format!("{page}#{}", utf8_percent_encode(entry_id, NON_ALPHANUMERIC))
}

pub(crate) async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS)
}

pub(crate) async fn js() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], JS)
}
