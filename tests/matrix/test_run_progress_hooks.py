"""`readbench eval`'s progress hooks count a sample only when it ended without an error."""

from __future__ import annotations

import asyncio
import io
from types import SimpleNamespace

from readbench.base.progress import ProgressReporter
from readbench.run.progress import _ACTIVE, _ProgressHooks


def test_a_cancelled_or_failed_sample_is_not_counted_done():
    # issue 27 probe: after Ctrl-C the cancelled samples were counted, so the bar said
    # "stock × off done (2/2 samples)" and "finished: 4/8" for arms with no result at all
    reporter = ProgressReporter("readbench eval", "samples", [("stock × off", 2)], stream=io.StringIO(), mode="none")
    _ACTIVE.update(reporter=reporter, rows={}, multi_model=False)
    try:
        hooks = _ProgressHooks()
        spec = SimpleNamespace(task_args={"variant": "stock", "dcp": "off"}, model="readbench/sim-mixed")
        asyncio.run(hooks.on_task_start(SimpleNamespace(eval_id="e1", spec=spec)))

        def end(sample_id, error):
            sample = SimpleNamespace(id=sample_id, epoch=1, error=error)
            asyncio.run(hooks.on_sample_end(SimpleNamespace(eval_id="e1", sample=sample)))

        end("t/0", "CancelledError")
        end("t/1", None)
        assert (reporter.count("stock × off"), reporter.count()) == (1, 1)
        end("t/0", None)  # the retry finished it
        assert reporter.count() == 2
    finally:
        _ACTIVE.update(reporter=None, rows={})
