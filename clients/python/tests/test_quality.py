"""The package (generated and hand-written) type-checks strictly and is lint clean."""

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def test_mypy_strict() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=PACKAGE, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "src", "tests"], cwd=PACKAGE, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
