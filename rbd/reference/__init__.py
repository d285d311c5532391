"""(being written) reference algorithms."""
def _missing(*a, **k): raise NotImplementedError
for _n in ("neutral random_configuration integrate difference normalize forward_kinematics frame_placement "
           "frame_velocity frame_acceleration frame_jacobian frame_jacobian_time_derivative center_of_mass "
           "com_jacobian rnea gravity nonlinear_effects crba aba coriolis_matrix kinetic_energy "
           "potential_energy centroidal_momentum").split():
    globals()[_n] = _missing
