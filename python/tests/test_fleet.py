"""annal.Fleet and AnnalSession(fleet=...) against a real nats-server with JetStream: two hosts'
stores sharing one Agents SDK session, publish and follow, servers that cannot be reached.

The server is ``ANNAL_NATS_SERVER``, else the pinned release the Rust tests install into
``target/nats``; a missing server fails these tests, it never skips them."""

from __future__ import annotations

import asyncio
import os
import pathlib
import socket
import subprocess
import threading
import time

import pytest

import annal
from annal.agents import AnnalSession
from annal.errors import StorageIoError

from conftest import WORLD_TEXT, text_record

REPO = pathlib.Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    """One nats-server with JetStream on a free loopback port, stopped after the test."""
    binary = os.environ.get("ANNAL_NATS_SERVER") or str(REPO / "target" / "nats" / "bin" / "nats-server")
    assert os.path.exists(binary), f"no nats-server at {binary}: set ANNAL_NATS_SERVER"
    port = _free_port()
    config = tmp_path / "nats.conf"
    config.write_text(f'listen: 127.0.0.1:{port}\njetstream {{\n  store_dir: "{tmp_path / "js"}"\n}}\n')
    process = subprocess.Popen([binary, "-c", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "nats-server did not come up"
            time.sleep(0.05)
    yield f"nats://127.0.0.1:{port}"
    process.kill()
    process.wait()


def _item(host: int, n: int) -> dict:
    return {"role": "user", "content": f"host {host}, turn {n}: {WORLD_TEXT[n % 5]}"}


def test_two_hosts_share_one_agents_session(server, tmp_path):
    fleet = annal.Fleet(server, replicas=1)
    stores = [annal.Store(str(tmp_path / f"host{h}.redb")) for h in range(2)]
    sessions = [AnnalSession(stores[h], "ticket 日本 🚀", fleet=fleet) for h in range(2)]

    def write(host: int) -> None:
        for n in range(8):
            asyncio.run(sessions[host].add_items([_item(host, n)]))

    threads = [threading.Thread(target=write, args=(h,)) for h in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seen = [asyncio.run(session.get_items()) for session in sessions]
    assert seen[0] == seen[1], "both hosts read the fleet's version"
    contents = [item["content"] for item in seen[0]]
    assert len(contents) == 16 and len(set(contents)) == 16, "every item once, none lost"
    for host in range(2):
        mine = [c for c in contents if c.startswith(f"host {host},")]
        assert mine == [_item(host, n)["content"] for n in range(8)], "each host's items in its order"

    # A pop on one host is what the other host reads next.
    popped = asyncio.run(sessions[0].pop_item())
    assert popped == seen[0][-1]
    assert asyncio.run(sessions[1].get_items()) == seen[0][:-1]
    asyncio.run(sessions[1].add_items([_item(1, 99)]))
    assert asyncio.run(sessions[0].get_items()) == seen[0][:-1] + [_item(1, 99)]
    for store in stores:
        assert store.verify()["problems"] == []
        store.close()


def test_publish_and_follow_between_stores(server, tmp_path):
    fleet = annal.Fleet(server, replicas=1)
    with annal.Store(str(tmp_path / "origin.redb")) as origin, annal.Store(str(tmp_path / "follower.redb")) as follower:
        records = [text_record(f"e{n}", "user" if n % 2 == 0 else "assistant", text) for n, text in enumerate(WORLD_TEXT)]
        origin.append("notes", records)
        assert fleet.publish(origin)["records"] == len(records)
        report = fleet.follow(follower)
        assert (report["records"], report["stopped"]) == (len(records), [])
        assert follower.records("notes") == origin.records("notes")
        assert follower.search("flaky")[0]["entryId"] == "e0", "the followed records are searchable"
        status = fleet.status(follower)
        assert [(row["session"], row["lag"], row["unpublished"]) for row in status] == [("notes", 0, 0)]


def test_servers_that_cannot_be_reached_raise_one_line_without_credentials():
    url = f"nats://alice:s3cret@127.0.0.1:{_free_port()}"
    with pytest.raises(StorageIoError) as caught:
        annal.Fleet(url, timeout_seconds=2)
    message = str(caught.value)
    assert "cannot reach nats://***@127.0.0.1" in message and "s3cret" not in message
    assert "\n" not in message
