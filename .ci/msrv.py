#!/usr/bin/env python3
"""The minimum supported Rust version (the workspace's `rust-version`) checked without that
toolchain: no package the build resolves for this platform declares a newer `rust-version`.
Our own code is held to it by clippy's `incompatible_msrv` lint, which reads the same field."""
import json
import subprocess
import sys


def version(text):
    return tuple(int(part) for part in text.split("."))


host = subprocess.run(["rustc", "-vV"], check=True, capture_output=True, text=True).stdout
platform = next(line.split(": ", 1)[1] for line in host.splitlines() if line.startswith("host: "))
metadata = json.loads(
    subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", platform],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
)
members = set(metadata["workspace_members"])
ours = {p["rust_version"] for p in metadata["packages"] if p["id"] in members}
if len(ours) != 1 or None in ours:
    sys.exit(f"msrv: the workspace's members declare rust-version {sorted(map(str, ours))}, not one")
msrv = ours.pop()
used = {node["id"] for node in metadata["resolve"]["nodes"]}
newer = sorted(
    f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
    for p in metadata["packages"]
    if p["id"] in used and p.get("rust_version") and version(p["rust_version"]) > version(msrv)
)
if newer:
    sys.exit(f"msrv: rust-version is {msrv}, but:\n  " + "\n  ".join(newer))
print(f"msrv: every one of {len(used)} packages builds with Rust {msrv} by its rust-version")
