"""`readbench cache simulate|models` (request format: readbench/cache/jsonl.py)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from readbench.cache._cli import cache_group


def _write(tmp_path, lines):
    p = tmp_path / "requests.jsonl"
    p.write_text("\n".join(json.dumps(x) if not isinstance(x, str) else x for x in lines) + "\n")
    return str(p)


HEAD = [{"kind": "tool_def", "id": "tools", "tokens": 1000}, {"kind": "system", "id": "sys", "tokens": 2000}, {"kind": "text", "id": "task", "tokens": 500}]
TURN = [{"kind": "tool_use", "id": "use1", "tokens": 100}, {"kind": "tool_result", "id": "res1", "tokens": 400}]


def test_simulate_prints_per_request_table_and_totals(tmp_path):
    path = _write(tmp_path, [
        {"ts_start": 0, "ts_first_token": 1, "output_tokens": 200, "blocks": HEAD},
        {"ts_start": 10, "ts_first_token": 11, "output_tokens": 150, "blocks": HEAD + TURN},
    ])
    res = CliRunner().invoke(cache_group, ["simulate", path, "--model", "claude-sonnet-5"])
    assert res.exit_code == 0, res.output
    # R0: 3,500 x 2.50 + 200 x 10 = 10,750 -> 0.010750; R1: 3,500 x 0.20 + 500 x 2.50 + 150 x 10 = 3,450.
    assert res.output == (
        "cache model anthropic-5m, model claude-sonnet-5, prices as of 2026-11-29\n"
        "   #      input       read      write   uncached   output     cost_usd\n"
        "   0       3500          0       3500          0      200     0.010750\n"
        "   1       4000       3500        500          0      150     0.003450\n"
        " all       7500       3500       4000          0      350     0.014200\n"
        "cache-read ratio 0.4667\n"
    )


def test_simulate_json_and_explicit_breakpoints(tmp_path):
    path = _write(tmp_path, [
        {"ts_start": 0, "ts_first_token": 1, "output_tokens": 0, "blocks": HEAD, "breakpoints": [1]},
        {"ts_start": 10, "ts_first_token": 11, "output_tokens": 0, "blocks": HEAD + TURN, "breakpoints": [1]},
    ])
    res = CliRunner().invoke(cache_group, ["simulate", path, "--model", "claude-sonnet-5", "--json"])
    assert res.exit_code == 0, res.output
    d = json.loads(res.output)
    # Only the system breakpoint (3,000 tokens) is marked: the task and the turn stay uncached.
    assert [(r["cache_read_tokens"], r["cache_write_tokens"], r["uncached_input_tokens"]) for r in d["requests"]] == [(0, 3000, 500), (3000, 0, 1000)]
    assert d["cache_model"] == "anthropic-5m" and d["prices_as_of"] == "2026-11-29"


def test_simulate_messages_format_counts_text(tmp_path):
    msgs = [{"role": "system", "content": " ".join(["agent"] * 10)}, {"role": "user", "content": "hello world"}]
    path = _write(tmp_path, [{"ts_start": 0, "ts_first_token": 1, "output_tokens": 5, "messages": msgs}])
    res = CliRunner().invoke(cache_group, ["simulate", path, "--model", "gpt-5", "--json"])
    assert res.exit_code == 0, res.output
    # "agent agent ... agent" (10 words) = 10 tokens + "hello world" = 2 tokens, below gpt-5's 1,024 minimum.
    assert json.loads(res.output)["requests"][0]["uncached_input_tokens"] == 12


def test_bad_inputs_exit_2_naming_them(tmp_path):
    ok = _write(tmp_path, [{"ts_start": 0, "ts_first_token": 1, "output_tokens": 0, "blocks": HEAD}])
    r = CliRunner().invoke(cache_group, ["simulate", ok, "--model", "claude-9"])
    assert r.exit_code == 2 and "unknown model 'claude-9'" in r.output
    r = CliRunner().invoke(cache_group, ["simulate", ok, "--model", "gpt-5", "--cache-model", "anthropic-5m"])
    assert r.exit_code == 2 and "model 'gpt-5' is priced under the openai family" in r.output
    r = CliRunner().invoke(cache_group, ["simulate", ok, "--model", "gpt-5", "--placement", "pi"])
    assert r.exit_code == 2 and "--placement applies to anthropic-5m/anthropic-1h, not 'openai'" in r.output
    bad = _write(tmp_path, [{"ts_start": 0, "ts_first_token": 1, "output_tokens": 0, "blocks": HEAD}, "{not json"])
    r = CliRunner().invoke(cache_group, ["simulate", bad, "--model", "gpt-5"])
    assert r.exit_code == 2 and "requests.jsonl:2: invalid JSON" in r.output
    missing = _write(tmp_path, [{"ts_start": 0, "output_tokens": 0, "blocks": HEAD}])
    r = CliRunner().invoke(cache_group, ["simulate", missing, "--model", "gpt-5"])
    assert r.exit_code == 2 and "requests.jsonl:1: missing field 'ts_first_token'" in r.output
    nokind = _write(tmp_path, [{"ts_start": 0, "ts_first_token": 0, "output_tokens": 0, "blocks": [{"kind": "video", "id": "v", "tokens": 1}]}])
    r = CliRunner().invoke(cache_group, ["simulate", nokind, "--model", "gpt-5"])
    assert r.exit_code == 2 and "requests.jsonl:1: block 0: kind 'video' not in" in r.output
    r = CliRunner().invoke(cache_group, ["simulate", str(tmp_path / "nope.jsonl"), "--model", "gpt-5"])
    assert r.exit_code == 2 and "cannot read" in r.output and "nope.jsonl" in r.output
    latin = tmp_path / "latin.jsonl"  # brk12: "'utf-8' codec can't decode byte 0xe9 ...", no file named
    latin.write_bytes(json.dumps({"ts_start": 0, "ts_first_token": 1, "output_tokens": 0, "blocks": HEAD}).encode()
                      + b'\n{"note": "caf\xe9"}\n')
    r = CliRunner().invoke(cache_group, ["simulate", str(latin), "--model", "gpt-5"])
    assert r.exit_code == 2 and "latin.jsonl:2: not UTF-8 text (byte 0xe9 at column 14)" in r.output


def test_models_lists_cache_models_and_dated_prices():
    r = CliRunner().invoke(cache_group, ["models"])
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert "  anthropic-5m     family=anthropic  default=claude-sonnet-5.5  ttl=300 s      writes=5m" in lines
    assert "  anthropic-1h     family=anthropic  default=claude-sonnet-5.5  ttl=3600 s     writes=1h" in lines
    assert "  openai           family=openai     default=gpt-5.6-terra      ttl=per model  writes=-" in lines
    assert "  none             family=any        default=claude-sonnet-5.5  ttl=-          writes=-" in lines
    assert any(line.startswith("  claude-sonnet-5 ") and line.endswith("2026-11-29") for line in lines)
    assert any(line.startswith("  gpt-5.5 ") and line.endswith("2026-05-01") for line in lines)
    assert any(line.startswith("  gemini-3.1-pro ") and line.endswith("(unpriced)") for line in lines)


def _simulate(tmp_path, lines):
    return CliRunner().invoke(cache_group, ["simulate", _write(tmp_path, lines), "--model", "claude-sonnet-5"])


def _req(**fields):
    return {"ts_start": 0, "ts_first_token": 1, "output_tokens": 0, "blocks": HEAD, **fields}


def test_malformed_shapes_are_named_errors_not_tracebacks(tmp_path):
    # issue 13, defect 9: each of these raised a TypeError traceback
    cases = [
        (_req(blocks=5), "requests.jsonl:1: blocks must be a list of block objects, got 5"),
        (_req(breakpoints=0), "requests.jsonl:1: breakpoints must be a list of block indices (integers), got 0"),
        (_req(breakpoints=["a"]), "requests.jsonl:1: breakpoints must be a list of block indices (integers), got ['a']"),
        (_req(breakpoints=[True]), "requests.jsonl:1: breakpoints must be a list of block indices (integers), got [True]"),
    ]
    for line, message in cases:
        r = _simulate(tmp_path, [line])
        assert r.exit_code == 2 and message in r.output, r.output


def test_non_finite_times_and_absurd_token_counts_are_refused(tmp_path):
    r = _simulate(tmp_path, ['{"ts_start": NaN, "ts_first_token": 1, "output_tokens": 0, "blocks": []}'])
    assert r.exit_code == 2 and "requests.jsonl:1: ts_start must be a finite number of seconds, got nan" in r.output
    r = _simulate(tmp_path, [_req(ts_first_token=float("inf"))])
    assert r.exit_code == 2 and "ts_first_token must be a finite number of seconds, got inf" in r.output
    r = _simulate(tmp_path, [_req(ts_start=True)])
    assert r.exit_code == 2 and "ts_start must be a finite number of seconds, got True" in r.output
    big = 10**23
    r = _simulate(tmp_path, [_req(blocks=[{"kind": "system", "id": "s", "tokens": big}])])
    assert r.exit_code == 2 and (
        f"requests.jsonl:1: block 0: tokens {big} is over the 10000000-token bound of one request" in r.output)
    r = _simulate(tmp_path, [_req(output_tokens=big)])
    assert r.exit_code == 2 and f"output_tokens {big} is over the 10000000-token bound" in r.output
    r = _simulate(tmp_path, [_req(blocks=[{"kind": "system", "id": str(i), "tokens": 4_000_000} for i in range(3)])])
    assert r.exit_code == 2 and "requests.jsonl:1: the blocks add up to 12000000 tokens, over the 10000000-token bound" in r.output


def test_an_empty_requests_file_is_an_error_not_a_table_of_zeros(tmp_path):
    p = tmp_path / "requests.jsonl"
    for content in ("", "\n\n  \n"):
        p.write_text(content)
        r = CliRunner().invoke(cache_group, ["simulate", str(p), "--model", "claude-sonnet-5"])
        assert r.exit_code == 2 and f"{p}: no requests (the file is empty)" in r.output, r.output
