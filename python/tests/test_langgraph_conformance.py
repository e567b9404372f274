"""LangGraph's own conformance suite for checkpointers (``langgraph-checkpoint-conformance``)
run against :class:`annal.langgraph.AnnalSaver`: every base and extended capability must be
detected and pass, the suite's full level (``report.passed_all()``)."""

from __future__ import annotations

import asyncio
import os

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES
from langgraph.checkpoint.conformance.report import ProgressCallbacks

from annal.langgraph import AnnalSaver


def test_conformance_full_level(tmp_path, capsys):
    stores = iter(range(1_000))

    @checkpointer_test(name="AnnalSaver")
    async def annal_saver():
        # A fresh store for each capability's suite, as the suite asks of a factory.
        with AnnalSaver(os.path.join(tmp_path, f"store-{next(stores)}.redb")) as saver:
            yield saver

    report = asyncio.run(validate(annal_saver, progress=ProgressCallbacks.verbose()))
    report.print_report()
    detected = {name for name, result in report.results.items() if result.detected}
    assert detected == {capability.value for capability in ALL_CAPABILITIES}
    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    assert report.passed_all(), report.to_dict()
    assert report.conformance_level() == "FULL"
