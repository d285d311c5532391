"""rbd_c: the compiled (Cython) backend of rbd.

It mirrors ``rbd.spatial`` and the algorithms of ``rbd.reference`` under the
same names and signatures.  Importing it raises ImportError when the extension
modules were not built, which is how ``rbd`` falls back to NumPy.
"""
from ._spatial import *  # noqa: F401,F403  (ImportError here means "not built")
