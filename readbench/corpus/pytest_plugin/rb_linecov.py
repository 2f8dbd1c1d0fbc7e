"""pytest plugin: which lines of ONE target file each test executes (build-time only).

Loaded with ``-p rb_linecov`` from a PYTHONPATH entry holding only this file; it must not
import readbench (the checker's python3 has no readbench). Environment:

- ``RB_LINECOV_FILE``: absolute path of the target file (compared after ``realpath``).
- ``RB_LINECOV_OUT``: JSON written at exit: ``{nodeid: [line, ...]}``; lines executed outside
  any test (import, collection) are under the key ``"<collect>"``.
- ``RB_LINECOV_MODE``: ``line`` (every executed line) or ``func`` (default: only the first line
  of each code object called, i.e. the ``def`` line; about 5x cheaper than line tracing).

Used to keep mutation sites on executed statements and to pick, per site, the tests that reach
it (docs/specs/corpus.md §3.1 "Findings" and step 3, coverage filter).
"""

import json
import os
import sys
import threading

import pytest

_TARGET = os.environ.get("RB_LINECOV_FILE")
_OUT = os.environ.get("RB_LINECOV_OUT")
_FUNC_ONLY = os.environ.get("RB_LINECOV_MODE", "func") == "func"
_current = ["<collect>"]
_lines: dict[str, set[int]] = {}  # test id -> lines of the target file it ran
_match: dict[str, bool] = {}  # code file name -> is it the target


def _local(frame, event, arg):
    if event == "line":
        _lines.setdefault(_current[0], set()).add(frame.f_lineno)
    return _local


def _global(frame, event, arg):
    fn = frame.f_code.co_filename
    hit = _match.get(fn)
    if hit is None:
        hit = _match[fn] = os.path.realpath(fn) == _TARGET
    if hit:
        _lines.setdefault(_current[0], set()).add(frame.f_code.co_firstlineno)
        return None if _FUNC_ONLY else _local
    return None


def pytest_configure(config):
    if _TARGET:
        threading.settrace(_global)
        sys.settrace(_global)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current[0] = item.nodeid
    yield
    _current[0] = "<collect>"


def pytest_unconfigure(config):
    sys.settrace(None)
    threading.settrace(None)
    if _OUT:
        with open(_OUT, "w", encoding="utf-8") as f:
            json.dump({k: sorted(v) for k, v in sorted(_lines.items())}, f)
