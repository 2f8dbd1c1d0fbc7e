"""Codex's history truncation of tool outputs (readbench.sessions._codex_truncate), exact texts
computed by hand from codex-rs's rule: budget = limit x 1.2, 4 bytes per token, first and last
budget/2 bytes kept on character boundaries."""

from __future__ import annotations

import json

from readbench.sessions._codex_truncate import model_visible_output, policy_budget
from readbench.sessions.registry import load_file


def test_policy_budget_adds_codexs_serialization_allowance():
    assert policy_budget({"mode": "tokens", "limit": 10000}) == ("tokens", 12000)
    assert policy_budget({"mode": "bytes", "limit": 5}) == ("bytes", 6)
    assert policy_budget({"mode": "tokens", "limit": 256}) == ("tokens", 308)  # 307.2, rounded up as codex-rs does
    assert policy_budget(None) is None and policy_budget({"mode": "lines", "limit": 3}) is None


def test_a_text_over_the_token_budget_keeps_its_head_and_tail_around_the_marker():
    text = "0123456789" * 6  # 60 bytes; 10 tokens x 1.2 = 12 tokens = 48 bytes
    assert model_visible_output(text, policy_budget({"mode": "tokens", "limit": 10})) == (
        "012345678901234567890123…3 tokens truncated…678901234567890123456789")
    assert model_visible_output(text, policy_budget({"mode": "tokens", "limit": 50})) == text  # fits
    assert model_visible_output(text, None) == text  # no recorded policy: as recorded


def test_a_byte_budget_counts_removed_characters_on_utf8_boundaries():
    assert model_visible_output("abcdefghij", ("bytes", 6)) == "abc…4 chars truncated…hij"
    assert model_visible_output("é" * 10, ("bytes", 6)) == "é…8 chars truncated…é"  # tail: bytes from 20 - 3 = 17 on


def test_content_items_share_one_budget_and_later_text_items_are_omitted():
    items = [{"type": "input_text", "text": "a" * 20}, {"type": "input_image", "image_url": "data:x"},
             {"type": "input_text", "text": "b" * 40}, {"type": "input_text", "text": ""},
             {"type": "input_text", "text": "z"}]
    assert model_visible_output(items, ("tokens", 12)) == [
        {"type": "input_text", "text": "a" * 20}, {"type": "input_image", "image_url": "data:x"},
        {"type": "input_text", "text": "b" * 14 + "…3 tokens truncated…" + "b" * 14},
        {"type": "input_text", "text": "[omitted 1 text items ...]"}]


def test_the_importer_sends_the_output_as_the_model_saw_it_under_the_turns_policy(tmp_path):
    def line(kind, payload, t):
        return json.dumps({"timestamp": f"2026-05-11T10:00:0{t}.000Z", "type": kind, "payload": payload})

    usage = {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 1},
                                             "last_token_usage": {"input_tokens": 1, "cached_input_tokens": 0, "output_tokens": 1}}}
    lines = [line("session_meta", {"id": "cx", "cli_version": "0.122.0"}, 0),
             line("turn_context", {"model": "gpt-5.4", "truncation_policy": {"mode": "tokens", "limit": 10}}, 0),
             line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}, 1),
             line("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1", "arguments": "{}"}, 2),
             line("event_msg", usage, 3),
             line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "0123456789" * 6}, 4),
             line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, 5),
             line("event_msg", {**usage, "info": {**usage["info"], "total_token_usage": {"input_tokens": 2}}}, 6)]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    assert s.request(1)[-1].text == "012345678901234567890123…3 tokens truncated…678901234567890123456789"


def test_an_image_in_a_tool_output_is_an_image_block_not_its_base64_text(tmp_path):
    from inspect_ai.model import ContentImage, ContentText

    def line(kind, payload, t):
        return json.dumps({"timestamp": f"2026-05-11T10:00:0{t}.000Z", "type": kind, "payload": payload})

    def usage(total):
        return {"type": "token_count", "info": {"total_token_usage": {"input_tokens": total},
                                                "last_token_usage": {"input_tokens": total, "cached_input_tokens": 0, "output_tokens": 1}}}

    url = "data:image/jpeg;base64," + "A" * 90000
    out = [{"type": "input_text", "text": "shown"}, {"type": "input_image", "image_url": url, "detail": "original"}]
    lines = [line("session_meta", {"id": "cx", "cli_version": "0.125.0"}, 0),
             line("turn_context", {"model": "gpt-5.5", "truncation_policy": {"mode": "tokens", "limit": 10000}}, 0),
             line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}]}, 1),
             line("response_item", {"type": "function_call", "name": "view_image", "call_id": "c1", "arguments": "{}"}, 2),
             line("event_msg", usage(10), 3),
             line("response_item", {"type": "function_call_output", "call_id": "c1", "output": out}, 4),
             line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}, 5),
             line("event_msg", usage(20), 6)]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (s,) = load_file(path)
    tool = s.request(1)[-1]
    assert tool.content == [ContentText(text='[{"type": "input_text", "text": "shown"}]'),
                            ContentImage(image=url, detail="original")]
    assert tool.text == '[{"type": "input_text", "text": "shown"}]'
