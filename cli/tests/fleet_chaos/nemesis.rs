//! The nemesis: faults at random moments drawn from the run's seed. A server killed with
//! SIGKILL and restarted (any one: the stream's leader, the meta leader, or another), a server
//! paused with SIGSTOP past the election timeout and resumed, one host partitioned from every
//! server, one server cut off from the other two with one host that reaches only it (a
//! minority partition), and one host's acknowledgements lost on a connection that stays open. (Clients
//! killed mid-append are the process writer's own.) After the run, `heal` undoes every fault.

use std::time::{Duration, Instant};

use annal_support::nats::{Cluster, Proxy};
use annal_support::rng::Rng;

use crate::history::History;

/// The proxies of one host, one in front of each server.
pub(crate) struct HostLinks {
    pub(crate) proxies: Vec<Proxy>,
}

impl HostLinks {
    pub(crate) fn start(cluster: &Cluster) -> HostLinks {
        HostLinks { proxies: cluster.nodes.iter().map(|node| Proxy::start(node.port)).collect() }
    }

    pub(crate) fn urls(&self) -> String {
        self.proxies.iter().map(Proxy::url).collect::<Vec<_>>().join(",")
    }
}

/// Runs faults until `until`, one at a time: a fault, its duration, and a quiet spell.
pub(crate) fn run(
    cluster: &mut Cluster,
    hosts: &[HostLinks],
    rng: &mut Rng,
    history: &History,
    until: Instant,
) {
    while Instant::now() < until {
        pause(rng.between(800, 2500));
        let fault_ms = rng.between(1000, 6000);
        match rng.below(6) {
            0 => {
                let index = rng.index(cluster.nodes.len());
                cluster.kill(index);
                history.fault("server killed (SIGKILL) and restarted");
                pause(fault_ms);
                cluster.restart(index);
            }
            1 => {
                let Some(index) = cluster.meta_leader() else { continue };
                cluster.kill(index);
                history.fault("meta leader killed (SIGKILL) and restarted");
                pause(fault_ms);
                cluster.restart(index);
            }
            2 => {
                let index = rng.index(cluster.nodes.len());
                cluster.pause(index, true);
                history.fault("server paused (SIGSTOP) past the election timeout");
                // Past the election timeout (about 4 s here) whatever the draw.
                pause(fault_ms.max(4500));
                cluster.pause(index, false);
            }
            3 => {
                let host = &hosts[rng.index(hosts.len())];
                for proxy in &host.proxies {
                    proxy.set_down(true);
                }
                history.fault("host partitioned from every server");
                pause(fault_ms);
                for proxy in &host.proxies {
                    proxy.set_down(false);
                }
            }
            4 => {
                // The host's client reaches only the cut-off server: its publishes go to a
                // server that cannot commit them.
                let (index, host) = (rng.index(cluster.nodes.len()), &hosts[rng.index(hosts.len())]);
                cluster.isolate(index, true);
                for (_, proxy) in host.proxies.iter().enumerate().filter(|(at, _)| *at != index) {
                    proxy.set_down(true);
                }
                history.fault("server cut off from the others, one host reaching only it");
                pause(fault_ms.max(4500));
                cluster.isolate(index, false);
                for proxy in &host.proxies {
                    proxy.set_down(false);
                }
            }
            _ => {
                let host = &hosts[rng.index(hosts.len())];
                for proxy in &host.proxies {
                    proxy.swallow_replies_after_next_publish();
                }
                history.fault("host's acknowledgements lost (replies dropped)");
                pause(fault_ms);
                for proxy in &host.proxies {
                    proxy.let_replies_through();
                }
            }
        }
    }
}

/// Every fault undone: each server running and resumed, every proxy passing.
pub(crate) fn heal(cluster: &mut Cluster, hosts: &[HostLinks]) {
    for index in 0..cluster.nodes.len() {
        cluster.isolate(index, false);
        cluster.pause(index, false);
        if !cluster.nodes[index].is_running() {
            cluster.restart(index);
        }
    }
    for proxy in hosts.iter().flat_map(|host| &host.proxies) {
        proxy.set_down(false);
        proxy.let_replies_through();
    }
}

/// A fault's duration or the quiet between two: the schedule, not a wait for an outcome.
fn pause(ms: usize) {
    std::thread::sleep(Duration::from_millis(ms as u64));
}
