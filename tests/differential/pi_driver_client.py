"""Client for the differential driver (driver/driver.mjs): a long-lived node process running
pi 0.84.1's shipped tool code, one JSON request/response per line."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

DRIVER_DIR = Path(__file__).parent / "driver"
PI_PACKAGE = DRIVER_DIR / "node_modules" / "@earendil-works" / "pi-coding-agent" / "package.json"


def rg_binary() -> str | None:
    """The ripgrep both sides use: the venv's (PyPI `ripgrep`), else the one on PATH."""
    venv_rg = Path(sys.executable).parent / "rg"
    if venv_rg.exists():
        return str(venv_rg)
    return shutil.which("rg")


class PiDriver:
    """Client for driver.mjs: `run(requests)` sends a batch and returns the responses in order."""

    def __init__(self, work_dir: Path) -> None:
        self.work_dir = work_dir
        tmp = work_dir / "tmp"
        tmp.mkdir()
        rg_config = work_dir / "ripgreprc"
        # Single-threaded, path-sorted ripgrep, so pi's rg and ours emit matches in the same order.
        rg_config.write_text("--sort=path\n")
        self.env = {
            **os.environ,
            "PI_OFFLINE": "1",
            "PI_CODING_AGENT_DIR": str(work_dir / "agent"),
            "TMPDIR": str(tmp),
            "RIPGREP_CONFIG_PATH": str(rg_config),
        }
        rg = rg_binary()
        if rg:
            self.env["PATH"] = f"{Path(rg).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        self.proc = subprocess.Popen(
            ["node", str(DRIVER_DIR / "driver.mjs")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=DRIVER_DIR,
            env=self.env,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )
        self._next_id = 0

    def run(self, requests: list[dict]) -> list[dict]:
        """Send `requests` (driver.mjs protocol) and return one response per request."""
        ids = []
        lines = []
        for request in requests:
            self._next_id += 1
            ids.append(self._next_id)
            lines.append(json.dumps({**request, "id": self._next_id}) + "\n")
        assert self.proc.stdin is not None and self.proc.stdout is not None
        writer = threading.Thread(target=self._write, args=(lines,))
        writer.start()
        responses = []
        for expected_id in ids:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"pi driver exited (code {self.proc.poll()})")
            response = json.loads(line)
            if "driverError" in response:
                raise RuntimeError(f"pi driver failed: {response['driverError']}")
            assert response["id"] == expected_id, (response["id"], expected_id)
            if response.get("fileAfter") is not None:
                response["fileAfter"] = base64.b64decode(response["fileAfter"])
            responses.append(response)
        writer.join()
        return responses

    def _write(self, lines: list[str]) -> None:
        assert self.proc.stdin is not None
        for line in lines:
            self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
