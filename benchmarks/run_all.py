"""Run every benchmark script in this folder, one process each.

Run: python benchmarks/run_all.py [name ...]
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def main(names: list[str]) -> int:
    scripts = sorted(p for p in HERE.glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py")
    if names:
        scripts = [p for p in scripts if p.stem in names]
    failed = 0
    for script in scripts:
        print(f"\n===== {script.name} =====", flush=True)
        failed += subprocess.call([sys.executable, script.name], cwd=HERE) != 0
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
