"""Which files a directory walk hands to the importers (readbench replay's input)."""

from __future__ import annotations

from pathlib import Path

from readbench.sessions.registry import iter_session_files


def test_a_walk_enters_hidden_session_folders_but_not_vcs_or_environments(tmp_path):
    """A dotfiles backup named as a whole kept 44 of its 62 pi session files under `.pi/`, and the
    walk skipped every hidden directory without a word (issue 27 trial)."""
    for rel in (".pi/agent/sessions/--home-u--/s1.jsonl", ".claude/projects/p/s2.jsonl", "top.jsonl",
                ".git/objects/ab/cdef", ".venv/lib/x.jsonl", "node_modules/m/package.json",
                ".pi/agent/.hidden.jsonl"):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("{}\n")
    got = [(p.relative_to(tmp_path).as_posix(), explicit) for p, explicit in iter_session_files([tmp_path])]
    assert got == [("top.jsonl", False), (".claude/projects/p/s2.jsonl", False),
                   (".pi/agent/sessions/--home-u--/s1.jsonl", False)]


def test_a_named_hidden_file_is_taken_and_marked_explicit(tmp_path):
    f = tmp_path / ".s.jsonl"
    f.write_text("{}\n")
    assert list(iter_session_files([f])) == [(Path(f), True)]


def test_inspect_log_directory_files_are_skipped_in_a_walk_and_named_when_explicit(tmp_path):
    """`readbench replay results/smoke/logs` (the README's command) warned that inspect's
    eval-set.json was 'not a recorded session of any known format' (issue 27 trial)."""
    from readbench.sessions.registry import ImportFailure, load_sessions

    (tmp_path / "eval-set.json").write_text('{"eval_set_id": "x", "tasks": []}')
    (tmp_path / "logs.json").write_text("{}")
    assert list(load_sessions([tmp_path])) == []
    (failure,) = list(load_sessions([tmp_path / "eval-set.json"]))
    assert isinstance(failure, ImportFailure) and failure.path == str(tmp_path / "eval-set.json")
    assert "not a recorded session of any known format" in failure.reason


def test_a_file_reached_twice_is_yielded_once(tmp_path):
    """`readbench replay DIR DIR/.claude` replayed every session under `.claude` twice (794 files
    for 412), and the report then failed on 'two primary rows for one preset'."""
    f = tmp_path / ".claude/projects/p/s.jsonl"
    f.parent.mkdir(parents=True)
    f.write_text("{}\n")
    got = list(iter_session_files([tmp_path, tmp_path / ".claude", f, tmp_path / ".claude/projects/../projects/p/s.jsonl"]))
    assert got == [(f, False)]


def test_a_walk_follows_a_linked_folder_once_and_a_link_back_up_ends_there(tmp_path):
    """A folder of sessions linked into the walked one (users link ~/.claude or project folders)
    was skipped without a word."""
    real = tmp_path / "elsewhere" / "sessions"
    real.mkdir(parents=True)
    (real / "s.jsonl").write_text("{}\n")
    top = tmp_path / "top"
    top.mkdir()
    (top / "linked").symlink_to(real, target_is_directory=True)
    (real / "up").symlink_to(tmp_path / "elsewhere", target_is_directory=True)  # a cycle
    got = [p.relative_to(top).as_posix() for p, _ in iter_session_files([top])]
    assert got == ["linked/s.jsonl"]
