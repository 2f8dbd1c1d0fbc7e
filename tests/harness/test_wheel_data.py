"""The wheel ships each harness pin's committed npm files (pyproject package-data; issue 24):
`readbench.agents.install.ensure_pin` copies `readbench/harness/npm/<pin>/package*.json`, so an
installed (non-editable) readbench without them could not install any real harness."""

import subprocess
import sys
import zipfile

from readbench.harness.agents import list_agents


def test_wheel_holds_every_pins_package_and_lock_file(tmp_path):
    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    got = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(root)],
                         capture_output=True, text=True)
    assert got.returncode == 0, got.stderr[-2000:]
    (wheel,) = tmp_path.glob("readbench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    pins = [a for a in list_agents() if a.npm_dir is not None]
    assert pins, "no harness pin to check"
    for agent in pins:
        for name in ("package.json", "package-lock.json"):
            assert f"readbench/harness/npm/{agent.npm_dir.name}/{name}" in names, (agent.name, name)
