"""Contacts, impacts and second-order kinematics, composed from a backend's algorithms.

* ``Contact(frame, dim=3, reference="local_world_aligned")``: a rigid contact on a frame.
  ``dim=3``: a point contact holding the classical acceleration of the frame's origin at
  zero (the linear part of ``frame_acceleration(..., "local_world_aligned")``), its force a
  3-vector; ``dim=6``: a flat contact holding the frame's spatial acceleration
  ``frame_acceleration(..., "local")`` at zero, its force a wrench [f; tau] at the
  frame's origin.  ``reference`` ("local" or "local_world_aligned") gives only the axes
  of the forces and of the Jacobian rows.
* ``contact_jacobian``, ``constrained_dynamics`` (M qdd + h = tau + J^T lambda, J qdd +
  gamma = 0), ``impulse_dynamics`` (M (v+ - v) = J^T Lambda, J v+ = -e J v): here (the
  NumPy backend, and models with mimic joints on both backends) M^-1 J^T and M^-1 (tau - h)
  serve J M^-1 J^T and the solves, from ``inverse_mass_matrix`` or, on the NumPy backend's
  large models, as ABA solves (linear in the model); the compiled backend runs
  them as kernels (``rbd_c/_contacts.pyx``: M factored along the tree, the rows only on
  the contacts' chains).  ``regularization`` > 0 damps the contact system (redundant contacts); a
  rank-deficient set without it is an error naming the contacts.
* ``kinematic_hessian``: H[:, i, k] = d J[:, i] / d q_k along q (+) dq, so H @ v (over k)
  is ``frame_jacobian_time_derivative``: the rows of ``frame_velocity_derivatives`` for
  the unit velocities, in one batched call.
* ``joint_torque_regressor`` and ``inertial_parameters``: rnea is linear in each body's
  inertial parameters [m, m c, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (about the body origin,
  body axes), tau = sum_i J_i^T f_i(pi_i) with J_i the body's local Jacobian;
  ``model_from_parameters`` builds a model from such a vector.

The compositions are the ``*_on(impl, model, ...)`` functions, ``impl`` the backend module
whose algorithms they call: ``rbd.reference`` exports them on itself, ``rbd_c`` on itself for
models with mimic joints (its kernels otherwise), and ``rbd`` binds the active backend's
(``rbd._names.COMPOSED``). Everything takes leading batch dimensions on its state arguments.
"""
import functools
import sys
from dataclasses import dataclass

import numpy as np

from ._checks import (CONTACT_RANK_TOLERANCE, ResultOverflow, as_array, check_model, finite_results,
                      first_nonfinite_sample, flag, model_arrays, overflow_error, real_number, redundant_contacts_error,
                      short_repr)

__all__ = ["Contact", "inertial_parameters", "model_from_parameters"]

_REFERENCES = ("local", "local_world_aligned")
# The public parameter order [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] from the model's storage
# [m, h, Ixx, Ixy, Ixz, Iyy, Iyz, Izz], and back.
_TO_PUBLIC = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])
_TO_STORAGE = np.argsort(_TO_PUBLIC)


@dataclass(frozen=True)
class Contact:
    """A rigid contact on ``frame`` (a name or an index): ``dim`` 3 (a point) or 6 (a flat
    contact), forces and Jacobian rows in ``reference`` axes ("local" or
    "local_world_aligned")."""
    frame: object
    dim: int = 3
    reference: str = "local_world_aligned"

    def __post_init__(self):
        if not isinstance(self.frame, (str, int, np.integer)) or isinstance(self.frame, bool):
            raise TypeError("Contact frame must be a frame name or index, got %s" % short_repr(self.frame))
        if not isinstance(self.dim, (int, np.integer)) or isinstance(self.dim, bool):
            raise TypeError("Contact dim must be the int 3 or 6, got %s" % short_repr(self.dim))
        if self.dim not in (3, 6):
            raise ValueError("Contact dim must be 3 (a point contact) or 6 (a flat contact), got %s"
                             % short_repr(self.dim))
        if not isinstance(self.reference, str) or self.reference not in _REFERENCES:  # (a 0-d array equals one)
            raise ValueError("Contact reference must be 'local' or 'local_world_aligned', got %s"
                             % short_repr(self.reference))


def _contacts(model, contacts):
    if isinstance(contacts, Contact):
        contacts = [contacts]
    if isinstance(contacts, (set, frozenset, dict, str, bytes)) or not hasattr(contacts, "__iter__"):
        raise TypeError("contacts must be a list or tuple of rbd.Contact (in the order of the force rows; one "
                        "Contact alone is a list of one), got %s" % type(contacts).__name__)
    contacts = list(contacts)
    for k, c in enumerate(contacts):
        if not isinstance(c, Contact):
            raise TypeError("contacts must be a list of rbd.Contact, got %s at contacts[%d]" % (type(c).__name__, k))
    for c in contacts:
        model.frame_id(c.frame)  # unknown frames: the ValueError naming them
    return contacts


def _rows(rbd, model, q, v, contacts):
    """The stacked contact Jacobian (..., m, nv) and, if v is given, the drift gamma (..., m)
    with (constrained acceleration) = J qdd + gamma (``rbd``: the backend module)."""
    Js, gammas = [], []
    zero = None if v is None else np.zeros_like(v)
    for c in contacts:
        if c.dim == 3:  # the classical acceleration of the origin: in world axes, then the contact's
            J = rbd.frame_jacobian(model, q, c.frame, "local_world_aligned")[..., :3, :]
            g = None if v is None else rbd.frame_acceleration(model, q, v, zero, c.frame, "local_world_aligned")[..., :3]
            if c.reference == "local":
                Rt = np.swapaxes(rbd.frame_placement(model, q, c.frame)[..., :3, :3], -1, -2)
                J = Rt @ J
                g = None if g is None else (Rt @ g[..., None])[..., 0]
        else:  # the spatial acceleration in local axes, then the contact's
            J = rbd.frame_jacobian(model, q, c.frame, "local")
            g = None if v is None else rbd.frame_acceleration(model, q, v, zero, c.frame, "local")
            if c.reference == "local_world_aligned":
                R = rbd.frame_placement(model, q, c.frame)[..., :3, :3]
                J = np.concatenate([R @ J[..., :3, :], R @ J[..., 3:, :]], axis=-2)
                g = None if g is None else np.concatenate([(R @ g[..., :3, None])[..., 0],
                                                           (R @ g[..., 3:, None])[..., 0]], axis=-1)
        Js.append(J)
        gammas.append(g)
    J = np.concatenate(Js, axis=-2) if Js else np.zeros(np.shape(q)[:-1] + (0, model.nv))
    if v is None:
        return J, None
    return J, (np.concatenate(gammas, axis=-1) if gammas else np.zeros(np.shape(q)[:-1] + (0,)))


def _restitution(value):
    e = real_number(value, "restitution")
    if not 0.0 <= e <= 1.0:
        raise ValueError("restitution must be in [0, 1], got %s" % short_repr(value))
    return e


@functools.partial(finite_results, sample_ndims=(2,))
def contact_jacobian_on(rbd, model, q, contacts):
    """The stacked contact Jacobians (..., m, nv), m the sum of the contacts' dims, in the
    order of ``contacts``."""
    check_model(model)
    contacts = _contacts(model, contacts)
    _, (q,) = model_arrays(model, q=q)
    return _rows(rbd, model, q, None, contacts)[0]


def _regularization(value):
    r = real_number(value, "regularization")
    if not (r >= 0.0 and np.isfinite(r)):
        raise ValueError("regularization must be a finite number >= 0, got %s" % short_repr(value))
    return r


def _rank_probe(n):
    """The fixed vector whose growth under a contact system's inverse tells a rank the
    Cholesky pivots miss (as rbd_c's rbd_rank_probe): steps of the golden ratio, so that no
    structured null vector of the system is orthogonal to it."""
    return 0.5 + np.arange(1, n + 1) * 0.6180339887498949 % 1.0


def _deficient(K):
    """Per sample of contact systems K (..., m, m), whether it is rank-deficient: its smallest
    eigenvalue at or below the rank tolerance of its largest entry (at least 1), as two
    bounds on it tell: no Cholesky factor or a pivot below it (lambda_min <= every pivot),
    or a fixed vector x that K^-1 stretches past its inverse (lambda_min <= |x| / |K^-1 x|;
    where a second near-singular direction comes first, the last pivot keeps the rounding
    of the first one's elimination, far above lambda_min)."""
    try:
        C = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:  # (some sample has no factor: which ones, one at a time)
        if K.ndim == 2:
            return np.array(True)
        flat = K.reshape((-1,) + K.shape[-2:])
        return np.array([bool(_deficient(k)) for k in flat]).reshape(K.shape[:-2])
    if not K.shape[-1]:
        return np.zeros(K.shape[:-2], dtype=bool)
    bound = CONTACT_RANK_TOLERANCE * np.maximum(1.0, np.abs(K).max(axis=(-2, -1)))
    pivots = np.abs(np.diagonal(C, axis1=-2, axis2=-1)).min(axis=-1) ** 2
    x = _rank_probe(K.shape[-1])
    y = np.linalg.solve(np.swapaxes(C, -1, -2), np.linalg.solve(C, np.broadcast_to(x, K.shape[:-1])[..., None]))
    return (pivots <= bound) | ~(np.linalg.norm(x) > bound * np.linalg.norm(y[..., 0], axis=-1))


def _solve_contacts(rbd, model, q, J, rhs_q, rhs_c, contacts, regularization):
    """The multipliers of (J M^-1 J^T + r I) lam = rhs_c - J M^-1 rhs_q, by a Cholesky factor that
    also tells a rank-deficient contact set, and x = M^-1 (rhs_q + J^T lam), all from
    X = M^-1 [J^T, rhs_q]: m + 1 columns, by the backend's ``inverse_mass_times`` where it has
    one (the NumPy backend: ABA solves on large models, linear in the model), else from
    ``inverse_mass_matrix`` (O(n^2); the compiled backend's models with mimic joints)."""
    m = J.shape[-2]
    B = np.concatenate([np.swapaxes(J, -1, -2), rhs_q[..., None]], axis=-1)
    times = getattr(rbd, "inverse_mass_times", None)
    X = times(model, q, B) if times is not None else rbd.inverse_mass_matrix(model, q) @ B
    K = J @ X[..., :m]
    if regularization:
        K = K + regularization * np.eye(m)
    b = rhs_c - (J @ X[..., m:])[..., 0]
    deficient = _deficient(K)
    if deficient.any():  # (the error names the batch's first such sample)
        batch = K.shape[:-2]
        raise redundant_contacts_error(model, contacts, regularization,
                                       np.unravel_index(np.flatnonzero(deficient)[0], batch) if batch else None)
    lam = np.linalg.solve(K, b[..., None])[..., 0]
    x = X[..., m] + (X[..., :m] @ lam[..., None])[..., 0]
    return x, lam


def _nothing_to_solve(batch):
    """The empty results of a 0-dof model without contacts: NumPy's products and solvers
    would loop over every empty sample (a batch of 2**40 of them is a valid input)."""
    return np.empty(batch + (0,)), np.empty(batch + (0,))


@functools.partial(finite_results, sample_ndims=(1, 1))
def constrained_dynamics_on(rbd, model, q, v, tau, contacts, fext=None, regularization=0.0):
    """(qdd (..., nv), forces (..., m)) of M qdd + h = tau + J^T forces with every contact
    held (J qdd + gamma = 0); ``regularization`` damps the contact system."""
    check_model(model)
    contacts = _contacts(model, contacts)
    regularization = _regularization(regularization)
    batch, (q, v, tau, fext) = model_arrays(model, q=q, v=v, tau=tau, fext=fext)
    if model.nv == 0 and not contacts:
        return _nothing_to_solve(batch)
    try:
        J, gamma = _rows(rbd, model, q, v, contacts)
        h = rbd.rnea(model, q, v, np.zeros_like(v), fext)
        overflow = None
    except ResultOverflow as error:
        overflow = error
    if overflow is not None:
        # The velocity terms or fext overflow: a rank-deficient sample's error still comes first
        # (in any sample, as the compiled kernel, which checks the contact set before them).
        J, _ = _rows(rbd, model, q, None, contacts)
        _solve_contacts(rbd, model, q, J, np.zeros_like(v), np.zeros(J.shape[:-1]), contacts, regularization)
        raise overflow
    return _solve_contacts(rbd, model, q, J, tau - h, -gamma, contacts, regularization)


@functools.partial(finite_results, sample_ndims=(1, 1))
def impulse_dynamics_on(rbd, model, q, v, contacts, restitution=0.0, regularization=0.0):
    """(v_after (..., nv), impulses (..., m)) of an impact: M (v_after - v) = J^T impulses
    and J v_after = -restitution J v."""
    check_model(model)
    contacts = _contacts(model, contacts)
    regularization = _regularization(regularization)
    e = _restitution(restitution)
    batch, (q, v) = model_arrays(model, q=q, v=v)
    if model.nv == 0 and not contacts:
        return _nothing_to_solve(batch)
    J, _ = _rows(rbd, model, q, None, contacts)
    Jv = (J @ v[..., None])[..., 0]
    dv, impulses = _solve_contacts(rbd, model, q, J, np.zeros_like(v), -(1.0 + e) * Jv, contacts, regularization)
    return v + dv, impulses


HESSIAN_WHOLE = 1 << 23  # doubles (64 MB) of kinematic_hessian_on's output computed in one go, at most
HESSIAN_CHUNK = 1 << 21  # and (16 MB) per chunk of columns beyond


@functools.partial(finite_results, sample_ndims=(3,))
def kinematic_hessian_on(rbd, model, q, frame, reference="local"):
    """H (..., 6, nv, nv) with H[:, i, k] = d J[:, i] / d q_k along q (+) dq, J =
    frame_jacobian(model, q, frame, reference); so H @ v is frame_jacobian_time_derivative."""
    check_model(model)
    batch, (q,) = model_arrays(model, q=q)
    n = model.nv
    if n == 0:  # (no column to differentiate: the frame and the reference checked all the same)
        rbd.frame_jacobian(model, q, frame, reference)
    flat = (int(np.prod(batch)),)  # (one batch axis: the n unit velocities add one, within the limit)
    H = np.empty(flat + (6, n, n))
    # A large H takes the unit velocities a chunk of columns i at a time (16 MB of H): the
    # derivatives' intermediates (both of frame_velocity_derivatives' outputs, their batch
    # copies: 11x a chunk's share of H on the NumPy backend) then stay bounded (measured at
    # 1,500 dofs: 3x H instead of 8.4x, in twice the time: shorter rows)
    whole = 6 * n * n * flat[0]
    step = max(n, 1) if whole <= HESSIAN_WHOLE else max(16, HESSIAN_CHUNK // max(1, 6 * n * flat[0]))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        qs = np.broadcast_to(q.reshape(flat + (1, model.nq)), flat + (i1 - i0, model.nq))
        unit = np.zeros((i1 - i0, n))
        unit[np.arange(i1 - i0), np.arange(i0, i1)] = 1.0
        units = np.broadcast_to(unit, flat + (i1 - i0, n))
        dJ_dq = rbd.frame_velocity_derivatives(model, qs, units, frame, reference)[0]  # (N, i, 6, k)
        H[:, :, i0:i1, :] = np.moveaxis(dJ_dq, -3, -2)
    return H.reshape(batch + (6, n, n))  # (..., 6, i, k)


def inertial_parameters(model):
    """Every body's [m, m cx, m cy, m cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (inertia about the body
    origin, body axes), in body order: (10 nbodies,)."""
    check_model(model)
    return np.asarray(model.inertias)[:, _TO_PUBLIC].reshape(-1).copy()


def model_from_parameters(model, parameters, strict=False):
    """``model`` with the inertias of a parameter vector in ``inertial_parameters``' order
    (identified parameters, for instance), validated by the inertia policy (a physically
    inconsistent inertia warns, or raises ValueError when ``strict``)."""
    check_model(model)
    strict = flag(strict, "strict")
    p = as_array(parameters, "parameters", (10 * model.nbodies,), allow_batch=False)
    return model.replace(inertias=p.reshape(-1, 10)[:, _TO_STORAGE], strict=strict)


def _body_forces_basis(acc, twist):
    """(..., 6, 10): the body force Y a + v x* (Y v) of each unit inertial parameter
    (public order), for a body acceleration ``acc`` and twist ``twist`` (..., 6)."""
    def cross(a, b):
        return np.cross(a, b)

    lin, ang = acc[..., :3], acc[..., 3:]
    vl, w = twist[..., :3], twist[..., 3:]
    out = np.zeros(acc.shape[:-1] + (6, 10))
    # mass: f = m (a_lin + w x v_lin), n = 0
    out[..., :3, 0] = lin + cross(w, vl)
    eye = np.eye(3)
    for k in range(3):  # first moment h = e_k
        h = np.broadcast_to(eye[k], lin.shape)
        f = -cross(h, ang) + cross(w, -cross(h, w))          # Y a + w x (m v - h x w), the h parts
        n = cross(h, lin) + cross(vl, -cross(h, w)) + cross(w, cross(h, vl))
        out[..., :3, 1 + k], out[..., 3:, 1 + k] = f, n
    for k, (r, c) in enumerate(((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))):  # the rotational inertia
        I = np.zeros((3, 3))
        I[r, c] = I[c, r] = 1.0
        out[..., 3:, 4 + k] = ang @ I + cross(w, w @ I)       # I symmetric: I a = a @ I
    return out


@functools.partial(finite_results, sample_ndims=(2,))
def joint_torque_regressor_on(rbd, model, q, v, a):
    """Y (..., nv, 10 nbodies) with Y @ inertial_parameters(model) = rnea(model, q, v, a)
    (gravity included; armature, which is not an inertial parameter, left out)."""
    check_model(model)
    batch, (q, v, a) = model_arrays(model, q=q, v=v, a=a)
    Y = np.zeros(batch + (model.nv, 10 * model.nbodies))
    first = []  # where a body's own calls overflowed (in a batch: their first samples)

    def body_terms(i):
        f = model.joint_frame(i)
        J = rbd.frame_jacobian(model, q, f, "local")
        twist = rbd.frame_velocity(model, q, v, f, "local")
        acc = rbd.frame_acceleration(model, q, v, a, f, "local")
        R = rbd.frame_placement(model, q, f)[..., :3, :3]
        acc = acc.copy()
        acc[..., :3] -= (np.swapaxes(R, -1, -2) @ model.gravity)  # the world accelerates by -g
        return np.swapaxes(J, -1, -2) @ _body_forces_basis(acc, twist)

    for i in range(model.nbodies):
        try:
            Y[..., 10 * i:10 * i + 10] = body_terms(i)
        except ResultOverflow as exc:
            if exc.sample is None:
                raise
            # (each of its calls names its own first overflowing sample: the batch's first
            # overflow may be an earlier sample of another body's terms, which go on)
            first.append(exc.sample)
    if first:  # (the other bodies' terms: Y's columns of those that overflowed are still zero)
        terms = first_nonfinite_sample((Y,), (2,))
        raise overflow_error(min(first + ([tuple(int(i) for i in terms)] if terms is not None else [])))
    return Y


def __getattr__(name):
    """``rbd.contacts.constrained_dynamics`` and the other composed functions: the active
    backend's (as ``rbd.constrained_dynamics``), for code that imported them from here."""
    from ._names import COMPOSED
    if name in COMPOSED:
        return getattr(sys.modules["rbd"], name)
    raise AttributeError("module 'rbd.contacts' has no attribute %r" % name)
