"""Every algorithm of the API is documented, with the same text on both backends."""
import rbd
from rbd._docs import COMPOSED_DOCS, DOCS

from conftest import HAVE_COMPILED


def test_every_algorithm_has_one_text_on_both_backends():
    assert set(DOCS) == set(rbd.ALGORITHMS) and set(COMPOSED_DOCS) == set(rbd.COMPOSED)
    previous = rbd.backend
    try:
        texts = {}
        for name in ["numpy"] + (["cython"] if HAVE_COMPILED else []):
            rbd.set_backend(name)
            texts[name] = {f: getattr(rbd, f).__doc__ for f in rbd.ALGORITHMS + rbd.COMPOSED}
    finally:
        rbd.set_backend(previous)
    for f, text in texts["numpy"].items():
        assert text.startswith(f + "(") and "(" in text and "Batches" in text, f
        if HAVE_COMPILED:
            assert texts["cython"][f] == text, f
