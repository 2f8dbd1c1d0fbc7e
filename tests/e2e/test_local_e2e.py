"""End to end on the local sandbox: corpus record -> setup -> pi loop -> sim model -> tools ->
checker -> metrics in the log. A small generated corpus keeps it offline and fast."""

from __future__ import annotations

from corpus_fixture import eval_ok, tiny_corpus_fixture
from inspect_ai.log import read_eval_log

from readbench.run import task as rb_task

tiny_corpus = tiny_corpus_fixture(own_cache=True)


def _run(tmp_path, model, **task_args):
    task = rb_task.read_strategies_task(sandbox_kind="local", **task_args)
    [log] = eval_ok(task, model, tmp_path / "logs")
    return read_eval_log(log.location)


def test_sim_solves_bugfix_and_question_under_stock(tiny_corpus):
    log = _run(tiny_corpus, "readbench/sim-diligent", variant="stock", dcp="off")
    scores = {s.id: s.scores["readbench"] for s in log.samples}
    assert scores["logs/bugfix/0"].value == 1.0, scores["logs/bugfix/0"].explanation
    assert scores["logs/locate/0"].value == 1.0, scores["logs/locate/0"].explanation
    meta = scores["logs/bugfix/0"].metadata
    assert meta["stop_reason"] == "solved"
    assert meta["edit_calls"] >= 1 and meta["read_calls"] >= 1
    bugfix = next(s for s in log.samples if s.id == "logs/bugfix/0")
    assert meta["turns"] == sum(m.role == "assistant" for m in bugfix.messages)
    assert meta["read_calls"] == sum(m.role == "tool" and m.function == "read" for m in bugfix.messages)
    assert 0.0 < meta["cache_read_ratio_anthropic-5m"] <= 1.0


def test_read_results_are_the_variants_bytes_untruncated(tiny_corpus):
    """Every read before the first edit equals the pure stock variant on the same file bytes,
    byte for byte, including results far over inspect's default 16 KiB tool-output cut."""
    from corpus_fixture import big_module

    from readbench.read import ReadSession, get_variant

    log = _run(tiny_corpus, "readbench/sim-pager", variant="stock", dcp="off")
    stock = get_variant("stock")
    data = {"logs/bugfix/0": big_module(bug=True).encode(), "logs/locate/0": big_module(bug=False).encode()}
    sizes = []
    for sample in log.samples:
        calls = {c.id: c.arguments for m in sample.messages if m.role == "assistant" for c in (m.tool_calls or [])}
        for message in sample.messages:
            if message.role == "tool" and message.function == "edit":
                break
            if message.role != "tool" or message.function != "read":
                continue
            args = calls[message.tool_call_id]
            if args["path"] != "calc.py":  # the sim's exploration reads of test files (readbench.sim.explore)
                assert args["path"].rsplit("/", 1)[-1].startswith("test")
                continue
            want = stock.read(data[sample.id], "calc.py", args.get("offset"), args.get("limit"),
                              call_id=None, session=ReadSession(), visible_call_ids=None)
            assert message.text == want.text
            assert message.metadata["readbench"]["variant"] == "stock"
            sizes.append(len(message.text.encode()))
    assert max(sizes) > 16 * 1024
