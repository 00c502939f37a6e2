"""docs/python.md's examples run as written (from the repository's root,
in order, as one program)."""

import re
import subprocess
import sys

import pytest


def test_docs_examples_run(repo, tmp_path):
    pytest.importorskip("torch")
    text = (repo / "docs" / "python.md").read_text()
    program = "\n".join(re.findall(r"```python\n(.*?)```", text, re.S))
    p = subprocess.run([sys.executable, "-c", program], cwd=repo, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "numericalTest=PASS" in p.stdout
