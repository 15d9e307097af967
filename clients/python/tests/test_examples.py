"""The Python examples of the client's README and docs/clients.md, run against the service."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from .conftest import REPOSITORY

DOCUMENTS = [REPOSITORY / "clients" / "python" / "README.md", REPOSITORY / "docs" / "clients.md"]
EXAMPLES = [
    pytest.param(block, id=f"{document.relative_to(REPOSITORY)}#{index}")
    for document in DOCUMENTS
    for index, block in enumerate(re.findall(r"^```python\n(.*?)^```$", document.read_text(encoding="utf-8"), flags=re.S | re.M))
]


def test_every_document_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("code", EXAMPLES)
def test_example_runs(code: str, service: dict[str, str]) -> None:
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, **service}, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout
