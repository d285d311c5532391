"""Random kinematic trees for the tests: every joint kind, fixed links, branches.

``random_model(seed)`` builds, with ``rbd.ModelBuilder``, a tree whose first
joints go once through every joint type (revolute about x, y, z and about a
random axis, continuous, prismatic, spherical, planar, fixed, floating) and
whose other joints are drawn at random; each new link hangs from a random
earlier link, so the tree branches.  Links have random masses, centers of mass
and physically valid rotational inertias; joint origins are random poses;
some revolute and prismatic joints get finite limits.  A few tool frames are
added on random links.  ``floating_base=True`` puts a free flyer at the root.
"""
import itertools
import warnings

import numpy as np

import rbd

# (URDF-style type, axis): None means a random unit axis.
JOINT_TYPES = (
    ("revolute", (1.0, 0.0, 0.0)),
    ("revolute", (0.0, 1.0, 0.0)),
    ("revolute", (0.0, 0.0, 1.0)),
    ("revolute", None),
    ("continuous", None),
    ("prismatic", None),
    ("spherical", (0.0, 0.0, 1.0)),
    ("planar", (0.0, 0.0, 1.0)),
    ("fixed", (0.0, 0.0, 1.0)),
    ("floating", (0.0, 0.0, 1.0)),
)


def random_rotation(rng):
    """A uniformly random rotation matrix (QR of a Gaussian matrix, sign-fixed)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_pose(rng, scale=0.4):
    pose = np.eye(4)
    pose[:3, :3] = random_rotation(rng)
    pose[:3, 3] = rng.normal(scale=scale, size=3)
    return pose


def random_inertia(rng):
    """(mass, com, rotational inertia about the com) of a plausible body."""
    mass = rng.uniform(0.3, 3.0)
    com = rng.normal(scale=0.15, size=3)
    principal = np.sort(rng.uniform(0.02, 0.3, size=3))
    principal[2] = min(principal[2], 0.99 * (principal[0] + principal[1]))  # triangle inequality
    axes = random_rotation(rng)
    return mass, com, axes @ np.diag(principal) @ axes.T


def random_model(seed, nlinks=12, floating_base=True, nframes=3, payload=None, chain=False):
    """``payload = (link, mass, com, inertia)`` adds a link of that inertia fixed to
    ``link`` at its origin (the builder merges it into the link's body); ``chain``:
    each link hangs from the one before (a deep tree), else from a random one."""
    rng = np.random.default_rng(seed)
    builder = rbd.ModelBuilder("random_tree_%d" % seed)
    mass, com, inertia = random_inertia(rng)
    builder.add_link("link0", mass=mass, com=com, inertia=inertia)
    links = ["link0"]
    kinds = list(range(len(JOINT_TYPES)))
    kinds += list(rng.integers(0, len(JOINT_TYPES), size=max(0, nlinks - 1 - len(kinds))))
    for n, k in enumerate(kinds[: nlinks - 1], start=1):
        joint_type, axis = JOINT_TYPES[k]
        if axis is None:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
        name = "link%d" % n
        mass, com, inertia = random_inertia(rng)
        builder.add_link(name, mass=mass, com=com, inertia=inertia)
        limits = {}
        if joint_type in ("revolute", "prismatic") and rng.uniform() < 0.5:
            lower = rng.uniform(-2.0, 0.0)
            limits = dict(lower=lower, upper=lower + rng.uniform(0.1, 2.0))
        parent = links[-1] if chain else links[int(rng.integers(0, len(links)))]
        builder.add_joint("joint%d" % n, joint_type, parent=parent, child=name,
                          origin=random_pose(rng), axis=axis, **limits)
        links.append(name)
    for n in range(nframes):
        builder.add_frame("tool%d" % n, links[int(rng.integers(0, len(links)))], origin=random_pose(rng))
    if payload is not None:
        link, mass, com, inertia = payload
        builder.add_link("payload", mass=mass, com=com, inertia=inertia)
        builder.add_joint("payload_fixed", "fixed", parent=link, child="payload")
    return builder.build(floating_base=floating_base)


def random_state(model, rng, batch=()):
    """A valid random (q, v, a, tau, fext) with leading ``batch`` dimensions."""
    q = rbd.random_configuration(model, rng) if batch == () else np.stack(
        [rbd.random_configuration(model, rng) for _ in range(int(np.prod(batch)))]).reshape(batch + (model.nq,))
    v = rng.normal(size=batch + (model.nv,))
    a = rng.normal(size=batch + (model.nv,))
    tau = rng.normal(scale=5.0, size=batch + (model.nv,))
    fext = rng.normal(scale=2.0, size=batch + (model.nbodies, 6))
    return q, v, a, tau, fext


REFERENCES = ("local", "world", "local_world_aligned")


def algorithm_calls(q, v, a, tau, fext, q1, frames):
    """(name, args, kwargs) for every algorithm of the API on one state
    (``q1`` is a second configuration for ``difference``), every frame of
    ``frames`` in every reference."""
    calls = [
        ("integrate", (q, v), {}),
        ("difference", (q, q1), {}),
        ("integrate_jacobians", (q, v), {}),
        ("difference_jacobians", (q, q1), {}),
        ("normalize", (q,), {}),
        ("forward_kinematics", (q,), {}),
        ("frame_placements", (q,), {}),
        ("center_of_mass", (q,), {}),
        ("com_jacobian", (q,), {}),
        ("rnea", (q, v, a), {}),
        ("rnea", (q, v, a), {"fext": fext}),
        ("gravity", (q,), {}),
        ("nonlinear_effects", (q, v), {}),
        ("crba", (q,), {}),
        ("aba", (q, v, tau), {}),
        ("aba", (q, v, tau), {"fext": fext}),
        ("coriolis_matrix", (q, v), {}),
        ("kinetic_energy", (q, v), {}),
        ("potential_energy", (q,), {}),
        ("centroidal_momentum", (q, v), {}),
        ("centroidal_momentum_matrix", (q,), {}),
        ("centroidal_momentum_matrix_time_variation", (q, v), {}),
        ("rnea_derivatives", (q, v, a), {}),
        ("rnea_derivatives", (q, v, a), {"fext": fext}),
        ("aba_derivatives", (q, v, tau), {}),
        ("aba_derivatives", (q, v, tau), {"fext": fext}),
        ("inverse_mass_matrix", (q,), {}),
    ]
    for frame in frames:
        calls.append(("frame_placement", (q, frame), {}))
        for reference in REFERENCES:
            calls += [
                ("frame_velocity", (q, v, frame), {"reference": reference}),
                ("frame_acceleration", (q, v, a, frame), {"reference": reference}),
                ("frame_jacobian", (q, frame), {"reference": reference}),
                ("frame_jacobian_time_derivative", (q, v, frame), {"reference": reference}),
                ("frame_velocity_derivatives", (q, v, frame), {"reference": reference}),
                ("frame_acceleration_derivatives", (q, v, a, frame), {"reference": reference}),
            ]
    return calls


def contacts_on(model, q=None):
    """A point, a flat and a point contact (local axes) on three bodies whose 12
    constraints are independent at q (the first such triple, deepest bodies first)."""
    q = rbd.neutral(model) if q is None else q
    depth = [0] * model.nbodies
    for i, p in enumerate(model.parents):
        depth[i] = 0 if p < 0 else depth[p] + 1
    order = sorted(range(model.nbodies), key=lambda i: -depth[i])
    for a, b, c in itertools.permutations(order[:8], 3):
        contacts = [rbd.Contact(model.joint_frame(a), 3), rbd.Contact(model.joint_frame(b), 6, "local"),
                    rbd.Contact(model.joint_frame(c), 3, "local")]
        if np.linalg.matrix_rank(rbd.contact_jacobian(model, q, contacts), tol=1e-6) == 12:
            return contacts
    raise AssertionError("no independent contact triple on this tree")


def m_inverse_slack(M, Minv):
    """How far rounding M (a relative 1e-16 per entry, summed over nv) can move M^-1:
    |d(M^-1)| <= |M^-1|^2 |dM|, with a factor 8 for the orders of the two computations."""
    nv = M.shape[-1]
    return 8.0 * nv * np.finfo(float).eps * float(np.max(np.abs(Minv))) ** 2 * float(np.max(np.abs(M)))


def aba_slack(model, q, qdd):
    """How far rounding M can move forward dynamics' qdd = M^-1 (tau - b): qdd moved by
    solving with M's entries perturbed by a few rounding errors (nv eps, relative, along
    random symmetric directions; the most of three, times 4).  Two forms of ABA (the
    batches' lanes and one sample) round differently, and M's conditioning amplifies it.
    M from the NumPy backend, the solves NumPy's."""
    import rbd
    M = rbd.reference.crba(model, q)
    rhs = np.einsum("...ij,...j->...i", M, qdd)
    rng = np.random.default_rng(0)
    slack = 0.0
    for _ in range(3):
        E = rng.standard_normal(M.shape)
        E = (E + np.swapaxes(E, -1, -2)) * (model.nv * np.finfo(float).eps)
        moved = np.linalg.solve(M + M * E, rhs[..., None])[..., 0]
        slack = max(slack, float(np.max(np.abs(moved - qdd))))
    return 4.0 * slack


def aba_derivatives_slack(model, q, v, tau, fext, Minv):
    """How far rounding M can move aba_derivatives' outputs: M^-1 by m_inverse_slack, and
    -M^-1 dtau/dx by that times nv |dtau/dx|."""
    import rbd
    slack = m_inverse_slack(rbd.crba(model, q), Minv)
    qdd = rbd.aba(model, q, v, tau, fext)
    dtau = rbd.rnea_derivatives(model, q, v, qdd, fext)
    return slack * (1.0 + model.nv * max(float(np.max(np.abs(d))) for d in dtau[:2]))



def topological_tree(seed, n=10, free=False):
    """A model whose bodies are parents first but not depth first (as Pinocchio models
    built joint by joint may be, and from_pinocchio keeps their order): a deep chain
    with side branches numbered in between, every joint kind, built with rbd.Model."""
    rng = np.random.default_rng(seed)
    parents, chain_end = [-1], 0
    for i in range(1, n):
        if rng.random() < 0.6:
            parents.append(chain_end)
            chain_end = i
        else:
            parents.append(int(rng.integers(0, i)))
    kinds = [rbd.JointKind(int(k)) for k in rng.integers(0, 7, size=n)]
    if free:
        kinds[0] = rbd.JointKind.FREE
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    for i, k in enumerate(kinds):
        if k in (rbd.JointKind.REVOLUTE_X, rbd.JointKind.REVOLUTE_Y, rbd.JointKind.REVOLUTE_Z):
            axes[i] = np.eye(3)[int(k)]
    placements = np.tile(np.eye(4), (n, 1, 1))
    placements[:, :3, 3] = rng.normal(size=(n, 3)) * 0.2
    inertias = np.array([[1.0, *(rng.normal(size=3) * 0.05), 0.2, 0.01, 0.0, 0.2, 0.02, 0.2] for _ in range(n)])
    nq = sum(rbd.model.JOINT_KINDS[k].nq for k in kinds)
    nv = sum(rbd.model.JOINT_KINDS[k].nv for k in kinds)
    return rbd.Model("parents_first_%d" % seed, parents, [int(k) for k in kinds], axes, placements, inertias,
                     ["j%d" % i for i in range(n)], ["b%d" % i for i in range(n)], ["tip"], [n - 1],
                     np.eye(4)[None], np.full(nq, -np.inf), np.full(nq, np.inf), np.ones(nv), np.ones(nv))


def two_sliders_model():
    """Two point masses, each on a slider on a massless hinged link: a slider at 0 puts its
    mass on its hinge's axis, and that hinge alone is singular (a bulk chain beside them
    makes a batch worth two threads)."""
    b = rbd.ModelBuilder("sliders")
    b.add_link("base", mass=1.0, com=[0, 0, 0], inertia=np.eye(3) * 0.1)
    for k in (1, 2):
        b.add_link("arm%d" % k)
        b.add_link("mass%d" % k, mass=1.0, com=[0, 0, 0], inertia=np.zeros((3, 3)))
        b.add_joint("hinge%d" % k, "revolute", "base", "arm%d" % k, axis=(0, 0, 1))
        b.add_joint("slide%d" % k, "prismatic", "arm%d" % k, "mass%d" % k, axis=(1, 0, 0))
    parent = "base"
    for i in range(10):
        b.add_link("c%d" % i, mass=1.0, com=[0, 0, -0.2], inertia=np.diag([0.01, 0.02, 0.015]))
        b.add_joint("cj%d" % i, "revolute", parent, "c%d" % i, axis=(1, 0, 0) if i % 2 else (0, 1, 0))
        parent = "c%d" % i
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the massless arms)
        return b.build(floating_base=True)
