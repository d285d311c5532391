"""How the cost grows with the robot: rbd_c's RNEA, ABA, forward kinematics and
CRBA on generated chains and binary trees (``rbd.generated_urdf``) of 10 to
10,000 bodies.  RNEA, ABA and the kinematics should cost the same per body at
every size (linear); CRBA grows as bodies x depth.  ``compare.py --growth`` puts
the sizes Pinocchio can hold beside Pinocchio."""
from .common import SkipNotImplemented, States, robot_state

SHAPES = ["chain", "tree"]
BODIES = [10, 100, 300, 1000, 10000]
#: CRBA's n x n output is 800 MB at 10,000 bodies: it stops before
CRBA_LARGEST = 1000


class Growth:
    params = [SHAPES, BODIES]
    param_names = ["shape", "bodies"]
    timeout = 300

    def setup_cache(self):
        return States(self.params, lambda shape, bodies: robot_state("cython", "%s%d" % (shape, bodies)))

    def time_rnea(self, states, *params):
        s = states[params]
        s.impl.rnea(s.model, s.q, s.v, s.a)

    def time_aba(self, states, *params):
        s = states[params]
        s.impl.aba(s.model, s.q, s.v, s.tau)

    def time_forward_kinematics(self, states, *params):
        s = states[params]
        s.impl.forward_kinematics(s.model, s.q)

    def time_crba(self, states, shape, bodies):
        s = states[shape, bodies]
        if bodies > CRBA_LARGEST:
            raise SkipNotImplemented("CRBA's output alone is %d MB here" % (8 * bodies * bodies >> 20))
        s.impl.crba(s.model, s.q)

    peakmem_rnea = time_rnea
    peakmem_aba = time_aba
    peakmem_forward_kinematics = time_forward_kinematics
