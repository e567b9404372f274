//! `annal ui` as a real process on a sandbox's store, and plain HTTP/1.1 requests to it with
//! exactly the headers a test chooses (a foreign `Host` or `Origin` included).

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Stdio};

pub(crate) use annal_support::http::Answer;

use super::Sandbox;

/// A running `annal ui`; stopped when dropped.
pub(crate) struct Server {
    child: Child,
    /// Kept open: the server may print more after its URL.
    _stdout: BufReader<ChildStdout>,
    pub(crate) port: u16,
    pub(crate) token: String,
    /// `annal_ui_PORT=VALUE`, as the server set it for the token.
    cookie: String,
}

impl Server {
    /// Starts `annal ui --no-open --port 0` and reads the URL it prints.
    pub(crate) fn start(sandbox: &Sandbox) -> Server {
        let mut child = sandbox
            .command(&["ui", "--no-open", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("annal ui starts");
        let stdout = child.stdout.take().expect("a stdout pipe");
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        stdout.read_line(&mut line).expect("annal ui prints its URL");
        let (port, token) =
            annal_support::http::ui_address(&line).unwrap_or_else(|| panic!("no URL in {line:?}"));
        let cookie = annal_support::http::ui_cookie(port, &token).expect("a cookie for the token");
        Server { child, _stdout: stdout, port, token, cookie }
    }

    /// The URL `annal ui` printed.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/?token={}", self.port, self.token)
    }

    /// The cookie the token is exchanged for, as a header.
    pub(crate) fn cookie(&self) -> (&'static str, String) {
        ("Cookie", self.cookie.clone())
    }

    /// `GET path` with the right `Host` and the token's cookie.
    pub(crate) fn get(&self, path: &str) -> Answer {
        let host = format!("127.0.0.1:{}", self.port);
        let cookie = self.cookie();
        self.request("GET", path, &[("Host", host.as_str()), (cookie.0, cookie.1.as_str())])
    }

    /// A request with exactly these headers (and `Connection: close`).
    pub(crate) fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
        annal_support::http::request(self.port, method, path, headers).expect("the server answers")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A path with query pairs, each value percent-encoded as the pages encode theirs.
pub(crate) fn path_of(path: &str, pairs: &[(&str, &str)]) -> String {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    let query: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", utf8_percent_encode(value, NON_ALPHANUMERIC)))
        .collect();
    format!("{path}?{}", query.join("&"))
}
