"""The one list of the algorithms of the API: what ``rbd`` binds to the active
backend, what ``rbd.reference`` exports, and what ``rbd_c`` must provide whole
(``rbd.set_backend`` refuses a backend that lacks one)."""

ALGORITHMS = (
    # configuration space
    "neutral", "random_configuration", "integrate", "difference", "normalize",
    # kinematics
    "forward_kinematics", "frame_placement", "frame_placements", "frame_velocity", "frame_acceleration",
    "frame_jacobian", "frame_jacobian_time_derivative", "center_of_mass", "com_jacobian",
    # dynamics
    "rnea", "gravity", "nonlinear_effects", "crba", "aba", "coriolis_matrix",
    "kinetic_energy", "potential_energy", "centroidal_momentum",
    "centroidal_momentum_matrix", "centroidal_momentum_matrix_time_variation",
    # derivatives (configuration space)
    "integrate_jacobians", "difference_jacobians",
    # derivatives (dynamics)
    "rnea_derivatives", "aba_derivatives", "inverse_mass_matrix",
    # derivatives (kinematics)
    "frame_velocity_derivatives", "frame_acceleration_derivatives",
)

#: The functions composed from the algorithms (``rbd.contacts``): each backend provides them
#: (the NumPy one composes them, the compiled one runs kernels), ``rbd`` binds the active
#: backend's as it binds ALGORITHMS; they take no ``out=``.
COMPOSED = ("contact_jacobian", "constrained_dynamics", "impulse_dynamics", "kinematic_hessian",
            "joint_torque_regressor")
