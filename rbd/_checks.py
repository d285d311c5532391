"""Input validation shared by both backends: turn user input into contiguous
float64 arrays of the expected shape, or raise an error that names the argument."""
import numpy as np


class URDFError(ValueError):
    """A URDF file is malformed or describes a physically impossible robot."""


def as_array(x, name, trailing_shape, allow_batch=True):
    """Return ``x`` as a C-contiguous float64 array whose last dimensions are
    ``trailing_shape``; leading batch dimensions are allowed if ``allow_batch``.

    Raises TypeError for non-numeric input and ValueError for wrong shapes or
    non-finite values, naming ``name``.
    """
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("%s must be an array of real numbers (%s)" % (name, exc)) from None
    trailing_shape = tuple(trailing_shape)
    k = len(trailing_shape)
    if arr.ndim < k or arr.shape[arr.ndim - k:] != trailing_shape or (not allow_batch and arr.ndim != k):
        expected = "(..., %s)" % ", ".join(map(str, trailing_shape)) if allow_batch else str(trailing_shape)
        if k == 1 and not allow_batch:
            expected = "(%d,)" % trailing_shape[0]
        raise ValueError("%s must have shape %s, got %s" % (name, expected, arr.shape))
    if not np.all(np.isfinite(arr)):
        raise ValueError("%s must contain only finite numbers (found NaN or inf)" % name)
    return np.asarray(arr, order="C")  # (ascontiguousarray would turn 0-d into 1-d)


def _orthonormality_error(R):
    return np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max(initial=0.0)


def is_rotation(R):
    """Whether every (3, 3) matrix of ``R`` is a rotation: orthonormal to 1e-6, det = +1."""
    return _orthonormality_error(R) <= 1e-6 and not np.any(np.linalg.det(R) < 0.0)


def as_rotation(R, name):
    """``as_array(R, name, (3, 3))`` that also rejects matrices that are not rotations."""
    R = as_array(R, name, (3, 3))
    if not is_rotation(R):
        raise ValueError("%s must be a rotation matrix (orthonormal, det = +1); "
                         "R^T R differs from I by %.3g" % (name, _orthonormality_error(R)))
    return R


def batch_shape(name_arrays):
    """Broadcast the batch shapes of several validated arrays, given as
    ``[(name, array, n_trailing_dims), ...]``; raise naming the mismatch."""
    shapes = [(n, a.shape[: a.ndim - k]) for n, a, k in name_arrays]
    try:
        return np.broadcast_shapes(*(s for _, s in shapes))
    except ValueError:
        desc = ", ".join("%s %s" % (n, s) for n, s in shapes)
        raise ValueError("batch dimensions do not match: %s" % desc) from None


def trailing_shape(model, name):
    """The per-sample shape of a model-level argument, from its name."""
    if name == "fext":
        return (model.nbodies, 6)
    if name.startswith("q"):  # q, q0, q1
        return (model.nq,)
    return (model.nv,)  # v, a, tau, dq, ...


def check_quaternions(model, name, q):
    """Raise ValueError naming ``name`` if a joint quaternion of ``q`` is (near) zero:
    non-unit quaternions are read as their direction, a zero one has none."""
    idx = model.quaternion_q_idx
    if idx.size:
        blocks = q[..., idx[:, None] + np.arange(4)]
        norms = np.sqrt(np.sum(blocks * blocks, axis=-1))
        if np.any(norms < 1e-12):
            k = int(idx[np.argmax(np.any((norms < 1e-12).reshape(-1, idx.size), axis=0))])
            raise ValueError("%s[%d:%d] is the quaternion of a joint and must not be zero" % (name, k, k + 4))


def model_arrays(model, optional=("fext",), **named):
    """Validate the state arguments of an algorithm and broadcast their batch
    dimensions together.

    ``named`` maps argument names to values (``q=..., v=..., fext=None``).
    The names in ``optional`` may be ``None`` (absent: the algorithm reads
    zero); any other ``None`` is a TypeError naming the argument.  Names
    starting with ``q`` have ``nq`` entries, ``fext`` is ``(nbodies, 6)``,
    every other name has ``nv``.  Returns ``(batch_shape, arrays)`` with
    ``arrays`` in the order given (None kept as None), each C-contiguous
    float64 of shape ``batch_shape + trailing``.
    """
    for name, value in named.items():
        if value is None and name not in optional:
            raise TypeError("%s must be an array of real numbers of shape (..., %s), got None"
                            % (name, ", ".join(map(str, trailing_shape(model, name)))))
    # Fast path for the common single call: float64 vectors of exactly the right shape.
    single = []
    for name, value in named.items():
        if value is not None:
            if (type(value) is not np.ndarray or value.dtype != np.float64 or not value.flags.c_contiguous
                    or value.shape != trailing_shape(model, name)):
                break
            if not np.isfinite(value).all():
                break  # the general path below raises the error naming it
        single.append(value)
    else:
        for name, value in named.items():
            if name.startswith("q") and value is not None:
                check_quaternions(model, name, value)
        return (), single
    checked = []
    for name, value in named.items():
        if value is None:
            checked.append((name, None, 0))
            continue
        shape = trailing_shape(model, name)
        arr = as_array(value, name, shape)
        if name.startswith("q"):
            check_quaternions(model, name, arr)
        checked.append((name, arr, len(shape)))
    batch = batch_shape([c for c in checked if c[1] is not None])
    out = []
    for name, arr, k in checked:
        if arr is not None and arr.shape[: arr.ndim - k] != batch:
            arr = np.ascontiguousarray(np.broadcast_to(arr, batch + arr.shape[arr.ndim - k:]))
        out.append(arr)
    return batch, out
