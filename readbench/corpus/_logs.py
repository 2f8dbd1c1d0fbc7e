"""Seeded service-log generator with planted facts (docs/specs/corpus.md §3.5).

A log of N lines (30,000-60,000 in the corpus) from eight services. Planted, each exactly once:
one ``FATAL`` line in the last third with a request id seen nowhere else, and one ``WARN`` line
``permission denied`` in the middle third naming a user. Per-service ``ERROR`` counts are
facts too. Output depends only on ``(seed, n_lines)``: ``random.Random(seed)``, no clock.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

__all__ = ["LOG_KINDS", "SERVICES", "LogFacts", "generate_log", "log_questions"]

SERVICES = ("api", "auth", "billing", "gateway", "scheduler", "search", "storage", "worker")
LOG_KINDS = ("fatal_request", "fatal_line", "error_count", "denied_user")
_LEVELS = (("DEBUG", 20), ("INFO", 66), ("WARN", 10), ("ERROR", 4))
_MESSAGES = {
    "DEBUG": ("cache lookup key={k}", "span closed dur_ms={n}", "pool size={n}"),
    "INFO": ("GET /v1/items/{k} 200 dur_ms={n}", "POST /v1/orders 201 dur_ms={n}",
             "job {k} finished in {n} ms", "session refreshed user=u{n}", "flushed {n} rows"),
    "WARN": ("slow query dur_ms={n}", "retrying upstream attempt={n}", "queue depth {n} above soft limit"),
    "ERROR": ("upstream timeout after {n} ms", "payment declined code={n}",
              "unhandled exception in handler {k}", "write failed errno={n}"),
}
_START = datetime(2026, 3, 14, 8, 0, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class LogFacts:
    """What the generator planted.

    Attributes:
        n_lines: lines in the log (each ends with a newline).
        fatal_line: 1-based line of the only FATAL line.
        fatal_service: its service.
        fatal_request: its request id (16 hex chars, unique in the log).
        denied_line: 1-based line of the only ``permission denied`` line.
        denied_user: the user id it names (``u`` + digits).
        error_counts: service -> number of ERROR lines.
    """

    n_lines: int
    fatal_line: int
    fatal_service: str
    fatal_request: str
    denied_line: int
    denied_user: str
    error_counts: dict[str, int]


def _rid(rng: random.Random) -> str:
    return f"{rng.getrandbits(64):016x}"


def generate_log(seed: int | str, n_lines: int) -> tuple[str, LogFacts]:
    """Generate the log text and its planted facts.

    Args:
        seed: any value accepted by ``random.Random``.
        n_lines: number of lines, >= 30.

    Returns:
        (text, facts); the same arguments give the same bytes.

    Raises:
        ValueError: ``n_lines`` < 30.
    """
    if n_lines < 30:
        raise ValueError(f"n_lines must be >= 30, got {n_lines}")
    rng = random.Random(seed)
    fatal_at = rng.randrange(2 * n_lines // 3, n_lines) + 1
    denied_at = rng.randrange(n_lines // 3, 2 * n_lines // 3) + 1
    levels = [lv for lv, _ in _LEVELS]
    weights = [w for _, w in _LEVELS]
    t = _START
    seen: set[str] = set()
    lines: list[str] = []
    errors = dict.fromkeys(SERVICES, 0)
    fatal_service = fatal_request = denied_user = ""
    for n in range(1, n_lines + 1):
        t += timedelta(milliseconds=rng.randint(1, 180))
        ts = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
        service = rng.choice(SERVICES)
        rid = _rid(rng)
        if n == fatal_at:
            while rid in seen:
                rid = _rid(rng)
            level, msg = "FATAL", "worker pool exhausted, shutting down"
            fatal_service, fatal_request = service, rid
        elif n == denied_at:
            denied_user = f"u{rng.randint(10000, 99999)}"
            level, msg = "WARN", f"permission denied user={denied_user} resource=/admin/keys"
        else:
            level = rng.choices(levels, weights)[0]
            tmpl = rng.choice(_MESSAGES[level])
            msg = tmpl.format(k=f"{rng.getrandbits(24):06x}", n=rng.randint(1, 9999))
            if level == "ERROR":
                errors[service] += 1
        seen.add(rid)
        lines.append(f"{ts} {level:<5} {service:<9} req={rid} {msg}\n")
    if lines[fatal_at - 1].split(" req=")[1][:16] != fatal_request:
        raise AssertionError("planted FATAL line lost")  # internal invariant
    # A request id drawn before the FATAL line could equal it; draws after it are checked here.
    text = "".join(lines)
    if text.count(f"req={fatal_request}") != 1:
        raise AssertionError(f"seed {seed!r}: FATAL request id repeats; choose another seed")
    facts = LogFacts(n_lines, fatal_at, fatal_service, fatal_request, denied_at, denied_user, errors)
    return text, facts


def log_questions(facts: LogFacts, path: str, kind: str, rng: random.Random):
    """(prompt, answer, target_line, search_key) for one question kind about a generated log.

    Raises:
        ValueError: unknown ``kind``.
    """
    tail = "Reply with the answer alone on a final line of the form `ANSWER: <value>`."
    if kind == "fatal_request":
        return (f"The service log `{path}` has exactly one FATAL line. What is the request id "
                f"(`req=`) on that line? {tail}", facts.fatal_request, facts.fatal_line, "FATAL")
    if kind == "fatal_line":
        return (f"On which line (1-based) of `{path}` is the only FATAL entry? {tail}",
                str(facts.fatal_line), facts.fatal_line, "FATAL")
    if kind == "denied_user":
        return (f"Exactly one line of `{path}` reports `permission denied`. Which user id does it "
                f"name (the value after `user=`)? {tail}", facts.denied_user, facts.denied_line,
                "permission denied")
    if kind == "error_count":
        service = rng.choice(SERVICES)
        return (f"How many ERROR lines does the service `{service}` write in `{path}`? (The "
                f"service name is the third column.) {tail}", str(facts.error_counts[service]),
                None, f"ERROR {service}")
    raise ValueError(f"unknown log question kind {kind!r} (valid: {', '.join(LOG_KINDS)})")
