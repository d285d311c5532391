"""The one inertia policy of rbd, for every source of a model (URDF, builder,
derived models).

A body's rotational inertia about its centre of mass must be symmetric positive
semi-definite with principal moments that satisfy the triangle inequality
(a + b >= c): any real mass distribution does.  Real robot files break this in
two ways that must be told apart:

* **round-off** — a moment of -2e-22 next to moments of 3e-6, or an inertia that is
  all zero but for 2.4e-35.  Judged against the matrix itself, such a value looks
  like a gross error (it is "100% negative"); judged against the robot, it is
  nothing.  The tolerance is therefore relative to the robot's own scale: the
  largest inertia entry of any of its links about its centre of mass (kg m^2), times
  1e-9 (about the body origins the entries grow by m |c|^2, which would let a light
  link's real error pass); a link whose inertia about its origin is large adds the
  round-off of moving it to its centre of mass, 1e-12 of that.  Round-off passes
  silently, in every mode.
* **a genuine inconsistency** — moments breaking the triangle inequality by more
  than the tolerance (CAD exports that round each moment separately do this by a
  few percent), or a clearly negative moment.  The algorithms are still
  well-defined for such inertias, and Pinocchio and iDynTree load them, so by
  default the model loads with ONE ``UserWarning`` naming every such link;
  ``strict=True`` makes it an error.

Non-finite numbers, a negative mass, and values that overflow when the inertia
is moved to the body origin are always errors.
"""
import warnings

import numpy as np

from ._checks import flag, short_names, short_repr, without_com

#: Round-off tolerance, relative to the robot's largest inertia entry about a centre of mass.
RELATIVE_TOLERANCE = 1e-9
#: and relative to a link's own inertia about its origin (what moving it to its centre of
#: mass rounds: about 1e-16 of it)
ORIGIN_ROUND_OFF = 1e-12


def inertia_about_com(inertias10):
    """(mass, rotational inertia about the centre of mass) of each 10-number
    inertia ``[m, hx, hy, hz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz]`` (about the origin)."""
    Y = np.asarray(inertias10, dtype=float).reshape(-1, 10)
    mass, h = Y[:, 0], Y[:, 1:4]
    xx, xy, xz, yy, yz, zz = Y[:, 4:].T
    I_origin = np.stack([np.stack([xx, xy, xz], -1), np.stack([xy, yy, yz], -1),
                         np.stack([xz, yz, zz], -1)], -2)
    # Parallel axis theorem: I_origin = I_com + m (|c|^2 1 - c c^T), with c = h / m.
    safe = np.where(mass > 0.0, mass, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        shift = (np.einsum("ni,ni->n", h, h)[:, None, None] * np.eye(3) - h[:, :, None] * h[:, None, :])
        I_com = I_origin - np.where(mass > 0.0, 1.0, 0.0)[:, None, None] * shift / safe[:, None, None]
    return mass, I_com


def check_inertias(inertias10, names, strict=False, stacklevel=4):
    """Apply the inertia policy to bodies given as 10-number inertias about their
    origins (the storage of ``Model.inertias``), one name per body.

    Raises ValueError naming the bodies for non-finite values, negative masses,
    a first moment without mass, and, when ``strict``, for physically inconsistent
    inertias; otherwise warns once (UserWarning) naming the inconsistent bodies, at
    ``stacklevel`` (the default: the caller of a public function that calls a helper that
    calls this)."""
    strict = flag(strict, "strict")
    Y = np.asarray(inertias10, dtype=float).reshape(-1, 10)
    names = list(names)
    if not Y.size:
        return
    bad = [n for n, row in zip(names, Y) if not np.all(np.isfinite(row))]
    if bad:
        raise ValueError("the inertia of %s is not finite (inf, NaN, or a value too large to move "
                         "to the body origin)" % short_names(bad, shown=8))
    negative, moment_only = without_com(Y)
    bad = [n for n, flagged in zip(names, negative) if flagged]
    if bad:
        raise ValueError("%s a negative mass" % _has(bad))
    bad = [n for n, flagged in zip(names, moment_only) if flagged]
    if bad:
        raise ValueError("%s a first moment of mass (m c) but no mass" % _has(bad))
    mass, I_com = inertia_about_com(Y)
    if not np.all(np.isfinite(I_com)):
        bad = [n for n, I in zip(names, I_com) if not np.all(np.isfinite(I))]
        raise ValueError("the inertia of %s overflows about its centre of mass" % short_names(bad, shown=8))
    moments, flagged, negative = _principal_moments(Y, I_com)
    inconsistent = [(n, m, neg) for n, m, bad, neg in zip(names, moments, flagged, negative) if bad]
    if not inconsistent:
        return
    detail = "; ".join(("%s: a negative principal moment, %s" % (short_repr(n, 40), np.array2string(m, precision=4))
                        if neg else "%s: principal moments %.4g + %.4g < %.4g (by %.2g)"
                        % ((short_repr(n, 40),) + tuple(m) + (m[2] - m[0] - m[1],)))
                       for n, m, neg in inconsistent[:8]) + ("; ..." if len(inconsistent) > 8 else "")
    message = ("%d link%s ha%s a physically inconsistent inertia (a negative principal moment, or "
               "moments breaking the triangle inequality a + b >= c beyond round-off): %s"
               % (len(inconsistent), "s" if len(inconsistent) > 1 else "",
                  "ve" if len(inconsistent) > 1 else "s", detail))
    if strict:
        raise ValueError(message)
    warnings.warn(message + " (loaded as given; strict=True makes this an error)", UserWarning, stacklevel=stacklevel)


def _principal_moments(Y, I_com):
    """Each body's principal moments about its centre of mass (ascending), whether they are
    physically inconsistent (a negative one, or a + b < c, beyond round-off), and whether
    a negative one is why."""
    tol = np.maximum(RELATIVE_TOLERANCE * max(np.abs(I_com).max(), 1e-300),  # the robot's scale, and
                     ORIGIN_ROUND_OFF * np.abs(Y[:, 4:]).max(axis=1))       # each link's own round-off
    moments = np.linalg.eigvalsh(I_com)  # ascending, per body
    negative = moments[:, 0] < -tol
    return moments, negative | (moments[:, 0] + moments[:, 1] < moments[:, 2] - tol), negative


def inconsistent_inertias(inertias10):
    """Whether each body's inertia is physically inconsistent (the load warning's test)."""
    Y = np.asarray(inertias10, dtype=float).reshape(-1, 10)
    if not Y.size:
        return np.zeros(0, dtype=bool)
    with np.errstate(all="ignore"):
        I_com = inertia_about_com(Y)[1]
        finite = np.all(np.isfinite(I_com), axis=(1, 2))
        flagged = np.zeros(len(Y), dtype=bool)
        if finite.any():
            flagged[finite] = _principal_moments(Y[finite], I_com[finite])[1]
    return flagged


def _has(names):
    return ("%s has" if len(names) == 1 else "%s have") % short_names(names, shown=8)
