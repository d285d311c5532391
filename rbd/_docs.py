"""The docstring of every algorithm of the API, one text for both backends.

``rbd.set_backend`` gives each bound function its text here, on the NumPy and the
compiled backend alike, so that ``help(rbd.rnea)`` reads the same whichever runs.
"""

_BATCH = """
Batches: every array argument takes leading batch dimensions (broadcast together);
the result has them in front.  SI units; spatial vectors are linear first [v; w],
wrenches [f; tau]; quaternions [w, x, y, z].

``out=`` (keyword): write the result into this array (a tuple of arrays for several
results) of exactly the result's shape, float64, C-contiguous and writeable, sharing
no memory with the inputs; it is returned."""

_FRAME = """``frame`` is a frame name or index (link frames, then one per joint);
``reference`` is "local" (the frame's axes and origin), "world" (world axes and
origin) or "local_world_aligned" (the frame's origin, world axes)."""

_DQ = """Derivatives with respect to q are along the tangent perturbation q (+) dq (the
convention of ``integrate``), so they have nv columns, floating bases included."""

DOCS = {
    "neutral": "neutral(model) -> q (nq,): zero angles and lengths, identity quaternions.",
    "random_configuration": """random_configuration(model, rng=None, batch=None) -> q (nq,), or (*batch, nq)

Each coordinate uniform within its joint limits (an unlimited angle in [-pi, pi], a
length in [-1, 1]); quaternions uniform over rotations with w >= 0.  ``rng``: a
numpy Generator, a seed or None; ``batch``: an int or a shape.""",
    "integrate": "integrate(model, q, v) -> q (+) v (nq,): the configuration after moving with "
                 "velocity v for unit time on the joint manifolds (body-frame steps for the "
                 "spherical, planar and free joints).",
    "difference": "difference(model, q0, q1) -> v (nv,) with q0 (+) v = q1 (rotations by their "
                  "logarithm, angle in [0, pi]).",
    "normalize": "normalize(model, q) -> q (nq,) with every quaternion scaled to unit norm.",
    "integrate_jacobians": "integrate_jacobians(model, q, v) -> (d_dq, d_dv), each (nv, nv): the "
                           "tangent-space Jacobians of q (+) v (block diagonal: Ad(exp(-v)) and the "
                           "right Jacobian of each group joint, identity otherwise).",
    "difference_jacobians": "difference_jacobians(model, q0, q1) -> (d_dq0, d_dq1), each (nv, nv): the "
                            "Jacobians of difference(q0, q1) for tangent perturbations of q0 and q1.",
    "forward_kinematics": "forward_kinematics(model, q) -> (nbodies, 4, 4): the world placement "
                          "(world_from_body) of each body, i.e. of each joint's output frame.",
    "frame_placement": "frame_placement(model, q, frame) -> (4, 4): world_from_frame.",
    "frame_placements": "frame_placements(model, q) -> (nframes, 4, 4): world_from_frame of every "
                        "frame (link frames, then joint frames), from one forward pass.",
    "frame_velocity": "frame_velocity(model, q, v, frame, reference='local') -> (6,): the frame's "
                      "twist [v; w] in ``reference``.\n\n" + _FRAME,
    "frame_acceleration": "frame_acceleration(model, q, v, a, frame, reference='local') -> (6,): the time "
                          "derivative of frame_velocity in the same reference (no gravity); in "
                          "local_world_aligned the classical acceleration [p_ddot; w_dot].\n\n" + _FRAME,
    "frame_jacobian": "frame_jacobian(model, q, frame, reference='local') -> (6, nv): J with "
                      "frame_velocity = J v.\n\n" + _FRAME,
    "frame_jacobian_time_derivative": "frame_jacobian_time_derivative(model, q, v, frame, "
                                      "reference='local') -> (6, nv): J_dot, so frame_acceleration = "
                                      "J a + J_dot v.\n\n" + _FRAME,
    "frame_velocity_derivatives": "frame_velocity_derivatives(model, q, v, frame, reference='local') -> "
                                  "(dv_dq, dv_dv), each (6, nv): the partial derivatives of "
                                  "frame_velocity (dv_dv = frame_jacobian).\n\n" + _FRAME + "\n" + _DQ,
    "frame_acceleration_derivatives": "frame_acceleration_derivatives(model, q, v, a, frame, "
                                      "reference='local') -> (dv_dq, da_dq, da_dv, da_da), each (6, nv): "
                                      "the partial derivatives of frame_velocity and frame_acceleration "
                                      "(da_da = frame_jacobian).\n\n" + _FRAME + "\n" + _DQ,
    "center_of_mass": "center_of_mass(model, q) -> (3,): the centre of mass in the world (m).",
    "com_jacobian": "com_jacobian(model, q) -> (3, nv): J_com with c_dot = J_com v.",
    "rnea": """rnea(model, q, v, a, fext=None) -> tau (nv,): inverse dynamics,
tau = M(q) a + C(q, v) v + g(q) - sum_i J_i^T fext_i, M with the armature on its
diagonal (as crba's: counted once).

``fext`` (nbodies, 6): the wrench [f; tau] on each body, in that body's frame
(N, N m).  A model with mimic joints returns the forces on its independent
coordinates.""",
    "gravity": "gravity(model, q) -> (nv,): generalized gravity g(q) = rnea(q, 0, 0).",
    "nonlinear_effects": "nonlinear_effects(model, q, v) -> (nv,): C(q, v) v + g(q) = rnea(q, v, 0).",
    "crba": "crba(model, q) -> M (nv, nv): the joint-space mass matrix (armature on its diagonal), full "
            "and exactly symmetric (kg, kg m, kg m^2).",
    "aba": """aba(model, q, v, tau, fext=None) -> q_ddot (nv,): forward dynamics, the accelerations
with rnea(q, v, q_ddot, fext) = tau.  A model whose mass matrix is singular (a
massless leaf without armature) raises rbd.SingularModelError naming the joint.""",
    "coriolis_matrix": "coriolis_matrix(model, q, v) -> C (nv, nv) with C v + g = nonlinear_effects "
                       "and M_dot - 2 C skew-symmetric.",
    "kinetic_energy": "kinetic_energy(model, q, v) -> float (J): 1/2 v^T M v.",
    "potential_energy": "potential_energy(model, q) -> float (J): -m g . c, zero at the world origin.",
    "centroidal_momentum": "centroidal_momentum(model, q, v) -> (6,): linear momentum, then angular "
                           "momentum about the centre of mass, world axes.",
    "centroidal_momentum_matrix": "centroidal_momentum_matrix(model, q) -> A_G (6, nv) with "
                                  "centroidal_momentum = A_G v (no armature).",
    "centroidal_momentum_matrix_time_variation": "centroidal_momentum_matrix_time_variation(model, q, v) -> "
                                                 "(6, nv): dA_G/dt, so the momentum rate is A_G a + "
                                                 "dA_G/dt v.",
    "rnea_derivatives": "rnea_derivatives(model, q, v, a, fext=None) -> (dtau_dq, dtau_dv, dtau_da), each "
                        "(nv, nv): the partial derivatives of rnea; dtau_da is the mass matrix; fext is "
                        "held constant in each body's frame.\n\n" + _DQ,
    "aba_derivatives": "aba_derivatives(model, q, v, tau, fext=None) -> (dqdd_dq, dqdd_dv, dqdd_dtau), "
                       "each (nv, nv): the partial derivatives of aba; dqdd_dtau is M^-1.\n\n" + _DQ,
    "inverse_mass_matrix": "inverse_mass_matrix(model, q) -> (nv, nv): M(q)^-1, computed directly in "
                           "O(n^2) (not by inverting crba), exactly symmetric.",
}


_COMPOSED_BATCH = """
Batches: the state arguments take leading batch dimensions (broadcast together); the
results have them in front.  SI units; spatial vectors linear first, wrenches [f; tau].
(No ``out=``.)"""

_CONTACTS = """``contacts``: a list of ``rbd.Contact(frame, dim=3, reference="local_world_aligned")``
in the order of the force rows (dim 3: a point holding its classical acceleration; dim 6:
a flat contact holding its spatial acceleration; ``reference``: the axes of the forces)."""

#: the functions composed from the algorithms (``rbd._names.COMPOSED``)
COMPOSED_DOCS = {
    "contact_jacobian": "contact_jacobian(model, q, contacts) -> J (m, nv): the contacts' stacked "
                        "Jacobians, m the sum of their dims.\n\n" + _CONTACTS,
    "constrained_dynamics": """constrained_dynamics(model, q, v, tau, contacts, fext=None, regularization=0.0)
    -> (qdd (nv,), forces (m,))

M qdd + h = tau + J^T forces with every contact held (J qdd + gamma = 0).
``regularization`` > 0 damps the contact system (redundant contacts); a rank-deficient
set without it raises ValueError naming the contacts.

""" + _CONTACTS,
    "impulse_dynamics": """impulse_dynamics(model, q, v, contacts, restitution=0.0, regularization=0.0)
    -> (v_after (nv,), impulses (m,))

An impact: M (v_after - v) = J^T impulses and J v_after = -restitution J v.

""" + _CONTACTS,
    "kinematic_hessian": """kinematic_hessian(model, q, frame, reference="local") -> H (6, nv, nv)

H[:, i, k] = d J[:, i] / d q_k along q (+) dq, J = frame_jacobian(model, q, frame,
reference); so H @ v is frame_jacobian_time_derivative.

""" + _FRAME,
    "joint_torque_regressor": """joint_torque_regressor(model, q, v, a) -> Y (nv, 10 nbodies)

Y @ inertial_parameters(model) = rnea(model, q, v, a) (gravity included; armature, not an
inertial parameter, left out); each body's parameters [m, m c, Ixx, Ixy, Iyy, Ixz, Iyz,
Izz] about its origin.""",
}


def apply(module):
    """Give every algorithm of ``module`` (a backend) its docstring from ``DOCS`` (and the
    composed functions theirs from ``COMPOSED_DOCS``)."""
    for table, batch in ((DOCS, _BATCH), (COMPOSED_DOCS, _COMPOSED_BATCH)):
        for name, text in table.items():
            function = getattr(module, name, None)
            if function is not None:
                function.__doc__ = text + "\n" + batch
