"""Build script: only the compiled extensions live here; metadata is in pyproject.toml.

Environment switches (one switch for build and run time, like msgpack):
  RBD_NO_EXTENSIONS=1   skip the Cython extensions (pure NumPy install).
  RBD_REQUIRE_EXTENSIONS=1   make a failed compile fatal (CI sets this).
  RBD_CYTHON_DEBUG=1    compile with bounds checking on.
"""
import glob
import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class OptionalBuildExt(build_ext):
    """Let a failed compile fall back to the NumPy path with a visible warning."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure
            self._warn_or_raise(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._warn_or_raise(exc)

    @staticmethod
    def _warn_or_raise(exc):
        if _flag("RBD_REQUIRE_EXTENSIONS"):
            raise exc
        sys.stderr.write(
            "\n*** rbd: the compiled extensions (rbd_c) could not be built: %s\n"
            "*** rbd will use its pure-NumPy backend. Install a C compiler and the\n"
            "*** Python headers, then reinstall, to get the fast path.\n\n" % exc
        )


def _openmp_flags():
    """OpenMP when the compiler has it (gcc does); serial code otherwise."""
    if _flag("RBD_NO_OPENMP") or sys.platform == "darwin":
        return [], []
    return ["-fopenmp"], ["-fopenmp"]


def extensions():
    if _flag("RBD_NO_EXTENSIONS"):
        return []
    try:
        import numpy
        from Cython.Build import cythonize
    except ImportError as exc:
        if _flag("RBD_REQUIRE_EXTENSIONS"):
            raise
        sys.stderr.write("*** rbd: Cython/NumPy unavailable at build time (%s); NumPy path only.\n" % exc)
        return []
    from setuptools import Extension

    compile_args, link_args = _openmp_flags()
    compile_args = ["-O3", "-fno-math-errno"] + compile_args
    exts = [
        Extension(
            "rbd_c." + os.path.splitext(os.path.basename(path))[0],
            [path],
            include_dirs=[numpy.get_include()],
            depends=sorted(glob.glob(os.path.join("rbd_c", "*.h"))),  # C headers (the SIMD lanes)
            extra_compile_args=compile_args,
            extra_link_args=link_args,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION"),
                           ("NPY_TARGET_VERSION", "NPY_1_22_API_VERSION")],  # memory handlers (_model)
        )
        for path in sorted(glob.glob(os.path.join("rbd_c", "*.pyx")))
    ]
    debug = _flag("RBD_CYTHON_DEBUG")
    return cythonize(
        exts,
        compiler_directives={
            "language_level": "3",
            "boundscheck": debug,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": debug,
            "embedsignature": True,
        },
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
