"""The long-session family: 15-19 prompts over one repository (GitHub issue 16).

Why: pi-dcp protects the last 8 user turns (docs/specs/dcp.md §4) and the sister extension the
last 4 (§7.3), so the 3-5-prompt ``session`` family never lets a DCP configuration prune; the
recorded sessions seen so far are 140-470 calls long in ~12 prompts (sessions.md §5, the
``readbench.sessions.synth`` shape). A long session is:

- three bug-fix chains in the source's big file (each: which function holds the bug ->
  fix it, checked by that bug's own failing tests -> a follow-up question on the fixed
  function), the three bugs present at once from the start;
- 3-5 question pairs about functions of the source's other files (pristine, never edited):
  a body question (default value, raise message or ``return`` count) and, ten prompts later,
  the same function's ``def`` line. Without pruning the earlier read still answers the second
  question; under DCP it was pruned and must be read again (the perception rule,
  docs/specs/sim-agent.md), which costs turns and cache.

Prompts run in blocks: two first questions, a chain, two first questions, a chain, the first
revisits, ... so every revisit comes >= 9 prompts after its first question.

The three bugs are preferably chosen so that none of a bug's failing tests calls another bug's
function (the coverage map of readbench.corpus._bugfix), and :func:`validate_chain` runs it: with all
three bugs in place each bug's own tests fail, and after fixing them in order each passes.
The grade is the ``session`` check: the target's full test command passes and every answer
matches.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from readbench.corpus._bugfix import Outcome, TargetRunner, _quote
from readbench.corpus._mutate import MutationSite, unique_snippet
from readbench.corpus._questions import Question, question_pairs
from readbench.corpus._records import Check, Mutation, Oracle, Step, TaskRecord

__all__ = ["BUGS_PER_SESSION", "Chain", "apply_sites", "chain_bugs", "longsession_record", "pick_chains",
           "validate_chain"]

#: Bug-fix chains per long session.
BUGS_PER_SESSION = 3
_ANSWER_LINE = "Reply with the answer alone on a final line of the form `ANSWER: <value>`."


@dataclass(frozen=True)
class Chain:
    """One bug of a long session: the site, its validation outcome and its own test command."""

    site: MutationSite
    outcome: Outcome
    test_cmd: str


def pick_chains(kept: list[tuple[MutationSite, Outcome]], callers: dict[int, list[str]], n_sessions: int,
                bugs: int = BUGS_PER_SESSION) -> list[list[tuple[MutationSite, Outcome]]]:
    """Groups of ``bugs`` killed mutants, best candidates first.

    First, greedy groups whose failing tests do not call each other's functions (by the coverage
    map, such bugs cannot interfere); then the leftover mutants in selection order, whose
    independence only :func:`validate_chain` can show (a test suite where every test calls the
    same core functions, like click's, yields no coverage-disjoint group).

    Args:
        kept: killed mutants in selection order (each in a distinct function).
        callers: code line -> ids of the tests that call the function starting there.
        n_sessions: groups wanted.

    Returns:
        Up to ``n_sessions`` groups, in order; a mutant is in at most one group.
    """
    groups: list[list[tuple[MutationSite, Outcome]]] = []
    pool = list(kept)
    while len(groups) < n_sessions and pool:
        group: list[tuple[MutationSite, Outcome]] = []
        for cand in list(pool):
            site, out = cand
            ok = all(not (set(out.failed) & set(callers.get(s.code_line, ())))
                     and not (set(o.failed) & set(callers.get(site.code_line, ()))) for s, o in group)
            if ok:
                group.append(cand)
                if len(group) == bugs:
                    break
        if len(group) < bugs:
            break
        groups.append(group)
        for cand in group:
            pool.remove(cand)
    while len(groups) < n_sessions and len(pool) >= bugs:
        groups.append(pool[:bugs])
        pool = pool[bugs:]
    return groups


def apply_sites(data: bytes, sites: list[MutationSite]) -> bytes:
    """``data`` with every site applied (non-overlapping spans, applied from the end backwards).

    Raises:
        ValueError: two spans overlap, or a span no longer holds its ``old`` text.
    """
    ordered = sorted(sites, key=lambda s: s.byte_start)
    for a, b in zip(ordered, ordered[1:]):
        if a.byte_end > b.byte_start:
            raise ValueError(f"mutation spans overlap at lines {a.line} and {b.line}")
    out = data
    for site in reversed(ordered):
        if out[site.byte_start:site.byte_end] != site.old.encode("utf-8"):
            raise ValueError(f"line {site.line}: expected {site.old!r} at the site, file differs")
        out = out[:site.byte_start] + site.new.encode("utf-8") + out[site.byte_end:]
    return out


def fix_snippets(pristine: bytes, sites: list[MutationSite]) -> tuple[str, list[tuple[str, str]]]:
    """(mutated text, [(old_text, new_text)] per site in the given order).

    Each old_text is the shortest run of whole lines around the site that is unique in the text
    with every site applied (readbench.corpus._mutate.unique_snippet).

    Raises:
        ValueError: a snippet reaches another site's span (the fixes would interfere).
    """
    mutated_bytes = apply_sites(pristine, sites)
    text = mutated_bytes.decode("utf-8")
    spans = []
    for site in sites:
        shift = sum(len(s.new.encode()) - len(s.old.encode()) for s in sites if s.byte_start < site.byte_start)
        start = len(mutated_bytes[:site.byte_start + shift].decode("utf-8"))
        spans.append((start, start + len(site.new)))
    pairs = []
    for site, (start, end) in zip(sites, spans):
        snippet, lo, hi = unique_snippet(text, start, end)
        if any(lo < e and s < hi for s, e in spans if (s, e) != (start, end)):
            raise ValueError(f"the fix snippet of line {site.line} reaches another bug")
        pairs.append((snippet, snippet[: start - lo] + site.old + snippet[end - lo:]))
    return text, pairs


def chain_bugs(group: list[tuple[MutationSite, Outcome]], pytest_cmd: str) -> list[Chain]:
    """The group as chains, each with a test command of its own failing tests."""
    return [Chain(site, out, f"{pytest_cmd} -q " + " ".join(_quote(t) for t in out.failed)) for site, out in group]


def validate_chain(runner: TargetRunner, chains: list[Chain]) -> bool:
    """Run the chain (cached in the target's validation dir like every mutant outcome).

    With every bug applied, each bug's own tests must fail; then, fixing the bugs in order,
    each bug's tests must pass right after its fix. Returns whether all of that held.
    """
    from readbench.corpus._bugfix import _PYTEST_FLAGS, _key

    timeout = min(runner.cap, 3 * runner.baseline_seconds + 10)
    sites = [c.site for c in chains]
    name = f"chain-{_key(runner.file_sha, [(s.byte_start, s.byte_end, s.new) for s in sites], runner.pytest_cmd, [list(c.outcome.failed) for c in chains], runner.key_env)}"

    def run() -> dict:
        root = runner._copy()
        path = root / runner.file
        steps = []
        try:
            for i, chain in enumerate(chains):
                path.write_bytes(apply_sites(runner.pristine, sites[i:]))
                args = runner._ids_arg(root, list(chain.outcome.failed), f"chain{i}")
                before = runner._run(root, args, timeout)
                path.write_bytes(apply_sites(runner.pristine, sites[i + 1:]))
                after = runner._run(root, args, timeout)
                steps.append({"fails_before": bool(before.failed) and not before.timed_out,
                              "passes_after": after.passed})
            return {"steps": steps, "flags": _PYTEST_FLAGS}
        finally:
            path.write_bytes(runner.pristine)
            runner._copies.put(root)

    got = runner._cached(name, run)
    ok = all(s["fails_before"] and s["passes_after"] for s in got["steps"])
    runner.log(f"  long-session chain {[c.site.line for c in chains]}: {'valid' if ok else 'INVALID'} {got['steps']}")
    return ok


def _chain_prompts(chain: Chain, file: str, old: str, new: str, fn_line: int, n_returns: int,
                   rng: random.Random, messages: dict[str, str]) -> tuple[list[str], list[Step], list[str | None]]:
    from readbench.corpus._assemble import symptom

    site = chain.site
    key = f"def {site.func.rsplit('.', 1)[-1]}("
    p1 = (symptom(chain.test_cmd, chain.outcome.failed, messages)
          + f"\n\nThe bug is in `{file}`. Do not change anything yet: which function or method contains the bug? "
            "Give its qualified name (`Class.method` for methods, `outer.inner` for nested functions). "
            + _ANSWER_LINE)
    p2 = (f"Now fix that bug in the library code; do not change the tests. `{chain.test_cmd}` must pass "
          "(other tests may still fail because of other problems).")
    if rng.random() < 0.5 or n_returns < 2:
        p3, a3 = (f"Follow-up: on which line of `{file}` does `{site.func}` start now (its `def` line)? "
                  + _ANSWER_LINE), str(fn_line)
    else:
        p3, a3 = (f"Follow-up: how many `return` statements does `{site.func}` contain, counting nested "
                  "functions too? " + _ANSWER_LINE), str(n_returns)
    steps = [
        Step(kind="locate", target_file=file, search_key=key, answer=site.func, target_line=site.line),
        Step(kind="fix", target_file=file, search_key=key, old_text=old, new_text=new, target_line=site.line,
             test_cmd=chain.test_cmd),
        Step(kind="answer", target_file=file, search_key=key, answer=a3, target_line=fn_line),
    ]
    return [p1, p2, p3], steps, [site.func, None, a3]


def longsession_record(*, task_id: str, source: str, version: str, file: str, pristine: bytes,
                       chains: list[Chain], question_files: dict[str, str], full_test_cmd: str,
                       env: dict[str, str], timeout_seconds: float, rng: random.Random,
                       min_line_of: dict[str, int]) -> TaskRecord | None:
    """One long-session task (module docstring), or None when the question pools run dry.

    Args:
        file: the big file holding the bugs; pristine: its bytes.
        chains: the validated bugs (:func:`validate_chain`).
        question_files: other files of the source (path -> pristine text) to ask about.
        full_test_cmd: the target's full checker (the final grade).
        rng: the seeded generator of this task (question choice and order).
        min_line_of: path -> only functions past this line are asked about.
    """
    import ast

    from readbench.corpus._questions import functions

    text, fixes = fix_snippets(pristine, [c.site for c in chains])
    pristine_tree = ast.parse(pristine.decode("utf-8"))
    by_name = {f.qualname: f for f in functions(pristine_tree)}
    chain_parts = []
    for chain, (old, new) in zip(chains, fixes):
        fn = by_name[chain.site.func].node
        n_returns = sum(isinstance(x, ast.Return) for x in ast.walk(fn))
        chain_parts.append(_chain_prompts(chain, file, old, new, fn.lineno, n_returns, rng, chain.outcome.messages))
    n_pairs = rng.randint(3, 5)
    pairs: list[tuple[str, Question, Question]] = []
    files = sorted(question_files)
    rng.shuffle(files)
    for path in files:
        need = n_pairs - len(pairs)
        if need <= 0:
            break
        per_file = -(-need // max(1, len(files) - files.index(path)))  # spread the pairs over the files
        for q1, q2 in question_pairs(question_files[path], path, per_file, rng, min_line_of[path]):
            pairs.append((path, q1, q2))
    if len(pairs) < 3:
        return None
    firsts = [_question(p, q) for p, q, _ in pairs]
    seconds = [_question(p, q, revisit=True) for p, _, q in pairs]
    blocks: list[tuple[list[str], list[Step], list[str | None]]] = []
    # [Q1a Q2a] C1 [Q3a Q4a (Q5a)] C2 [Q1b Q2b] C3 [Q3b Q4b (Q5b)]: every revisit >= 9 prompts later
    blocks += [firsts[0], firsts[1], chain_parts[0], *firsts[2:], chain_parts[1], seconds[0], seconds[1],
               chain_parts[2], *seconds[2:]]
    prompts: list[str] = []
    steps: list[Step] = []
    answers: list[str | None] = []
    for ps, ss, aa in blocks:
        prompts += ps
        steps += ss
        answers += aa
    first = chains[0].site
    return TaskRecord(
        id=task_id, family="longsession", source=source, source_version=version, prompts=tuple(prompts),
        file=file, file_lines=text.count("\n"), target_line=first.line, oracle=Oracle.from_steps(steps),
        check=Check(kind="session", test_cmd=full_test_cmd, env=env, timeout_seconds=timeout_seconds,
                    fail_to_pass=tuple(sorted({t for c in chains for t in c.outcome.failed})),
                    answers=tuple(answers)),
        files={file: text}, question_kind="longsession",
        mutation=Mutation(first.operator, first.line, first.byte_start, first.byte_end, first.old, first.new,
                          first.func),
    )


def _question(path: str, q: Question, revisit: bool = False) -> tuple[list[str], list[Step], list[str | None]]:
    prompt = ("Back to an earlier question's function. " if revisit else "A question about the code base. ") + q.prompt
    step = Step(kind="answer", target_file=path, search_key=q.search_key, answer=q.answer, target_line=q.target_line)
    return [prompt], [step], [q.answer]
