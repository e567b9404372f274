"""What the search index kept up to date in the same process costs an append: the p50 of
`Store.append_items` for a two-item turn, on a store shared between processes and one opened
alone, with the index kept up to date as records land (`index_eagerly=True`, the default) and
without it. Each store is fresh, in one folder on the disk the caller names.

    pip install ./python                 # a release build of the package
    python bench/python/append_items.py [--folder DIR] [--calls N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import annal

TURN = [
    {"role": "user", "content": "please fix the failing test in src/app.py; 東京 ☕ e\u0301 " * 3},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done " * 50}]},
]


def p50_ms(path: Path, calls: int, **options) -> float:
    texts = [json.dumps(item, ensure_ascii=False) for item in TURN]
    times = []
    with annal.Store(path, **options) as store:
        for n in range(calls):
            started = time.perf_counter()
            store.append_items("turns", texts, [f"t{n}a", f"t{n}b"], expected_next=2 * n)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, help="where the stores go (default: a temporary folder)")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as scratch:
        print("| sharing | index kept up to date | append_items p50 ms |")
        print("|---|---|--:|")
        for sharing in ("processes", "exclusive"):
            for eager in (True, False):
                path = Path(scratch) / f"{sharing}-{eager}.redb"
                ms = p50_ms(path, args.calls, sharing=sharing, index_eagerly=eager)
                print(f"| {sharing} | {'yes' if eager else 'no'} | {ms:.3f} |")


if __name__ == "__main__":
    main()
