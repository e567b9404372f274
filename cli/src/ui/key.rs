//! The cookie the printed token is exchanged for: named after the server's port, its value a
//! keyed hash of that port and when it was issued under a key only this process holds, and good
//! for [`LIFETIME_SECS`].
//!
//! Browsers send a cookie of 127.0.0.1 to every port of it: a name without the port made two
//! `annal ui` servers overwrite each other's (the first then refused its own page), and a value
//! equal to the token handed the whole store to any server the browser visited on another port
//! for as long as the process ran. Now each server has its own name, the value is not the
//! token (nothing reads the token back out of it) and another server's cookie is no key here;
//! and one that leaks is refused once its lifetime is over, whatever the browser does with it.

use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::header::{self, HeaderMap};

/// How long a cookie opens the store: a working day. Opening the printed URL again issues a
/// new one.
pub(crate) const LIFETIME_SECS: u64 = 12 * 60 * 60;

/// The blake3 key-derivation context of the cookie key: this use and no other.
const CONTEXT: &str = "annal ui 2026-12-07 cookie of one server's port";

/// Issues and checks the cookies of one server.
#[derive(Debug)]
pub(crate) struct CookieKey {
    key: [u8; 32],
    port: u16,
}

impl CookieKey {
    /// The key of the server on `port` whose secret is `token`.
    pub(crate) fn new(token: &str, port: u16) -> CookieKey {
        CookieKey { key: blake3::derive_key(CONTEXT, token.as_bytes()), port }
    }

    /// `annal_ui_PORT`: one name per server, so servers on other ports keep theirs.
    pub(crate) fn name(&self) -> String {
        format!("annal_ui_{}", self.port)
    }

    /// The `Set-Cookie` header of a cookie issued at `now_secs`.
    pub(crate) fn set_cookie(&self, now_secs: u64) -> String {
        format!(
            "{}={}; Path=/; Max-Age={LIFETIME_SECS}; HttpOnly; SameSite=Strict",
            self.name(),
            self.value(now_secs)
        )
    }

    /// `ISSUED.MAC`: the second it was issued, and the keyed hash of the port and that second.
    fn value(&self, issued_secs: u64) -> String {
        format!("{issued_secs}.{}", self.mac(issued_secs).to_hex())
    }

    fn mac(&self, issued_secs: u64) -> blake3::Hash {
        blake3::keyed_hash(&self.key, format!("{}\n{issued_secs}", self.port).as_bytes())
    }

    /// Whether `value` is a cookie this server issued less than [`LIFETIME_SECS`] before
    /// `now_secs`.
    pub(crate) fn accepts(&self, value: &str, now_secs: u64) -> bool {
        let Some((issued, mac)) = value.split_once('.') else { return false };
        let (Ok(issued_secs), Ok(mac)) = (issued.parse::<u64>(), blake3::Hash::from_hex(mac)) else {
            return false;
        };
        // blake3's Hash compares in constant time: timing says nothing of the right value.
        let genuine = mac == self.mac(issued_secs);
        // A minute of slack for a clock set back between issuing and checking.
        let current = issued_secs <= now_secs.saturating_add(60)
            && now_secs < issued_secs.saturating_add(LIFETIME_SECS);
        genuine && current
    }

    /// Whether a request carries a cookie of this server that is still good.
    pub(crate) fn accepts_request(&self, headers: &HeaderMap, now_secs: u64) -> bool {
        let name = self.name();
        headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).any(|cookies| {
            cookies.split(';').any(|pair| {
                pair.trim()
                    .strip_prefix(name.as_str())
                    .and_then(|rest| rest.strip_prefix('='))
                    .is_some_and(|given| self.accepts(given, now_secs))
            })
        })
    }
}

/// Seconds since the Unix epoch by the system clock (0 if it is set before 1970).
pub(crate) fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef";
    const NOW: u64 = 1_796_000_000;

    fn value_of(set_cookie: &str) -> &str {
        let pair = set_cookie.split(';').next().unwrap_or_default();
        pair.split_once('=').map_or("", |(_, value)| value)
    }

    #[test]
    fn a_cookie_is_good_on_its_own_port_for_its_lifetime() {
        let key = CookieKey::new(TOKEN, 4321);
        let set = key.set_cookie(NOW);
        assert!(set.starts_with("annal_ui_4321=") && !set.contains(TOKEN), "{set}");
        assert!(set.contains("Max-Age=43200") && set.contains("HttpOnly") && set.contains("SameSite=Strict"));
        let value = value_of(&set);
        assert!(key.accepts(value, NOW));
        assert!(key.accepts(value, NOW + LIFETIME_SECS - 1));
        assert!(!key.accepts(value, NOW + LIFETIME_SECS), "expired");
        assert!(!key.accepts(value, NOW - 3_600), "issued in the future");
    }

    #[test]
    fn another_port_another_secret_or_an_edited_value_is_refused() {
        let key = CookieKey::new(TOKEN, 4321);
        let value = key.set_cookie(NOW);
        let value = value_of(&value);
        assert!(!CookieKey::new(TOKEN, 4322).accepts(value, NOW), "taken to another port");
        assert!(!CookieKey::new("fedcba9876543210fedcba9876543210", 4321).accepts(value, NOW));
        // A later issue time with the same hash (to stretch its life), garbage, the token itself.
        let (_, mac) = value.split_once('.').unwrap_or_default();
        for forged in
            [format!("{}.{mac}", NOW + 100), "x.y".into(), TOKEN.into(), String::new(), "日本.🦀".into()]
        {
            assert!(!key.accepts(&forged, NOW + 200), "{forged}");
        }
    }

    #[test]
    fn the_request_cookie_is_found_among_others_by_its_name() {
        let key = CookieKey::new(TOKEN, 4321);
        let ours = key.set_cookie(NOW);
        let other = CookieKey::new("fedcba9876543210fedcba9876543210", 8080).set_cookie(NOW);
        let header = format!("annal_ui=old; {}; {}", value_of_pair(&other), value_of_pair(&ours));
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, header.parse().unwrap_or_else(|e| panic!("{e}")));
        assert!(key.accepts_request(&headers, NOW));
        assert!(!CookieKey::new(TOKEN, 9999).accepts_request(&headers, NOW));
    }

    fn value_of_pair(set_cookie: &str) -> &str {
        set_cookie.split(';').next().unwrap_or_default()
    }
}
