"""A malformed model, an input of the wrong shape and one of the wrong
element type raise IpuError subclasses carrying the diagnostic's location;
none crashes the interpreter (each runs in a subprocess, which must exit 0
after catching the exception)."""

import subprocess
import sys
import textwrap

import pytest

def run_with(array: str) -> str:
    """A program that runs the small model with input x = ``array``."""
    return f"""
        c = ipu_stack.compile(SMALL, target="test16")
        try:
            c.run({{"x": {array}}}, device_lock=LOCK)
        except ipu_stack.InputError as e:
            print("LOCATION", e.location); print("MESSAGE", e.message)
        """


CASES = {
    "malformed model": (
        """
        try:
            ipu_stack.compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\\n  %y = nn.bogus %x\\n}\\n", target="test16")
        except ipu_stack.ModelError as e:
            print("LOCATION", e.location); print("MESSAGE", e.message)
        """,
        "LOCATION <python>:2:",
    ),
    "shape mismatch": (run_with("np.zeros((16, 31), np.float32)"), "LOCATION <python>:1:"),
    "wrong dtype": (run_with("np.zeros((16, 32), np.float64)"), "LOCATION <python>:1:"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_errors_are_exceptions_with_a_location(case, lock):
    body, want = CASES[case]
    prog = "import numpy as np, ipu_stack\nfrom conftest import SMALL\nLOCK = %r\n" % lock
    prog += textwrap.dedent(body) + "print('ALIVE')\n"
    here = __import__("os").path.dirname(__file__)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, cwd=here, timeout=300)
    assert p.returncode == 0, p.stderr
    assert want in p.stdout, p.stdout
    assert "ALIVE" in p.stdout
    if case == "wrong dtype":
        assert "f64" in p.stdout and "f32" in p.stdout
