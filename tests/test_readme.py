"""The README's Python examples run as written, on both backends (so the
README stays true): each ```python block is executed in order in one namespace."""
import re
from pathlib import Path

import numpy as np

import rbd

from conftest import HAVE_COMPILED

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_readme_has_examples():
    assert len(python_blocks()) >= 5


def test_readme_examples_run(backend, capsys):
    namespace = {"np": np, "rbd": rbd}
    for block in python_blocks():
        if "import rbd_c" in block and not HAVE_COMPILED:
            continue  # the thread-count example needs the compiled backend
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
        rbd.set_backend(backend)  # a block may switch backends; keep testing the one asked for
    # What the quick start promises: forward dynamics undoes inverse dynamics, batches keep their shape.
    np.testing.assert_allclose(namespace["qdd"], namespace["a"], atol=1e-9)
    assert namespace["TAU"].shape == (1000, 7)
    assert namespace["placement"].shape == (4, 4)
