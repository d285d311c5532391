"""Sample robots shipped with rbd (URDFs written for rbd, with realistic masses).

* ``arm7``: a 7-DoF serial arm, fixed base, about 18 kg moving, tool frame ``tool0``;
* ``quadruped``: a 20 kg quadruped with a floating base (legs FL, FR, HL, HR: hip
  abduction about x, hip flexion and knee about y; foot frames ``<leg>_foot``).
"""
from pathlib import Path

from ..urdf import load_urdf

# name -> loaded with a floating base?
_SAMPLES = {"arm7": False, "quadruped": True}


def sample_model_names():
    """The names of the sample robots."""
    return sorted(_SAMPLES)


def sample_model_path(name):
    """The path of a sample robot's URDF file."""
    if name not in _SAMPLES:
        raise ValueError("unknown sample model %r; the samples are %s" % (name, ", ".join(sample_model_names())))
    return str(Path(__file__).with_name(name + ".urdf"))


def sample_model(name):
    """Load a sample robot (the quadruped with its floating base)."""
    return load_urdf(sample_model_path(name), floating_base=_SAMPLES.get(name, False))
