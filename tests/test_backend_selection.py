"""Which backend ``import rbd`` picks, and how it fails.

Each case runs a fresh interpreter (``sys.executable -c ...``) so that the
selection made at import is the one observed.  An absent ``rbd_c`` is simulated
by ``sys.modules['rbd_c'] = None`` before ``import rbd``, which makes any
``import rbd_c`` raise ImportError.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rbd

from conftest import HAVE_COMPILED

# The directory holding the rbd this test process imported (and rbd_c, when built
# in place), put first on the child's path so it imports the same code.
_SOURCE_ROOT = str(Path(rbd.__file__).resolve().parent.parent)

_BLOCK_COMPILED = "import sys; sys.modules['rbd_c'] = None\n"

_REPORT = """
import json, rbd
compiled = sys.modules.get('rbd_c')
print(json.dumps({
    "backend": rbd.backend,
    "bound_to_reference": all(getattr(rbd, f) is getattr(rbd.reference, f) for f in ("rnea", "crba", "aba")),
    "bound_to_compiled": compiled is not None
        and all(getattr(rbd, f) is getattr(compiled, f) for f in ("rnea", "crba", "aba")),
}))
"""


def run_python(code, backend_env=None, block_compiled=False):
    """Run ``code`` in a fresh interpreter; RBD_BACKEND is set to ``backend_env``
    or removed when None.  Returns the CompletedProcess."""
    env = dict(os.environ)
    env.pop("RBD_BACKEND", None)
    if backend_env is not None:
        env["RBD_BACKEND"] = backend_env
    env["PYTHONPATH"] = os.pathsep.join([_SOURCE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    prelude = "import sys\n" + (_BLOCK_COMPILED if block_compiled else "")
    return subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=_SOURCE_ROOT)


def selection(backend_env=None, block_compiled=False):
    proc = run_python(_REPORT, backend_env, block_compiled)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_env_numpy_selects_numpy():
    report = selection("numpy")
    assert report["backend"] == "numpy"
    assert report["bound_to_reference"]


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_env_cython_selects_cython():
    report = selection("cython")
    assert report["backend"] == "cython"
    assert report["bound_to_compiled"]


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_default_is_cython_when_compiled_is_importable():
    report = selection(None)
    assert report["backend"] == "cython"
    assert report["bound_to_compiled"]


def test_default_falls_back_to_numpy_silently_without_compiled():
    proc = run_python(_REPORT, None, block_compiled=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["backend"] == "numpy"
    assert report["bound_to_reference"]
    assert "Traceback" not in proc.stderr


def test_env_numpy_does_not_need_compiled():
    report = selection("numpy", block_compiled=True)
    assert report["backend"] == "numpy"


def test_forcing_cython_without_compiled_raises_import_error_with_build_hint():
    code = """
try:
    import rbd
except ImportError as exc:
    print("IMPORT-ERROR:", exc)
else:
    print("IMPORTED:", rbd.backend)
"""
    proc = run_python(code, "cython", block_compiled=True)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "IMPORT-ERROR:" in out, out
    message = out.split("IMPORT-ERROR:", 1)[1]
    assert "rbd_c" in message
    assert "pip install" in message or "build_ext" in message, message


def test_set_backend_cython_without_compiled_raises_and_keeps_numpy():
    code = """
import rbd
try:
    rbd.set_backend("cython")
except ImportError as exc:
    print("IMPORT-ERROR", rbd.backend, rbd.rnea is rbd.reference.rnea)
else:
    print("SWITCHED", rbd.backend)
"""
    proc = run_python(code, "numpy", block_compiled=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["IMPORT-ERROR", "numpy", "True"], proc.stdout


def test_set_backend_rejects_unknown_name():
    before = rbd.backend
    with pytest.raises(ValueError):
        rbd.set_backend("bogus")
    for not_a_name in (None, 1, b"numpy"):
        with pytest.raises(TypeError, match="backend must be 'numpy' or 'cython', got"):
            rbd.set_backend(not_a_name)
    assert rbd.backend == before
    try:
        rbd.set_backend(" NumPy ")  # spelt as RBD_BACKEND may be: case and spaces do not count
        assert rbd.backend == "numpy"
    finally:
        rbd.set_backend(before)


def test_set_backend_switches_at_run_time():
    code = """
import rbd
rbd.set_backend("numpy")
first = (rbd.backend, rbd.rnea is rbd.reference.rnea)
rbd.set_backend("cython")
import rbd_c
print(first[0], first[1], rbd.backend, rbd.rnea is rbd_c.rnea)
"""
    if not HAVE_COMPILED:
        pytest.skip("rbd_c is not built")
    proc = run_python(code, None)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["numpy", "True", "cython", "True"], proc.stdout


def test_an_unknown_backend_in_the_environment_names_the_variable():
    proc = run_python("import rbd", "cuda")
    assert proc.returncode != 0
    assert "RBD_BACKEND must be 'numpy' or 'cython'" in proc.stderr and "'cuda'" in proc.stderr


@pytest.mark.skipif(not HAVE_COMPILED, reason="rbd_c is not built")
def test_every_algorithm_has_one_signature_on_both_backends():
    """help() and inspect.signature show the same parameters, out= included, whichever
    backend runs (the NumPy backend's showed its inner function's, without out=); written
    here from API.md for a few, compared for every one."""
    import inspect
    import rbd_c
    from rbd._names import ALGORITHMS, COMPOSED
    for name in list(ALGORITHMS) + list(COMPOSED):
        ours = inspect.signature(getattr(rbd.reference, name))
        assert ours == inspect.signature(getattr(rbd_c, name)), name
        assert list(ours.parameters)[0] == "model", name
    assert str(inspect.signature(rbd.reference.rnea)) == "(model, q, v, a, fext=None, *, out=None)"
    assert str(inspect.signature(rbd.reference.frame_jacobian)) == "(model, q, frame, reference='local', *, out=None)"
