"""``python -m rbd``: the ``rbd`` command (``rbd/cli.py``).  Without a subcommand,
``python -m rbd [robot]`` is the main job, the demo: it loads a shipped robot and
prints its tree, its mass matrix and one inverse-dynamics result."""
import argparse
import sys

import numpy as np

import rbd
from rbd.cli import CommandError, load_robot, one_line, use_backend


def demo(argv=None):
    parser = argparse.ArgumentParser(prog="rbd", description="The demo: a robot's tree, mass matrix and inverse "
                                     "dynamics (subcommands: check, inverse-dynamics, simulate, bench).")
    parser.add_argument("robot", nargs="?", default="arm7", help="a sample robot (%s), a URDF or an MJCF file"
                        % ", ".join(rbd.sample_model_names()))
    parser.add_argument("--floating-base", action="store_true", help="URDF: add a free flyer")
    parser.add_argument("--mimic", action="store_true", help="URDF: enforce <mimic> joints")
    parser.add_argument("--backend", choices=("numpy", "cython"), help="force a backend")
    args = parser.parse_args(argv)
    try:
        use_backend(args.backend)
        model = load_robot(args.robot, args.floating_base, args.mimic)
    except CommandError as exc:
        parser.error(one_line(exc))

    print(model.tree_string())
    print("backend: %s, nq = %d, nv = %d, frames = %d" % (rbd.backend, model.nq, model.nv, model.nframes))

    # A fixed, reproducible state: a step away from the neutral configuration.
    steps = np.linspace(-0.5, 0.5, model.nv)
    q = rbd.integrate(model, rbd.neutral(model), steps)
    v = np.cos(np.arange(model.nv))
    a = np.sin(np.arange(model.nv))
    with np.printoptions(precision=3, suppress=True, linewidth=150):
        print("\nq =", q)
        print("\nmass matrix M(q) (crba):")
        print(rbd.crba(model, q))
        print("\ninverse dynamics tau = rnea(q, v, a) with v = cos(k), a = sin(k):")
        print(rbd.rnea(model, q, v, a))
        print("\ngravity torques g(q):")
        print(rbd.gravity(model, q))
        tip = model.link_frame_names[-1]
        print("\nworld placement of frame %r:" % tip)
        print(rbd.frame_placement(model, q, tip))
    return 0


if __name__ == "__main__":
    from .cli import command
    command()
