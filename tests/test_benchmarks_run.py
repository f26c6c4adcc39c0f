"""Smoke test of ``benchmarks/run.py --quick``: every section runs and prints numeric ratios.

Benchmarks are not timed tests: nothing here looks at how fast anything was. What it does check
is that the script still runs end to end against the real sandbox (each deletion it makes must
succeed, or the script fails), that every section reports its figures, that ``%load_ext`` pulls
in none of the heavy modules, and that no sandbox secret reaches the output.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "run.py"
SECTIONS = {
    "[0]": "targets",
    "[1]": "load_ext",
    "[2]": "per_delete",
    "[3]": "bulk",
    "[3b]": "memory",
    "[4]": "cli",
    "[5]": "network",
    "[6]": "rate_limit",
    "[7]": "listing",
    "[8]": "lint",
    "[10]": "bulk_restore",
    "[11]": "glossary",
    "[12]": "impact",
    "[13]": "undo",
}
RATIO = re.compile(r"^\s+ratio (\S+) = (\S+)", re.MULTILINE)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, dict]:
    figures = tmp_path_factory.mktemp("bench") / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--json", str(figures)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, f"benchmarks failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout, proc.stderr, json.loads(figures.read_text(encoding="utf-8"))


def _sections(output: str) -> dict[str, str]:
    """The text of each ``== [n] ... ==`` section, by its tag."""
    parts = re.split(r"^== (\[\w+\]) .*==$", output, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.timeout(900)
def test_every_section_prints_numeric_ratios(quick_run: tuple[str, str, dict]) -> None:
    stdout, _, _ = quick_run
    sections = _sections(stdout)
    assert set(sections) == set(SECTIONS), f"sections printed: {sorted(sections)}"
    for tag, text in sections.items():
        ratios = RATIO.findall(text)
        assert ratios, f"section {tag} printed no ratio:\n{text}"
        for name, value in ratios:
            number = float(value)
            least = 0 if name == "kept_429_share" else 1e-9  # the next batch: none refused
            assert math.isfinite(number) and number >= least, f"{tag} {name} = {value}"


@pytest.mark.timeout(900)
def test_targets_are_stated_with_a_verdict(quick_run: tuple[str, str, dict]) -> None:
    stdout, _, _ = quick_run
    judged = re.findall(r"ratio (\S+) = \S+  \(target <= [\d.]+: (PASS|MISS)\)", stdout)
    names = {name for name, _ in judged}
    assert {"load_ext/instance", "magic/hand", "bulk_8_workers/limit"} <= names
    assert "cli_8_workers/limit" in names
    assert {
        "tls_rtt20_cell_magic/hand_loop",
        "loopback_cell_magic/cell_hand",
        "client_time/limit",
        "client_429_share",
        "listing/get_json",
        "listing_html/limit",
    } <= names


@pytest.mark.timeout(900)
def test_the_new_sections_measure_before_and_after_side_by_side(
    quick_run: tuple[str, str, dict],
) -> None:
    """Not a timing: the cache-off ("before") cells, the naive pool and the listing baseline
    are measured in the same run, and every deletion under the rate limit went through."""
    stdout, _, figures = quick_run
    names = dict(RATIO.findall(stdout))
    for network in ("tls_rtt20", "loopback"):
        assert f"{network}_cell_magic_before/hand_loop" in names
        assert f"{network}_cell_magic_max_age/hand_loop" in names  # issue 22, item 6
        assert set(figures["network"][network]["ms"]) == {
            "cell_magic",
            "cell_magic_max_age",
            "cell_magic_no_snapshot",
            "cell_magic_before",
            "hand_loop",
            "cell_hand",
        }
    assert {"naive_time/limit", "naive_429_share"} <= set(names)
    limited = figures["rate_limit"]
    assert limited["client"]["left"] == 0 and limited["kept"]["left"] == 0
    assert {"first_time/limit", "kept_time/limit", "targets_rate_limit_kept"} <= set(names)
    assert all(
        run["deleted"] == run["requests"] - run["limited"]
        for variant in ("client", "first", "kept")
        for run in limited[variant]["runs"]
    )
    listing = figures["listing"]
    assert listing["html_bytes"] < 200 * 1024 and listing["peak_bytes_per_entry"] > 0


@pytest.mark.timeout(900)
def test_load_ext_imports_no_heavy_module(quick_run: tuple[str, str, dict]) -> None:
    """Not a timing: %load_ext must not import requests, urllib3, ipywidgets or keyring."""
    stdout, _, figures = quick_run
    assert "heavy-import check: PASS" in stdout
    assert figures["load_ext"]["heavy"] == []
    imported = figures["load_ext"]["new_modules"]
    assert "dict_magics.frontends.magics" in imported
    assert not [m for m in imported if m.split(".")[0] in ("requests", "urllib3", "keyring")]


@pytest.mark.timeout(900)
def test_figures_file_covers_every_section(quick_run: tuple[str, str, dict]) -> None:
    _, _, figures = quick_run
    assert figures["mode"] == "quick"
    assert set(SECTIONS.values()) <= set(figures)
    assert set(figures["bulk"]) == {"1", "4", "8", "16"}
    counts = [row["count"] for row in figures["memory"]]
    assert counts == sorted(counts) and len(counts) == 3
    assert all(row["succeeded"] == row["count"] for row in figures["memory"])


@pytest.mark.timeout(900)
def test_no_secret_in_the_output(quick_run: tuple[str, str, dict]) -> None:
    stdout, stderr, figures = quick_run
    for text in (stdout, stderr, json.dumps(figures)):
        assert "sandbox-secret-" not in text
