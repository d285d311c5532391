"""The algorithms on a model with mimic joints (``rbd.couple_joints``, ``load_urdf(...,
mimic=True)``), for both backends.

Such a model's coordinates are those of its independent joints.  Every algorithm
runs on ``model._full`` (every joint its own coordinate) with the coordinates
expanded: q_full = q[source] * scale + offset, v_full = G v (likewise a), and its
result is brought back: generalized forces as G^T tau, Jacobian-like columns as
J G, matrices between velocities and forces as G^T X G, configuration-space results
by keeping the independent coordinates.  Forward dynamics and M^-1 solve the
coupled system G^T M G densely (the ABA's recursion does not hold across a coupling).
"""
import numpy as np

from ._checks import SingularModelError, check_finite_result, finite_results, model_arrays, short_repr

# per algorithm: the kinds of its positional arguments after the model (q: a configuration,
# v: a velocity or acceleration, x: as it is) and how each result comes back (F: forces,
# C: columns, FC: G^T X G, FCS: that of a symmetric X, exactly symmetric, Q / V: independent coordinates, VV: rows and columns of them,
# -: unchanged)
RULES = {
    "neutral": ("", (), "Q"),
    "integrate": ("qv", ("q", "v"), "Q"),
    "difference": ("qq", ("q0", "q1"), "V"),
    "normalize": ("q", ("q",), "Q"),
    "integrate_jacobians": ("qv", ("q", "v"), ("VV", "VV")),
    "difference_jacobians": ("qq", ("q0", "q1"), ("VV", "VV")),
    "forward_kinematics": ("q", ("q",), "-"),
    "frame_placement": ("q", ("q",), "-"),
    "frame_placements": ("q", ("q",), "-"),
    "frame_velocity": ("qv", ("q", "v"), "-"),
    "frame_acceleration": ("qvv", ("q", "v", "a"), "-"),
    "frame_jacobian": ("q", ("q",), "C"),
    "frame_jacobian_time_derivative": ("qv", ("q", "v"), "C"),
    "frame_velocity_derivatives": ("qv", ("q", "v"), ("C", "C")),
    "frame_acceleration_derivatives": ("qvv", ("q", "v", "a"), ("C", "C", "C", "C")),
    "center_of_mass": ("q", ("q",), "-"),
    "com_jacobian": ("q", ("q",), "C"),
    "rnea": ("qvv", ("q", "v", "a"), "F"),
    "gravity": ("q", ("q",), "F"),
    "nonlinear_effects": ("qv", ("q", "v"), "F"),
    "crba": ("q", ("q",), "FCS"),
    "coriolis_matrix": ("qv", ("q", "v"), "FC"),
    "kinetic_energy": ("qv", ("q", "v"), "-"),
    "potential_energy": ("q", ("q",), "-"),
    "centroidal_momentum": ("qv", ("q", "v"), "-"),
    "centroidal_momentum_matrix": ("q", ("q",), "C"),
    "centroidal_momentum_matrix_time_variation": ("qv", ("q", "v"), "C"),
    "rnea_derivatives": ("qvv", ("q", "v", "a"), ("FC", "FC", "FCS")),
}
SPECIAL = ("random_configuration", "aba", "inverse_mass_matrix", "aba_derivatives")


def expand_q(model, q):
    source, scale, offset = model._q_map
    return q[..., source] * scale + offset


def expand_v(model, v):
    source, scale = model._v_map
    return v[..., source] * scale


def _times_g(model, x):
    """x @ G along the last axis, without forming G (one entry per row: an independent
    coordinate's own row, with 1, or a mimic coordinate's, with its multiplier): O(size of x)."""
    _, independent_v = model._independent
    source, scale = model._v_map
    out = x[..., independent_v]  # (a copy)
    for r in model._mimic_v_rows:  # (few)
        out[..., source[r]] += scale[r] * x[..., r]
    return out


def _back(model, how, x):
    if how == "-":
        return x
    if how in ("F", "C"):  # G^T tau, J G
        return _times_g(model, x)
    if how in ("FC", "FCS"):  # G^T X G
        x = np.swapaxes(_times_g(model, np.swapaxes(_times_g(model, x), -1, -2)), -1, -2)
        if how == "FCS":  # (its two triangles summed in different orders: made to agree)
            x = 0.5 * (x + np.swapaxes(x, -1, -2))
        return x
    independent_q, independent_v = model._independent
    if how == "Q":
        return np.ascontiguousarray(x[..., independent_q])
    if how == "V":
        return np.ascontiguousarray(x[..., independent_v])
    return np.ascontiguousarray(x[..., independent_v[:, None], independent_v])  # VV


def _expand(model, kinds, names, args):
    """Validate the reduced arguments (errors name them) and expand them."""
    _, checked = model_arrays(model, optional=(), **dict(zip(names, args)))
    return [expand_q(model, x) if kind == "q" else expand_v(model, x) for kind, x in zip(kinds, checked)]


@finite_results  # the couplings' products can overflow where the full model did not
def call(backend, name, model, args, kwargs):
    """``backend.<name>(model, *args, **kwargs)`` for a model with mimic joints."""
    full = model._full
    if name in SPECIAL:
        return _SPECIAL[name](backend, model, full, *args, **kwargs)
    kinds, names, how = RULES[name]
    if name == "frame_placement":
        kwargs.pop("reference", None)  # (the compiled driver hands every frame algorithm one)
    n = len(kinds)
    if len(args) < n:  # the state passed by keyword
        args = tuple(args) + tuple(kwargs.pop(k) for k in names[len(args):] if k in kwargs)
    expanded = _expand(model, kinds, names, args[:n]) if n else []
    result = getattr(backend, name)(full, *expanded, *args[n:], **kwargs)
    if isinstance(how, tuple):
        return tuple(_back(model, h, x) for h, x in zip(how, result))
    return _back(model, how, result)


def _mass_matrix(backend, model, full, q):
    M = _back(model, "FCS", backend.crba(full, q))
    return M


def _cholesky(model, M):
    try:
        return np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise SingularModelError("the mass matrix of model %r (with its mimic couplings) is singular%s"
                                 % (model.name, _first_singular_joint(model, M))) from None


def _first_singular_joint(model, M):
    """' at joint <name>: ...' for the independent joint of the first coordinate where the
    Cholesky factor of a failing (sample of) M has no positive pivot (on the error path)."""
    for A in np.reshape(M, (-1,) + np.shape(M)[-2:]):
        A = np.array(A, dtype=float)
        for k in range(len(A)):
            if not A[k, k] > 0:
                mimic = {m[0] for m in model.mimic}
                for j, name in enumerate(model.joint_names):
                    if name not in mimic and model.v_idx[j] <= k < model.v_idx[j] + model.joint_nv[j]:
                        return (" at joint %s: the bodies it moves (its mimic joints' included) have no "
                                "inertia along its motion" % short_repr(name))
                return ""
            A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k + 1:, k]) / A[k, k]
    return ""


def _solve(model, M, b):
    L = _cholesky(model, M)
    y = np.linalg.solve(L, b[..., None])
    return np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]


def _random_configuration(backend, model, full, rng=None, batch=None):
    return _back(model, "Q", backend.random_configuration(full, rng, batch))


def _aba(backend, model, full, q, v, tau, fext=None):
    _, (q, v, tau) = model_arrays(model, optional=(), q=q, v=v, tau=tau)
    qf, vf = expand_q(model, q), expand_v(model, v)
    M = _mass_matrix(backend, model, full, qf)
    bias = _back(model, "F", backend.rnea(full, qf, vf, np.zeros_like(vf), fext))
    return _solve(model, M, tau - bias)


def _inverse_mass_matrix(backend, model, full, q):
    _, (q,) = model_arrays(model, q=q)
    M = _mass_matrix(backend, model, full, expand_q(model, q))
    L_inv = np.linalg.inv(_cholesky(model, M))
    Minv = np.swapaxes(L_inv, -1, -2) @ L_inv
    return 0.5 * (Minv + np.swapaxes(Minv, -1, -2))


def _aba_derivatives(backend, model, full, q, v, tau, fext=None):
    qdd = check_finite_result(_aba(backend, model, full, q, v, tau, fext), 1)  # (before it is rnea's a)
    _, (q, v) = model_arrays(model, optional=(), q=q, v=v)
    qf, vf = expand_q(model, q), expand_v(model, v)
    dq, dv, M = backend.rnea_derivatives(full, qf, vf, expand_v(model, qdd), fext)
    Minv = _inverse_mass_matrix(backend, model, full, q)
    return -(Minv @ _back(model, "FC", dq)), -(Minv @ _back(model, "FC", dv)), Minv


_SPECIAL = {"random_configuration": _random_configuration, "aba": _aba,
            "inverse_mass_matrix": _inverse_mass_matrix, "aba_derivatives": _aba_derivatives}
