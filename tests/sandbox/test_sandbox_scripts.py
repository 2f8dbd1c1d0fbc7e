"""sandboxes/lib.sh: the Debian archive is read from the machine's apt sources, never hard-coded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "sandboxes" / "lib.sh"


def archive(apt_etc: Path, codename: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", f'. "{LIB}"; debian_archive "$1"', "_", codename],
        env={"APT_ETC": str(apt_etc), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
    )


def test_deb822_sources_give_uri_and_keyring(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n"
    )
    res = archive(tmp_path, "bookworm")
    assert (res.returncode, res.stdout) == (0, "http://mirror.example/debian /usr/share/keyrings/debian-archive-keyring.gpg\n")


def test_deb822_stanza_without_main_or_for_another_suite_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "a.sources").write_text(
        "Types: deb\nURIs: http://other.example/x\nSuites: bookworm\nComponents: contrib\n\n"
        "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\nComponents: main\n\n"
        "Types: deb\nURIs: http://ok.example/debian\nSuites: bookworm\nComponents: main\n"
    )
    assert archive(tmp_path, "bookworm").stdout == "http://ok.example/debian -\n"
    assert archive(tmp_path, "trixie").returncode == 1


def test_one_line_sources_list_with_options(tmp_path: Path) -> None:
    (tmp_path / "sources.list").write_text(
        "# deb http://commented.example/debian bookworm main\n"
        "deb http://security.example/debian-security bookworm-security main\n"
        "deb [arch=amd64 signed-by=/etc/k.gpg] http://mirror.example/debian bookworm main non-free\n"
    )
    assert archive(tmp_path, "bookworm").stdout == "http://mirror.example/debian /etc/k.gpg\n"


@pytest.mark.parametrize("script", ["provision-docker.sh", "build-base-image.sh"])
def test_scripts_reject_unknown_arguments_with_exit_2(script: str) -> None:
    res = subprocess.run(["bash", str(LIB.parent / script), "--bogus"], capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr == f"{script}: unknown argument: --bogus\n"


def test_provision_rejects_a_bad_network_mode() -> None:
    res = subprocess.run(["bash", str(LIB.parent / "provision-docker.sh"), "--network", "host"],
                         capture_output=True, text=True)
    assert (res.returncode, res.stderr) == (2, "provision-docker.sh: --network must be 'none' or 'bridge', got: 'host'\n")
