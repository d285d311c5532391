# cython: language_level=3
"""What other compiled modules use of _dynamics: the RNEA kernel (the ABA derivatives
run it for the bias forces), the CRBA kernel (M^-1 factors its M; the contact dynamics
run its two steps with a world-axes RNEA between them) and the layouts of their scratch."""
from rbd_c._model cimport Call, CModel

# Scratch of RNEA (and of the energies and momentum, which use its first fields): per
# field, one record per body; a field's enum is its offset in doubles per body.
cdef enum:
    RNEA_X = 0          # parent_from_body placements (16)
    RNEA_V = 16         # body twists (6)
    RNEA_A = 22         # body accelerations (6)
    RNEA_F = 28         # body forces (6)
    RNEA_PER_BODY = 34
    MOMENTUM_OM = 22    # world placements (16), after X and V (centroidal momentum)
    MOMENTUM_PER_BODY = 38


# Scratch of CRBA's world terms (crba_world_terms): world placements (16) and inertias
# in world axes (10) per body, then the world subspace columns (6 per dof).  CRBA itself
# (k_crba) adds each body's origin from its parent's (3 per body, after the columns) and
# each dof's column at its body's origin (6 per dof).
cdef enum:
    CRBA_OM = 0
    CRBA_YC = 16
    CRBA_PER_BODY = 26


cdef int k_crba(const Call* c, const double** ins, double** outs, double* work) noexcept nogil
cdef void crba_world_terms(const CModel* m, double* work) noexcept nogil
cdef int k_rnea(const Call* c, const double** ins, double** outs, double* work) noexcept nogil
