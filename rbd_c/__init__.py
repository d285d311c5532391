"""rbd_c: the compiled (Cython) backend of rbd.

It mirrors ``rbd.spatial`` and the algorithms of ``rbd.reference`` under the
same names and signatures.  Importing it raises ImportError when the extension
modules were not built, which is how ``rbd`` falls back to NumPy.
"""
from ._spatial import *  # noqa: F401,F403  (ImportError here means "not built")

# The algorithms (same names and signatures as rbd.reference), and the batch thread count.
from ._model import set_num_threads, get_num_threads, have_openmp, MAX_THREADS, set_simd, release_memory  # noqa: F401,E402
from ._configuration import (  # noqa: F401,E402
    neutral, integrate, difference, normalize, integrate_jacobians, difference_jacobians,
)
from ._kinematics import (  # noqa: F401,E402
    forward_kinematics, frame_placement, frame_placements, frame_velocity, frame_acceleration, frame_jacobian,
    frame_jacobian_time_derivative, center_of_mass, com_jacobian, frame_velocity_derivatives,
    frame_acceleration_derivatives, kinematic_hessian,
)
from ._dynamics import (  # noqa: F401,E402
    rnea, gravity, nonlinear_effects, crba, aba, coriolis_matrix, kinetic_energy,
    potential_energy, centroidal_momentum, centroidal_momentum_matrix,
    centroidal_momentum_matrix_time_variation, simd,
)
from ._derivatives import (  # noqa: F401,E402
    rnea_derivatives, aba_derivatives, inverse_mass_matrix,
)


def random_configuration(model, rng=None, batch=None, *, out=None):
    """The reference's sampler (sampling is NumPy's: nothing to compile)."""
    # Imported on use: rbd_c must not import rbd while it initialises (rbd would
    # then bind a half-built compiled backend).
    from rbd.reference import random_configuration as sample
    return sample(model, rng, batch, out=out)
