//! A TCP proxy in front of one NATS server, for the fleet's fault tests: it cuts a client off
//! after a publish, refuses every connection, swallows the replies (acknowledgements lost on a
//! connection that stays open), or delays them (a slow link), until it is let through again.

use std::net::TcpListener;
use std::time::Duration;

/// The longest a cut after a publish waits for the server's acknowledgement to drop.
const ACK_WAIT: Duration = Duration::from_secs(30);

/// A TCP proxy in front of one server, for cutting a client off: after the next publish with
/// headers passes (the server gets it, the client never sees its acknowledgement), or
/// entirely, until it is let through again.
#[derive(Debug)]
pub struct Proxy {
    /// The port clients connect to.
    pub port: u16,
    state: std::sync::Arc<ProxyState>,
}

#[derive(Debug, Default)]
struct ProxyState {
    /// 0 passes, 1 cuts after the next publish with headers, 2 refuses everything, 3 swallows
    /// replies from the next publish with headers on.
    mode: std::sync::atomic::AtomicU8,
    cuts: std::sync::atomic::AtomicUsize,
    /// Replies to clients are dropped, connections kept: acknowledgements are lost.
    swallowing: std::sync::atomic::AtomicBool,
    /// Publishes with headers that reached the server while replies were swallowed.
    swallowed_publishes: std::sync::atomic::AtomicUsize,
    /// How long each read from the server waits before it goes on to the client, in ms.
    delay_ms: std::sync::atomic::AtomicU64,
    open: std::sync::Mutex<Vec<std::net::TcpStream>>,
}

impl ProxyState {
    /// Takes a one-shot `mode` (back to passing): true for the one publish that finds it set.
    fn take_mode(&self, mode: u8) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        self.mode.compare_exchange(mode, 0, SeqCst, SeqCst).is_ok()
    }
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`.
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let state = std::sync::Arc::new(ProxyState::default());
        let shared = std::sync::Arc::clone(&state);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if shared.mode.load(std::sync::atomic::Ordering::SeqCst) == 2 {
                    drop(client);
                    continue;
                }
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else { continue };
                forward(&shared, client, server);
            }
        });
        Proxy { port, state }
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Cuts the connection right after the next publish with headers reaches the server.
    pub fn cut_after_next_publish(&self) {
        self.state.mode.store(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Cuts every connection and refuses new ones (`true`), or lets them through again.
    pub fn set_down(&self, down: bool) {
        self.state.mode.store(if down { 2 } else { 0 }, std::sync::atomic::Ordering::SeqCst);
        if down {
            let mut open = self.state.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for stream in open.drain(..) {
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }

    /// From the next publish with headers on, the server gets what clients send and clients
    /// get nothing back, on connections that stay open: every acknowledgement is lost.
    pub fn swallow_replies_after_next_publish(&self) {
        self.state.mode.store(3, std::sync::atomic::Ordering::SeqCst);
    }

    /// Lets replies through again (what was swallowed stays lost).
    pub fn let_replies_through(&self) {
        self.state.mode.store(0, std::sync::atomic::Ordering::SeqCst);
        self.state.swallowing.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Holds everything the server sends for `delay` before the client gets it (zero: no
    /// more): requests still answered, each answer that much later.
    pub fn delay_replies(&self, delay: Duration) {
        let ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self.state.delay_ms.store(ms, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many publishes with headers reached the server while replies were swallowed.
    pub fn swallowed_publishes(&self) -> usize {
        self.state.swallowed_publishes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many connections it cut after a publish.
    pub fn cuts(&self) -> usize {
        self.state.cuts.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn forward(state: &std::sync::Arc<ProxyState>, client: std::net::TcpStream, server: std::net::TcpStream) {
    use std::io::{Read, Write};
    let (Ok(client_back), Ok(server_back)) = (client.try_clone(), server.try_clone()) else { return };
    {
        let mut open = state.open.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for stream in [&client, &server] {
            if let Ok(stream) = stream.try_clone() {
                open.push(stream);
            }
        }
    }
    let upward = std::sync::Arc::clone(state);
    let dropping = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let dropped = std::sync::Arc::clone(&dropping);
    // The downward half tells the upward half when it has dropped a message for the client
    // (the acknowledgement), so the cut waits on that rather than on a guess of the time.
    let (reply_dropped, reply_was_dropped) = std::sync::mpsc::channel::<()>();
    let (mut from_client, mut to_server) = (client, server);
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 << 10];
        while let Ok(n) = from_client.read(&mut buffer) {
            if n == 0 {
                break;
            }
            let publish = buffer[..n].windows(5).any(|w| w == b"HPUB ");
            let swallow = publish && upward.take_mode(3);
            if swallow {
                upward.swallowing.store(true, std::sync::atomic::Ordering::SeqCst);
            }
            if publish && upward.swallowing.load(std::sync::atomic::Ordering::SeqCst) {
                upward.swallowed_publishes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            let cut = publish && upward.take_mode(1);
            if cut {
                // The server gets the message; its acknowledgement is dropped on the way back,
                // and then the connection is cut (at the latest after ACK_WAIT, should no
                // acknowledgement come: the client sees none either way).
                dropping.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = to_server.write_all(&buffer[..n]);
                let _ = to_server.flush();
                let _ = reply_was_dropped.recv_timeout(ACK_WAIT);
                let _ = from_client.shutdown(std::net::Shutdown::Both);
                upward.cuts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                break;
            }
            if to_server.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        let _ = to_server.shutdown(std::net::Shutdown::Both);
    });
    let (mut from_server, mut to_client) = (server_back, client_back);
    let downward = std::sync::Arc::clone(state);
    std::thread::spawn(move || {
        let mut buffer = vec![0; 64 << 10];
        while let Ok(n) = from_server.read(&mut buffer) {
            if n == 0 {
                break;
            }
            let delay_ms = downward.delay_ms.load(std::sync::atomic::Ordering::SeqCst);
            if delay_ms > 0 {
                std::thread::sleep(Duration::from_millis(delay_ms));
            }
            let swallowing = downward.swallowing.load(std::sync::atomic::Ordering::SeqCst);
            if dropped.load(std::sync::atomic::Ordering::SeqCst) {
                // `MSG ` (or `HMSG `): a message to one of the client's inboxes, as a reply is.
                if buffer[..n].windows(4).any(|w| w == b"MSG ") {
                    let _ = reply_dropped.send(());
                }
            } else if !swallowing && to_client.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        let _ = to_client.shutdown(std::net::Shutdown::Both);
    });
}
