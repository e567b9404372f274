"""One Store shared by threads, the interpreter lock released during calls, and a second
process writing to the same store file."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import annal
from conftest import WORLD_TEXT, noise, text_record


def append_at_end(store, session: str, record: dict) -> None:
    """Appends at the position read, reading again when another writer got there first."""
    while True:
        at = (store.session(session) or {"records": 0})["records"]
        try:
            store.append(session, [record], expected_next=at)
            return
        except annal.ConflictError:
            continue


def test_threads_share_one_store(store):
    errors = []
    per_thread, threads = 40, 8

    def writer(t: int) -> None:
        try:
            for i in range(per_thread):
                store.append(f"own-{t}", [text_record(f"own-{t}-{i}", "user", f"{WORLD_TEXT[i % 5]} {t}/{i}")])
                # Everyone appends to one shared session too, at the position they read.
                append_at_end(store, "shared", text_record(f"sh-{t}-{i}", "user", f"t{t} i{i}"))
                if i % 10 == 0:
                    store.search(f"own-{t}-{i}", limit=1)
                    store.project(f"own-{t}", 16_384, 2_048)
        except Exception as err:  # surfaced below, with the thread's number
            errors.append((t, err))

    running = [threading.Thread(target=writer, args=(t,)) for t in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    assert errors == []
    assert store.session("shared")["records"] == per_thread * threads
    ids = [r["entryId"] for r in store.records("shared")]
    assert len(set(ids)) == per_thread * threads
    for t in range(threads):
        assert store.session(f"own-{t}")["records"] == per_thread
    assert store.verify()["ok"]
    hits = store.search('"t3 i39"')
    assert [h["entryId"] for h in hits] == ["sh-3-39"]


def test_calls_release_the_interpreter_lock(store):
    # Enough stored that verifying it takes a while.
    for batch in range(40):
        store.append("big", [text_record(f"b{batch}-{i}", "user", noise(batch * 100 + i, 400)) for i in range(50)])
    counter = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counter[0] += 1

    thread = threading.Thread(target=count)
    thread.start()
    try:
        before = counter[0]
        report = store.verify()
        during = counter[0] - before
    finally:
        stop.set()
        thread.join()
    assert report["records"] == 2_000
    # Holding the lock through the call, the counting thread could not have run at all.
    assert during > 1_000, f"the other thread counted only {during} while verify ran"


SECOND_PROCESS = textwrap.dedent(
    """
    import sys
    import annal
    with annal.Store(sys.argv[1]) as store:
        for i in range(20):
            at = (store.session("shared") or {"records": 0})["records"]
            while True:
                try:
                    store.append("shared", [{"entryId": f"p2-{i}", "role": "assistant",
                        "blocks": [{"type": "text", "text": f"from the other process {i} 日本"}]}], expected_next=at)
                    break
                except annal.ConflictError:
                    at = store.session("shared")["records"]
    print("done")
    """
)


def test_a_second_process_writes_to_the_same_store(store):
    child = subprocess.Popen(
        [sys.executable, "-c", SECOND_PROCESS, store.path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    for i in range(20):
        append_at_end(store, "shared", text_record(f"p1-{i}", "user", f"from this process {i}"))
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.strip() == "done"
    ids = {r["entryId"] for r in store.records("shared")}
    assert ids == {f"p1-{i}" for i in range(20)} | {f"p2-{i}" for i in range(20)}
    # What the other process appended is searchable here.
    hits = store.search('"other process 19"')
    assert [h["entryId"] for h in hits] == ["p2-19"]
    assert store.verify()["ok"]
