"""`native_usage`: inspect's ModelUsage as billed tokens, whichever convention the log uses
(issue 18, item 2): inspect 0.3.285 reports the uncached part in `input_tokens`; older logs
put the cached part inside it. `total_tokens` tells them apart."""

from inspect_ai.model import ModelUsage

from readbench.sessions.inspect_log import native_usage


def test_uncached_input_convention():
    u = native_usage(ModelUsage(input_tokens=200, output_tokens=10, total_tokens=1010, input_tokens_cache_read=800))
    assert (u.uncached_input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (200, 800, 0, 10)
    assert u.input_tokens == 1000


def test_cached_inside_input_convention():
    u = native_usage(ModelUsage(input_tokens=1000, output_tokens=10, total_tokens=1010, input_tokens_cache_read=800))
    assert (u.uncached_input_tokens, u.cache_read_tokens, u.input_tokens) == (200, 800, 1000)


def test_anthropic_style_with_writes():
    u = native_usage(ModelUsage(input_tokens=5, output_tokens=7, total_tokens=5 + 300 + 900 + 7,
                                input_tokens_cache_write=300, input_tokens_cache_read=900))
    assert (u.uncached_input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.input_tokens) == (5, 900, 300, 1205)


def test_no_usage():
    assert native_usage(None) is None
