"""Every bench file starts as the README runs it (``python bench/x.py``): as a script, not a module,
so a ``bench.*`` import works only if the file puts the repository root on its path. The shared modules
(``bench/speed_data.py``, ``bench/readme_block.py``, ...) are run the same way: none fails on import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "bench").glob("*.py") if p.name != "__init__.py")


def test_every_bench_script_answers_help_when_run_as_a_script():
    assert SCRIPTS
    running = {
        p.name: subprocess.Popen(
            [sys.executable, str(p), "--help"], cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        for p in SCRIPTS
    }
    failed = {}
    for name, proc in running.items():
        _, err = proc.communicate(timeout=300)
        if proc.returncode != 0:
            failed[name] = err.strip().splitlines()[-1:] if err else proc.returncode
    assert not failed
