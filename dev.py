"""Set up a virtual environment and run tapeflow's demo, tests, docs or benchmarks.

Needs only Python 3.10+:

    python3 dev.py demo     # create .venv, install tapeflow, run examples/quickstart.py
    python3 dev.py test     # create .venv, install tapeflow + test tools, run the test suite
    python3 dev.py docs     # build the documentation site strictly
    python3 dev.py bench    # run the benchmarks

Set ORACLE=1 to also install PyTorch 2.13.0 (CPU) as the tests' reference implementation.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed"


def run(*cmd, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kw)


def setup() -> None:
    """Create .venv and install tapeflow with its extras (once; again when pyproject.toml changes)."""
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    pyproject = ROOT / "pyproject.toml"
    if not STAMP.exists() or STAMP.stat().st_mtime < pyproject.stat().st_mtime:
        run(PY, "-m", "pip", "install", "-q", "--upgrade", "pip")
        run(PY, "-m", "pip", "install", "-q", "-e", ".[test,docs,examples]")
        STAMP.touch()
    if os.environ.get("ORACLE") == "1":
        probe = subprocess.run([str(PY), "-c", "import torch"], capture_output=True)
        if probe.returncode != 0:
            run(PY, "-m", "pip", "install", "-q", "torch==2.13.0")


def _parallel(args: list[str]) -> list[str]:
    """pytest-xdist options: one worker per core (at most 4; TEST_WORKERS overrides), unless `-n` is given."""
    if "-n" in args or any(a.startswith("--numprocesses") for a in args):
        return []
    workers = int(os.environ.get("TEST_WORKERS", min(os.cpu_count() or 1, 4)))
    return ["-n", str(workers), "--dist", "worksteal"] if workers > 1 else []


def main(argv: list[str]) -> int:
    task = argv[0] if argv else "test"
    setup()
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    if task == "demo":
        run(PY, "examples/quickstart.py", env=env)
    elif task == "test":
        run(PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_parallel(argv[1:]), "tests", *argv[1:], env=env)
    elif task == "docs":
        run(BIN / "mkdocs", "build", "--strict", "-q", env=env)
    elif task == "bench":
        run(PY, "benchmarks/run_all.py", *argv[1:], env=env)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as e:
        sys.exit(e.returncode)
