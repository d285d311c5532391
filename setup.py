"""Build script: only the compiled extensions live here; metadata is in pyproject.toml.

Environment switches (one switch for build and run time, like msgpack):
  RBD_NO_EXTENSIONS=1   skip the Cython extensions (pure NumPy install).
  RBD_REQUIRE_EXTENSIONS=1   make a failed compile fatal (CI sets this).
  RBD_CYTHON_DEBUG=1    compile with bounds checking on.
  RBD_NO_X86_64_V3=1    skip the second copy of the modules compiled for x86-64-v3.

On x86-64 with gcc every module is compiled twice: for the baseline (rbd_c/) and for
x86-64-v3 (AVX2, FMA: rbd_c/_v3/), and rbd_c picks the copy the CPU runs when it is
imported (never -march=native: an installed package runs on any machine).
"""
import glob
import os
import platform
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext


def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class OptionalBuildExt(build_ext):
    """Let a failed compile fall back to the NumPy path with a visible warning; compile the
    modules on every core unless told otherwise (-j): each is compiled twice on x86-64, and
    one after the other an install took four minutes on two cores."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:  # (the cores this process may run on: a CI container's share)
            self.parallel = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

    def run(self):
        if self.inplace:
            v3_dir = V3_PACKAGE.replace(".", os.sep)
            if any(ext.name.startswith(V3_PACKAGE + ".") for ext in self.extensions):
                os.makedirs(v3_dir, exist_ok=True)  # (no package of its own)
            else:  # built without the copy: an older copy left here would be imported instead
                for stale in glob.glob(os.path.join(v3_dir, "*.so")) + glob.glob(os.path.join(v3_dir, "*.pyd")):
                    os.remove(stale)
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler failure
            self._warn_or_raise(exc)

    def build_extensions(self):
        extra = self._accepted(STRINGOP_FLAGS) if X86_64 else []
        for ext in self.extensions:
            ext.extra_compile_args = list(ext.extra_compile_args) + extra
        super().build_extensions()

    def _accepted(self, flags):
        """flags if the compiler takes them (gcc does; others may refuse), else none."""
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "probe.c")
            with open(probe, "w") as f:
                f.write("int rbd_probe(void) { return 0; }\n")
            try:
                self.compiler.compile([probe], output_dir=tmp, extra_postargs=flags)
            except Exception:  # noqa: BLE001 - any refusal
                return []
        return flags

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            if ext.name.startswith(V3_PACKAGE + "."):  # (the baseline copy serves: never fatal)
                sys.stderr.write("\n*** rbd: the x86-64-v3 copy of %s was not built (%s); the baseline "
                                 "copy serves.\n\n" % (ext.name, exc))
                stale = self.get_ext_fullpath(ext.name)
                if self.inplace and os.path.exists(stale):  # (an older build's: never imported)
                    os.remove(stale)
                return
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


V3_PACKAGE = "rbd_c._v3"
X86_64 = platform.machine().lower() in ("x86_64", "amd64")

# On x86-64 gcc expands a memset or memcpy of a known size up to a few hundred bytes (the
# SIMD lanes' 8-sample rows) as `rep stos`/`rep movs`, slow to start: vector loops instead,
# up to 2 KB (batched aba 19% faster on Talos, M^-1 12-28%); larger sizes still call libc.
STRINGOP_FLAGS = ["-mmemset-strategy=vector_loop:2048:noalign,libcall:-1:noalign",
                  "-mmemcpy-strategy=vector_loop:2048:noalign,libcall:-1:noalign"]


def _x86_64_v3_copies(exts):
    """The modules again, compiled for x86-64-v3, as rbd_c._v3.<name>: each from a one-line
    C file under build/ that includes the baseline's generated C (the same code, so the
    same module; rbd_c/__init__.py puts rbd_c/_v3 first on its path when the CPU runs it).
    Only on Linux x86-64; rbd_c._cpu, which decides, stays baseline only (and answers "no"
    unless gcc built it: other compilers' builds use the baseline copy)."""
    if (_flag("RBD_NO_X86_64_V3") or sys.platform not in ("linux",)
            or not X86_64):
        return []
    from setuptools import Extension
    here = os.path.dirname(os.path.abspath(__file__))
    wrappers = os.path.join("build", "rbd_c_v3")
    os.makedirs(wrappers, exist_ok=True)
    copies = []
    for ext in exts:
        name = ext.name.rsplit(".", 1)[1]
        if name == "_cpu":
            continue
        wrapper = os.path.join(wrappers, name + ".c")
        text = '#include "%s"\n' % os.path.join(here, "rbd_c", name + ".c").replace("\\", "/")
        if os.path.exists(wrapper):
            with open(wrapper) as f:
                current = f.read()
        else:
            current = None
        if current != text:  # (rewritten only when it changes: no needless rebuild)
            with open(wrapper, "w") as f:
                f.write(text)
        copies.append(Extension(
            V3_PACKAGE + "." + name, [wrapper], include_dirs=ext.include_dirs,
            depends=list(ext.depends) + list(ext.sources), extra_compile_args=ext.extra_compile_args
            + ["-march=x86-64-v3"], extra_link_args=ext.extra_link_args, define_macros=ext.define_macros))
    return copies


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
    if not exts:  # (an sdist without its sources would install the NumPy path without a word)
        message = "*** rbd: no Cython sources (rbd_c/*.pyx) to build: NumPy path only.\n"
        if _flag("RBD_REQUIRE_EXTENSIONS"):
            raise RuntimeError(message.strip("*\n "))
        sys.stderr.write(message)
    debug = _flag("RBD_CYTHON_DEBUG")
    built = cythonize(
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
    return built + _x86_64_v3_copies(built)


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
