"""rbd: rigid-body dynamics for Python.

Every algorithm of the public API is an attribute of this package and is bound
to the active backend: the compiled ``rbd_c`` when it is built, the pure-NumPy
``rbd.reference`` otherwise.  ``RBD_BACKEND=numpy|cython`` forces a choice at
import; ``rbd.set_backend(name)`` switches at run time; ``rbd.backend`` names
the active one.
"""
import os as _os

from . import reference, rotations, spatial
from ._checks import URDFError, SingularModelError, ResultOverflow, unprefixed as _unprefixed
from .model import Model, ModelBuilder, JointKind, couple_joints
from .editing import add_frame, add_payload, attach, lock_joints
from .contacts import Contact, inertial_parameters, model_from_parameters
from .urdf import load_urdf
from . import interop
from .interop import load_mjcf
from .robots import generated_urdf, sample_model, sample_model_names, sample_model_path

__version__ = "0.1.0"

#: The functions that follow the active backend (see ``set_backend``).
from ._names import ALGORITHMS, COMPOSED  # noqa: E402
from . import _docs  # noqa: E402

backend = None

_BUILD_HINT = (
    "the compiled backend 'rbd_c' is not built. Install a C compiler and the "
    "Python headers, then reinstall rbd from source without RBD_NO_EXTENSIONS "
    "(e.g. `pip install .`), or use RBD_BACKEND=numpy"
)


def _import_compiled():
    try:
        import rbd_c
    except ImportError as exc:
        raise ImportError("rbd: " + _BUILD_HINT + " (%s)" % exc) from exc
    return rbd_c


def set_backend(name):
    """Bind every name of ``ALGORITHMS`` and ``COMPOSED`` to the ``"numpy"`` or ``"cython"`` backend.

    The binding is all or nothing: a backend that lacks one of the names (for
    example a compiled package caught half-initialised) is refused with
    ImportError, and nothing is rebound."""
    global backend
    if not isinstance(name, str):
        raise TypeError("backend must be 'numpy' or 'cython', got %s" % type(name).__name__)
    given, name = name, name.strip().lower()  # (spelt as RBD_BACKEND may be: " NumPy")
    if name not in ("numpy", "cython"):
        raise ValueError("backend must be 'numpy' or 'cython', got %r" % (given,))
    impl = _import_compiled() if name == "cython" else reference
    missing = [fname for fname in ALGORITHMS + COMPOSED if not callable(getattr(impl, fname, None))]
    if missing:
        raise ImportError("rbd: the %s backend lacks %s (is it fully initialised?)"
                          % (name, ", ".join(missing)))
    _docs.apply(impl)  # one text per algorithm, whichever backend runs it
    for fname in ALGORITHMS + COMPOSED:
        globals()[fname] = getattr(impl, fname)
    backend = name


def _select_initial_backend():
    forced = _os.environ.get("RBD_BACKEND", "").strip().lower()
    if forced:
        if forced not in ("numpy", "cython"):
            raise ValueError("RBD_BACKEND must be 'numpy' or 'cython' (or unset: the compiled backend when "
                             "it is built), got %r" % (_os.environ["RBD_BACKEND"],))
        set_backend(forced)
        return
    try:
        set_backend("cython")
    except ImportError:
        set_backend("numpy")


def _running_the_command():
    """Whether this import is the ``rbd`` command's: the console script, or ``python -m rbd``
    (its argv[0] is "-m" while it imports the package, and the command line names rbd)."""
    import sys
    if _os.path.basename(sys.argv[0]) in ("rbd", "rbd.exe"):
        return True
    words = list(getattr(sys, "orig_argv", ()))
    return sys.argv[0] == "-m" and any(w in ("rbd", "rbd.__main__", "-mrbd", "-mrbd.__main__") for w in words)


try:
    _select_initial_backend()
except (ValueError, ImportError) as _exc:  # RBD_BACKEND wrong, or naming a backend not built here
    if not _running_the_command():
        raise
    print("rbd: error: %s" % _unprefixed(_exc), file=__import__("sys").stderr)  # (the command's one line, no traceback)
    raise SystemExit(2) from None
