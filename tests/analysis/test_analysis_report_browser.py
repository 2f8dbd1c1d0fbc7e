"""The HTML report as a reader sees it: opened in headless Chromium (Debian's ``chromium``).

Checks that every figure loaded (a probe script in a copy of the page counts ``<img>``
elements that decoded with a non-zero natural width) and that a full-page screenshot is not
blank. The report itself carries no script; the probe is added to a copy only.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from readbench.analysis.report import render_report

from conftest import synthetic_table

pytestmark = pytest.mark.browser

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  const p = document.createElement("pre"); p.id = "probe";
  p.textContent = `images=${imgs.length} loaded=${ok} headings=${document.querySelectorAll("h2").length}`;
  document.body.appendChild(p);
});
</script>"""


def _table():
    rng = np.random.default_rng(0)
    rows = []
    arms = [("stock", "off"), ("B", "off"), ("C", "off"), ("stock", "pi-dcp")]
    for t in range(12):
        repo = f"repo{t % 3}"
        lines = [600, 1500, 3000, 8000][t % 4]
        for a, (variant, dcp) in enumerate(arms):
            for epoch in (1, 2):
                ok = float(rng.random() < 0.55 + 0.1 * a)
                cost = 0.02 * (1 + t % 4) * (0.8 if variant == "B" else 1.0) * rng.lognormal(0, 0.2)
                rows.append(dict(variant=variant, dcp=dcp, sample_id=f"{repo}/locate/{t}", source=repo,
                                 family="locate" if t % 2 else "edit", epoch=epoch, file_lines=lines, success=ok,
                                 stop_reason="solved" if ok else "wrong", turns=8.0 + rng.integers(0, 6),
                                 input_tokens=2e4 * (1 + t % 4), read_calls=3.0 + t % 4, reads_per_file=1.0 + t % 4 / 2,
                                 reread_ratio=0.1 * (t % 4), cache_read_ratio_openai=0.7 + 0.05 * a,
                                 cost_usd_openai=cost, cache_read_ratio_deepseek=0.8, cost_usd_deepseek=cost / 10))
    return synthetic_table(rows, cache_models=("openai", "deepseek"))


def _chromium(args: list[str], cwd: Path, profile: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium")
    assert exe, "chromium is required here (make setup-browser)"
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_report_figures_load_and_page_is_not_blank_in_chromium(tmp_path):
    out = tmp_path / "report"
    render_report(_table(), out, run_meta={"name": "browser"})
    html = (out / "report.html").read_text()
    n_figures = html.count("<img ")
    assert n_figures == 4 and "<script" not in html
    probe = out / "probe.html"
    probe.write_text(html.replace("</body>", PROBE + "</body>"))
    dom = _chromium(["--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], tmp_path, tmp_path / "p1")
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r"images=(\d+) loaded=(\d+) headings=(\d+)", dom.stdout)
    assert found, dom.stdout[-2000:]
    assert (int(found[1]), int(found[2])) == (n_figures, n_figures)
    assert int(found[3]) >= 7  # Decision, Figures, ..., Methods
    assert dom.stdout.index("<h2>Decision</h2>") < dom.stdout.index("<h2>Figures</h2>") < dom.stdout.index("<h2>Arms</h2>")

    shot = tmp_path / "shot.png"
    res = _chromium([f"--screenshot={shot}", "--window-size=1280,3000", (out / "report.html").as_uri()],
                    tmp_path, tmp_path / "p2")
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    assert pixels.shape[:2] == (3000, 1280)
    non_white = np.mean(np.any(pixels < 235, axis=2))
    colours = len(np.unique(pixels.reshape(-1, 3)[::7], axis=0))
    assert non_white > 0.05, non_white  # text, tables and figures, not an empty page
    assert colours > 50, colours  # figures bring colour; a blank or error page has a handful
