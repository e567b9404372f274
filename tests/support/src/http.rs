//! Plain HTTP/1.1 requests to a local server with exactly the headers a caller chooses (a
//! foreign `Host` or `Origin` included), and their answers: what `annal ui`'s tests and its
//! benchmark send.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The first header of that (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The port and token in the line `annal ui` prints first
/// (`annal ui: http://127.0.0.1:PORT/?token=TOKEN`).
pub fn ui_address(line: &str) -> Option<(u16, String)> {
    let rest = line.trim().strip_prefix("annal ui: http://127.0.0.1:")?;
    let (port, token) = rest.split_once("/?token=")?;
    Some((port.parse().ok()?, token.to_owned()))
}

/// The cookie (`NAME=VALUE`) `annal ui` on `port` exchanges `token` for, as a browser gets it
/// when it opens the printed URL.
///
/// # Errors
/// When the server cannot be reached, or answers without a cookie.
pub fn ui_cookie(port: u16, token: &str) -> std::io::Result<String> {
    let host = format!("127.0.0.1:{port}");
    let answer = request(port, "GET", &format!("/?token={token}"), &[("Host", &host)])?;
    answer.header("set-cookie").and_then(|set| set.split(';').next()).map(str::to_owned).ok_or_else(|| {
        std::io::Error::other(format!("no cookie for the token: {} {}", answer.status, answer.body))
    })
}

/// `METHOD path` to `127.0.0.1:port` with exactly these headers and `Connection: close`.
///
/// # Errors
/// When the server cannot be reached or its answer read, or its body is not UTF-8.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)]) -> std::io::Result<Answer> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut request = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw)
}

fn parse(raw: &[u8]) -> std::io::Result<Answer> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]);
    let body = raw.get(split + 4..).unwrap_or_default();
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or_default();
    let status = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_vec() };
    let body =
        String::from_utf8(body).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    Ok(Answer { status, headers, body })
}

/// The body of a chunked answer: each chunk's size line, then its bytes.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            std::str::from_utf8(&body[..end]).ok().and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let rest = &body[end + 2..];
        let Some(size) = size.filter(|&size| size > 0 && rest.len() >= size) else { break };
        out.extend_from_slice(&rest[..size]);
        body = rest[size..].strip_prefix(b"\r\n").unwrap_or(&rest[size..]);
    }
    out
}
