"""``fitbot estimate`` with listed names starts on what it needs only (issue 33, bench/startup.py): none of
the modules below is imported by a one-shot estimate on a current catalog file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_NEEDED = (
    "asyncio",  # a current catalog file is read with sqlite3
    "logging",  # catalog.store logs only when something goes wrong
    "tomllib",  # the locale messages are read back as JSON, the CPU table only when asked about
    "bot.reply",  # the reply model: the CLI writes setups with bot.labels
    "bot.app.catalog_command",
    "catalog.lookup",  # the question parser: listed names are found by catalog.exact
    "core.custom_device",  # --vram only
    "core.figures",  # --json only
)
ESTIMATE = ["estimate", "--model", "llama-3.1-8b-instruct", "--quant", "Q4_K_M", "--gpu", "rtx 4090"]
PROBE = (
    "import json, sys\nfrom bot.app.cli import main\nmain(json.loads(sys.argv[1]))\n"
    "print(json.dumps(sorted(set(json.loads(sys.argv[2])) & set(sys.modules))), file=sys.stderr)"
)


def test_a_one_shot_estimate_imports_only_what_it_uses(tmp_path):
    env = {**os.environ, "FITBOT_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    argv = [sys.executable, "-c", PROBE, json.dumps(ESTIMATE), json.dumps(NOT_NEEDED)]
    first = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True)  # builds the file
    assert "asyncio" in first.stderr  # the build goes through CatalogStore.load: the probe sees imports
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    assert done.stdout == first.stdout and done.stdout.startswith("Llama 3.1 8B Instruct · Q4_K_M")
