//! The sessions beside a session's pages: the list's newest first, the one being read marked.
//! It stays in place while the page scrolls (a column of its own on a laptop) and folds behind
//! one line on a phone, opened by a checkbox's label, so it needs neither script nor inline style.

use maud::{html, Markup};

use super::catalog::Summary;
use super::layout::link;
use super::{catalog, Failure, Ui};
use crate::output::{count, cut};

/// Sessions the sidebar lists at most (the newest; the one being read is always among them):
/// the whole list is one link away.
const SIDEBAR_SESSIONS_MAX: usize = 100;

/// The sidebar for a page of the session named `current`.
pub(crate) fn sidebar(ui: &Ui, current: &str) -> Result<Markup, Failure> {
    let all = catalog(ui).refresh(&ui.annal)?;
    let mut shown: Vec<&Summary> = all.iter().take(SIDEBAR_SESSIONS_MAX).collect();
    if !shown.iter().any(|s| s.name == current) {
        shown.extend(all.iter().find(|s| s.name == current));
    }
    Ok(html! {
        input #sidebar-open.sidebar-toggle type="checkbox" aria-controls="sidebar";
        label.sidebar-label for="sidebar-open" { "Sessions (" (count(all.len() as u64)) ")" }
        nav #sidebar.sidebar aria-label="Sessions" {
            ol {
                @for s in &shown {
                    li {
                        a href=(link("/session", &[("name", &s.name)])) aria-current=[(s.name == current).then_some("page")] {
                            @if s.first_request.is_empty() { (cut(&s.name, 90)) } @else { (cut(&s.first_request, 90)) }
                        }
                        small {
                            @if !s.agent.is_empty() { (s.agent) " · " }
                            (count(s.records)) " records"
                            @if let Some(last) = &s.last_time { " · " time datetime=(last) data-relative="short" { (last.get(..10).unwrap_or(last)) } }
                        }
                    }
                }
            }
            p { a href="/" { "All " (count(all.len() as u64)) " sessions" } }
        }
    })
}
