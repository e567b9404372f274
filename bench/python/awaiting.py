"""What awaiting a session change costs, apart from the change: a call that does nothing, awaited
three ways on one event loop, the ways alternating round by round:

- `asyncio.to_thread` awaited plainly (what a caller that may be cancelled mid-change gets);
- the Agents SDK's own `_await_mutation` around `asyncio.to_thread`, as its `SQLiteSession`
  awaits an add, a pop or a clear to its end when the caller is cancelled;
- `annal.agents._finish`, which does the same for `AnnalSession`.

    pip install ./python -r python/requirements-test.txt
    python bench/python/awaiting.py [--calls N] [--rounds N]

Prints the mean time per call of each, per round, in microseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from agents.memory.session import _await_mutation

from annal.agents import _finish


def nothing() -> int:
    return 1


async def plain() -> int:
    return await asyncio.to_thread(nothing)


async def sdk() -> int:
    return await _await_mutation(asyncio.to_thread(nothing))


async def annal_finish() -> int:
    return await _finish(nothing)


async def measure(calls: int, rounds: int) -> dict:
    ways = {"asyncio.to_thread": plain, "SDK _await_mutation": sdk, "annal _finish": annal_finish}
    means: dict = {name: [] for name in ways}
    for way in ways.values():  # warm-up: threads started, code paths taken once
        for _ in range(100):
            await way()
    for _ in range(rounds):
        for name, way in ways.items():
            started = time.perf_counter()
            for _ in range(calls):
                assert await way() == 1
            means[name].append((time.perf_counter() - started) / calls * 1e6)
    return means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    means = asyncio.run(measure(args.calls, args.rounds))
    print(f"{args.calls} calls per round, {args.rounds} rounds; mean µs per call in each round (median of rounds)")
    for name, values in means.items():
        shown = ", ".join(f"{v:.0f}" for v in values)
        print(f"- {name}: {shown} (median {statistics.median(values):.0f})")


if __name__ == "__main__":
    main()
