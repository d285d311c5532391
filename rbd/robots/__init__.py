"""Sample robots shipped with rbd (URDFs written for rbd, with realistic masses).

* ``arm7``: a 7-DoF serial arm, fixed base, about 18 kg moving, tool frame ``tool0``;
* ``quadruped``: a 20 kg quadruped with a floating base (legs FL, FR, HL, HR: hip
  abduction about x, hip flexion and knee about y; foot frames ``<leg>_foot``).

``generated_urdf(n, shape)`` writes synthetic robots of any size (chains and
binary trees of revolute links) for scaling studies and stress tests.
"""
from pathlib import Path

from ..urdf import load_urdf

# name -> loaded with a floating base?
_SAMPLES = {"arm7": False, "quadruped": True}


def generated_urdf(n, shape="chain"):
    """The URDF text of a synthetic robot of ``n`` revolute links (plus a fixed base
    link): ``shape="chain"`` links each to the one before, ``"tree"`` makes a binary
    tree (link i hangs from link i // 2, link 1 from the base: depth log2 n).  Joints
    turn about x, y, z in turn; links are 0.1 kg, 0.1 m apart, with the centre of
    mass off the joint axis, so every term of the dynamics is exercised."""
    if shape not in ("chain", "tree"):
        raise ValueError("shape must be 'chain' or 'tree', not %r" % (shape,))
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("n must be a positive integer, not %r" % (n,))
    inertial = ('<inertial><origin xyz="0.01 0 0.05"/><mass value="0.1"/>'
                '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="5e-5"/></inertial>')
    parts = ['<robot name="%s%d">' % (shape, n), '<link name="l0">%s</link>' % inertial]
    for i in range(1, n + 1):
        parent = i - 1 if shape == "chain" else i // 2
        side = "0" if shape == "chain" else ("0.05" if i % 2 else "-0.05")
        parts.append('<link name="l%d">%s</link>' % (i, inertial))
        parts.append('<joint name="j%d" type="revolute"><parent link="l%d"/><child link="l%d"/>'
                     '<origin xyz="%s 0 0.1"/><axis xyz="%s"/><limit lower="-3" upper="3" effort="1" '
                     'velocity="1"/></joint>' % (i, parent, i, side, ("1 0 0", "0 1 0", "0 0 1")[i % 3]))
    parts.append("</robot>")
    return "".join(parts)


def sample_model_names():
    """The names of the sample robots."""
    return sorted(_SAMPLES)


def sample_model_path(name):
    """The path of a sample robot's URDF file."""
    if name not in _SAMPLES:
        raise ValueError("unknown sample model %r; the samples are %s" % (name, ", ".join(sample_model_names())))
    return str(Path(__file__).with_name(name + ".urdf"))


def sample_model(name, floating_base=None, mimic=False):
    """Load the sample robot ``name`` (one of ``sample_model_names()``), each with its own
    base unless ``floating_base`` (True/False) says otherwise: the quadruped floating, arm7
    fixed; ``mimic`` is ``load_urdf``'s."""
    path = sample_model_path(name)
    if floating_base is None:
        floating_base = _SAMPLES[name]
    return load_urdf(path, floating_base=floating_base, mimic=mimic)
