"""Input validation shared by both backends: turn user input into contiguous
float64 arrays of the expected shape, or raise an error that names the argument."""
import functools
import math
import numbers
import re

import numpy as np


class URDFError(ValueError):
    """A URDF file is malformed or describes a physically impossible robot."""


#: The most leading (batch) dimensions an argument may have, on both backends.
MAX_BATCH_DIMS = 16


def short_repr(value, limit=60):
    """``repr(value)`` cut to ``limit`` characters: error messages never quote
    a user's value at unbounded length."""
    if isinstance(value, np.generic):  # np.float64(-0.5) -> -0.5
        value = value.item()
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def unprefixed(message):
    """An error's message without its leading "rbd: ", for a line that names rbd already."""
    message = str(message)
    return message[len("rbd: "):] if message.startswith("rbd: ") else message


def flag(value, name):
    """A yes/no argument as a bool: True or False only (NumPy's bools too), since a
    string such as "no" would otherwise read as True."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError("%s must be True or False, got %s" % (name, short_repr(value)))


def real_number(value, name):
    """``value`` as a float; TypeError for what is not a real number (a string such as
    " 1 " that float() would read, a boolean), a 0-d array of reals included."""
    if isinstance(value, np.ma.MaskedArray):  # (np.ma.masked itself included: it reads as nan)
        raise TypeError("%s is a masked array: rbd does not apply masks; pass a plain number" % name)
    zero_d = isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "fiu"
    if isinstance(value, (bool, np.bool_, str, bytes)) or not (isinstance(value, numbers.Real) or zero_d):
        raise TypeError("%s must be a real number, got %s" % (name, short_repr(value)))
    return float(value)


def short_names(names, separator=", ", shown=12):
    """Names quoted for a message: each cut short, at most ``shown`` of them."""
    names = list(names)
    text = separator.join(short_repr(n, 40) for n in names[:shown])
    return text + (separator + "..." if len(names) > shown else "")


def _is_real(e):
    """Whether an element of an object array is a real number (not a bool)."""
    return isinstance(e, numbers.Real) and not isinstance(e, (bool, np.bool_))


def _holds_boolean(x):
    """Whether a list or tuple that NumPy read as numbers held a boolean among them (a bool, a
    NumPy bool, or a boolean array), at any depth (NumPy refused a ragged or self-holding one)."""
    pending = [x]
    while pending:
        items = pending.pop()
        kinds = set(map(type, items))  # (at C speed: most lists hold floats alone)
        if bool in kinds or np.bool_ in kinds:
            return True
        if any(issubclass(k, (list, tuple, np.ndarray)) for k in kinds):
            for e in items:
                if isinstance(e, np.ndarray):
                    if e.dtype.kind == "b":
                        return True
                elif isinstance(e, (list, tuple)):
                    pending.append(e)
    return False


def _real_array(x, name):
    """``x`` as a float64 array; TypeError unless it holds real numbers.

    Refused rather than converted: complex numbers (the imaginary part would be
    dropped), strings (``"1"`` would read as 1.0), booleans, dates, and masked
    arrays (their mask would be ignored)."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError("%s is a masked array: rbd does not apply masks; pass a plain array "
                        "(e.g. x.filled(value))" % name)
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError("%s must be an array of real numbers (%s)" % (name, exc)) from None
    kind = arr.dtype.kind
    if kind in "fiu" and isinstance(x, (list, tuple)) and _holds_boolean(x):  # (read [True, 0.5] as [1.0, 0.5])
        raise TypeError("%s must be an array of real numbers, got a %s holding a boolean" % (name, type(x).__name__))
    if kind == "O":
        for e in arr.flat:
            if not _is_real(e):
                raise TypeError("%s must be an array of real numbers, got an object array holding %s"
                                % (name, type(e).__name__))
    elif kind not in "fiu":
        raise TypeError("%s must be an array of real numbers, got dtype %s" % (name, arr.dtype))
    try:
        with np.errstate(over="ignore"):  # (a long double of 1e400: the error below)
            converted = np.asarray(arr, dtype=np.float64)
    except OverflowError:  # a Python int beyond float64 (10**400)
        raise ValueError("%s holds a number too large for float64" % name) from None
    if kind == "f" and arr.dtype.itemsize > 8 and np.isinf(converted).any() and np.isfinite(arr).all():
        raise ValueError("%s holds a number too large for float64" % name)
    return converted


def as_array(x, name, trailing_shape, allow_batch=True):
    """Return ``x`` as a C-contiguous float64 array whose last dimensions are
    ``trailing_shape``; up to MAX_BATCH_DIMS leading batch dimensions are allowed
    if ``allow_batch``.

    Raises TypeError for anything but real numbers and ValueError for wrong shapes
    or non-finite values, naming ``name``.
    """
    arr = _real_array(x, name)
    trailing_shape = tuple(trailing_shape)
    k = len(trailing_shape)
    if arr.ndim < k or arr.shape[arr.ndim - k:] != trailing_shape or (not allow_batch and arr.ndim != k):
        expected = "(..., %s)" % ", ".join(map(str, trailing_shape)) if allow_batch else str(trailing_shape)
        if k == 1 and not allow_batch:
            expected = "(%d,)" % trailing_shape[0]
        raise ValueError("%s must have shape %s, got %s" % (name, expected, arr.shape))
    if arr.ndim - k > MAX_BATCH_DIMS:
        raise ValueError("%s has %d batch dimensions; at most %d are supported"
                         % (name, arr.ndim - k, MAX_BATCH_DIMS))
    if not np.isfinite(arr).all():  # (the method: np.all's dispatch costs as much as the test)
        where = ""
        if arr.ndim:  # the first bad entry's index
            where = " at %s[%s]" % (name, ", ".join(str(int(i)) for i in np.argwhere(~np.isfinite(arr))[0]))
        raise ValueError("%s must contain only finite numbers (found NaN or inf%s)" % (name, where))
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


def as_transform(M, name):
    """``as_array(M, name, (4, 4))`` that also rejects matrices that are not rigid
    transforms: the rotation block a rotation, the last row 0 0 0 1."""
    M = as_array(M, name, (4, 4))
    if np.abs(M[..., 3, :] - (0.0, 0.0, 0.0, 1.0)).max(initial=0.0) > 1e-6 or not is_rotation(M[..., :3, :3]):
        raise ValueError("%s must be a rigid transform (4x4: a rotation block orthonormal to 1e-6 "
                         "with determinant +1, last row 0 0 0 1 to 1e-6)" % name)
    return M


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
    """``q`` with its joint quaternions checked: a (near) zero quaternion has no
    direction (ValueError naming ``name``); any other is read as its direction.
    Quaternions so large that their squared norm would overflow come back scaled
    down (a copy), so that every formula downstream can square them."""
    idx = model.quaternion_q_idx
    if idx.size:
        blocks = q[..., idx[:, None] + np.arange(4)]
        largest = np.abs(blocks).max(axis=-1)
        # |quaternion| is in [largest, 2 largest]: computed from the scaled block, never overflowing.
        scaled = blocks / np.where(largest > 0.0, largest, 1.0)[..., None]
        norms = largest * np.sqrt(np.sum(scaled * scaled, axis=-1))
        if np.any(norms < 1e-12):
            first = tuple(int(i) for i in np.argwhere(norms < 1e-12)[0])  # (sample..., quaternion)
            k = int(idx[first[-1]])
            sample = "".join("%d, " % i for i in first[:-1])  # where in a batch
            raise ValueError("%s[%s%d:%d] is the quaternion of a joint and must not be zero" % (name, sample, k, k + 4))
        if np.any(largest > 1e100):
            q = q.copy()
            q[..., idx[:, None] + np.arange(4)] = scaled
    return q


_MODEL_TYPE = []


def check_model(model):
    """TypeError unless ``model`` is an ``rbd.Model`` (the same on both backends)."""
    if not _MODEL_TYPE:
        from .model import Model  # here: rbd.model imports this module
        _MODEL_TYPE.append(Model)
    if not isinstance(model, _MODEL_TYPE[0]):
        raise TypeError("model must be an rbd.Model, got %s" % type(model).__name__)


class SingularModelError(ValueError):
    """Forward dynamics is undefined: a joint's articulated inertia is singular
    (typically a massless subtree, such as a link without <inertial>, behind it)."""


def singular_joint_error(model, body, q=None, sample=None):
    """The error for a singular articulated inertia at ``body``'s joint in the batch's
    ``sample`` (its index; None for a single call); the overflow error instead where that
    sample's configuration ``q`` makes the mass matrix overflow (a pivot of inf - inf reads
    as singular: a prismatic coordinate of 1e160, say)."""
    if q is not None:
        from .reference import crba  # (on the error path only: O(n^2) per sample)
        try:
            with np.errstate(all="ignore"):
                overflows = not np.all(np.isfinite(crba(model, q)))
        except ValueError:  # (crba's own overflow error: q is valid, the algorithms took it)
            overflows = True
        if overflows:
            return overflow_error(sample)
    message = ("forward dynamics is singular at joint %s%s: the bodies it moves have no inertia along "
               "its motion (a massless link or subtree behind a moving joint); give them mass and "
               "inertia, fix the joint, or remove the link" % (short_repr(model.joint_names[body]),
                                                               _in_sample(sample)))
    unphysical = _unphysical_behind(model, body)
    if unphysical:
        message += ("; the inertia of bod%s %s behind it (with the links fixed to %s) is physically "
                    "inconsistent, which may be why" % ("ies" if len(unphysical) > 1 else "y",
                                                        short_names(unphysical, shown=4),
                                                        "them" if len(unphysical) > 1 else "it"))
    return SingularModelError(message)


def _unphysical_behind(model, body):
    """The links of ``body``'s subtree whose inertia is physically inconsistent."""
    from ._inertia import inconsistent_inertias
    parents = model.parents.tolist()
    behind = [False] * len(parents)
    behind[body] = True
    for i in range(body + 1, len(parents)):  # (a parent's index is below its children's)
        behind[i] = parents[i] >= 0 and behind[parents[i]]
    flagged = inconsistent_inertias(model.inertias)
    return [name for name, b, f in zip(model.body_names, behind, flagged) if b and f]


def singular_tolerance(model):
    """Per body (nbodies,): pivots of its joint's articulated inertia at or below this are
    singular. Near double round-off relative to the scale of what the joint moves: the
    largest inertial number of the bodies of its subtree, so that a gram-scale part on a
    ten-tonne crane is judged against its own scale, not the crane's. (Not their composite
    inertia about the joint: an articulated pivot is what the joint feels with the joints
    after it free, much less on a long chain.) Kept with the model."""
    cache = model._cache
    if cache.singular_tol is None:
        Y = np.asarray(model.inertias)
        scale = (np.abs(Y).max(axis=1) if Y.size else np.zeros(0)).tolist()
        parents = model.parents.tolist()
        for i in range(model.nbodies - 1, -1, -1):  # children (higher indices) are complete first
            if parents[i] >= 0 and scale[i] > scale[parents[i]]:
                scale[parents[i]] = scale[i]
        cache.singular_tol = 1e-13 * np.maximum(np.array(scale, dtype=float), 1e-300)
    return cache.singular_tol


#: a contact system J M^-1 J^T (+ r 1) whose Cholesky pivot falls to this fraction of its
#: largest entry (at least 1) is rank-deficient (both backends use it)
CONTACT_RANK_TOLERANCE = 1e-12


def _in_sample(sample):
    """Where in a batch an error arose: '' for a single call, else ' in sample 3 of the
    batch' (a flat batch) or ' in sample [3, 4] of the batch'."""
    if sample is None:
        return ""
    sample = [int(i) for i in sample]
    return " in sample %s of the batch" % (sample[0] if len(sample) == 1 else sample)


#: _in_sample's words, for the callers that tell them again in their own terms (rbd.dask, the
#: rbd command); ``sample_index`` reads the index back
IN_SAMPLE = re.compile(r" in sample (\[\d+(?:, \d+)*\]|\d+) of the batch")


def sample_index(match):
    """The sample an IN_SAMPLE match names, as a list of indices."""
    return [int(i) for i in match.group(1).strip("[]").split(", ")]


def batch_words(named):
    """", a batch of N samples," for a MemoryError, N the samples the state arrays of
    ``named`` ((name, value) pairs of a call's arguments) broadcast to ("" for a single
    call): each array's dimensions before its per-sample ones (two for fext, else one)."""
    shapes = [np.shape(x)[:-2 if name == "fext" else -1] for name, x in named
              if isinstance(x, np.ndarray) and np.ndim(x) >= (2 if name == "fext" else 1)]
    try:
        batch = np.broadcast_shapes(*shapes) if shapes else ()
    except ValueError:  # (shapes that do not broadcast: the call's own error, its first array's batch here)
        batch = shapes[0]
    return ", a batch of %d samples," % math.prod(batch) if batch else ""


def without_com(Y10):
    """Per 10-number inertia (..., 10), the two ways it has no center of mass: a negative
    mass, and a first moment of mass (m c) without mass (the rule of the inertia policy
    and of inertia10_to_mass_com)."""
    mass = Y10[..., 0]
    return mass < 0.0, (mass == 0.0) & np.any(Y10[..., 1:4] != 0.0, axis=-1)


def check_mass_com(Y10, name="Y10"):
    """Refuse 10-number inertias (a checked float array) with no center of mass (both
    backends' inertia10_to_mass_com)."""
    negative, moment_only = without_com(Y10)
    if np.any(negative):
        raise ValueError("%s holds a negative mass" % name)
    if np.any(moment_only):
        raise ValueError("%s holds a first moment of mass (m c) without mass: it has no center of mass" % name)


def redundant_contacts_error(model, contacts, regularization=0.0, sample=None):
    """The ValueError of a rank-deficient contact set (both backends): its frames by name
    (a contact may give an index), the batch's first such ``sample`` (its index, None for
    a single call), and what to do, given the ``regularization`` used."""
    names = [model.frame_names[model.frame_id(c.frame)] for c in contacts]
    fixed, few = [], []  # contacts that cannot be independent at any pose, said first
    for c, name in zip(contacts, names):
        body, dofs = int(model.frame_parents[model.frame_id(c.frame)]), 0
        if body < 0:
            fixed.append(name)
        while body >= 0:
            dofs, body = dofs + int(model.joint_nv[body]), int(model.parents[body])
        if 0 < dofs < c.dim and not model.mimic:  # (a mimic joint moves a frame with its primary's dof)
            few.append("%s (%d rows, %d dofs)" % (short_repr(name), c.dim, dofs))
    why = "a contact given twice, or a pose that aligns them"
    rows = sum(c.dim for c in contacts)
    if fixed:
        why = "contacts on frames fixed to the world, which no joint moves: %s" % short_names(fixed)
    elif rows > model.nv:
        why = "%d rows, more than the model's %d dofs, at any pose" % (rows, model.nv)
    elif few:
        why = "contacts with more rows than the dofs that move their frames: %s" % ", ".join(few)
    message = ("the contact set %s is rank-deficient%s (its constraints are redundant there: %s)"
               % (short_names(names), _in_sample(sample), why))
    if regularization > 0.0:
        return ValueError("%s, and regularization=%s is too small to make it solvable (the system's smallest "
                          "eigenvalue must exceed %g of its largest entry, or of 1 if that is smaller): give a "
                          "larger one"
                          % (message, short_repr(regularization), CONTACT_RANK_TOLERANCE))
    return ValueError(message + ": give a regularization > 0")


class ResultOverflow(ValueError):
    """A non-finite result of finite inputs (``rbd.ResultOverflow``, a ValueError: its own
    type so that a caller, a loader among them, can tell it and say whose numbers were too
    large).  ``sample``: the batch's sample it names (a tuple of indices), None for a single
    call."""
    sample = None


def overflow_error(sample=None):
    """The error for a non-finite result of finite inputs (in the batch's ``sample``, its
    index; None for a single call)."""
    exc = ResultOverflow("the result is not finite (inf or NaN) although every input is: the inputs are "
                         "too large for float64 arithmetic (overflow)%s" % _in_sample(sample))
    exc.sample = None if sample is None else tuple(int(i) for i in sample)
    return exc


def first_nonfinite_sample(results, sample_ndims):
    """The index of the first sample of a batch where any of ``results`` (each with
    ``sample_ndims`` trailing dimensions per sample, the same batch before them) holds an
    inf or NaN; None when there is no batch or all are finite."""
    bad = None
    for x, k in zip(results, sample_ndims):
        x = np.asarray(x)
        batch = x.shape[:x.ndim - k]
        if not batch or 0 in batch:
            return None
        b = ~np.isfinite(x.reshape(batch + (-1,))).all(axis=-1)
        bad = b if bad is None else bad | b
    if bad is None or not bad.any():
        return None
    return np.unravel_index(int(np.argmax(bad)), bad.shape)


def finite_results(function, sample_ndims=None):
    """``function`` (whose inputs it checks finite) raising the overflow error where its
    result would hold an inf or NaN (inputs near 1e300, a rotation vector of 1e200);
    ``sample_ndims`` (one per result: its dimensions per sample) lets the error name the
    batch's first overflowing sample."""
    @functools.wraps(function)
    def checked(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # said by the error
            result = function(*args, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if not all(np.isfinite(x).all() for x in results):
            sample = None if sample_ndims is None else first_nonfinite_sample(results, sample_ndims)
            raise overflow_error(sample)
        return result
    return checked


def check_finite_result(out, sample_ndim=None):
    """``out`` if finite, else the overflow ValueError (its inputs were checked finite),
    naming the batch's first overflowing sample when ``sample_ndim`` (the dimensions of
    one sample's result) is given."""
    if not np.isfinite(out).all():
        raise overflow_error(None if sample_ndim is None else first_nonfinite_sample((out,), (sample_ndim,)))
    return out


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
    check_model(model)
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
        for k, (name, value) in enumerate(named.items()):
            if name.startswith("q") and value is not None:
                single[k] = check_quaternions(model, name, value)
        return (), single
    checked = []
    for name, value in named.items():
        if value is None:
            checked.append((name, None, 0))
            continue
        shape = trailing_shape(model, name)
        arr = as_array(value, name, shape)
        if name.startswith("q"):
            arr = check_quaternions(model, name, arr)
        checked.append((name, arr, len(shape)))
    batch = batch_shape([c for c in checked if c[1] is not None])
    out = []
    for name, arr, k in checked:
        if arr is not None and arr.shape[: arr.ndim - k] != batch:
            arr = np.ascontiguousarray(np.broadcast_to(arr, batch + arr.shape[arr.ndim - k:]))
        out.append(arr)
    return batch, out


def _describe(x):
    if isinstance(x, np.ndarray):
        return "an array of %s of shape %s" % (x.dtype, x.shape)
    if isinstance(x, (tuple, list)):
        return "a %s of %d" % (type(x).__name__, len(x))
    return short_repr(x)


def check_out(out, shapes, inputs=()):
    """The arrays of an ``out=`` argument, checked against the result's shapes (one
    shape per result; ``out`` is one array for one result, a tuple or list of arrays
    for several): float64 numpy arrays of exactly those shapes, C-contiguous,
    writeable, and sharing no memory with the ``inputs`` ((name, array) pairs).
    Both backends raise these errors for the same ``out``."""
    if len(shapes) == 1:
        arrays = [out]
        labels = ["out"]
    else:
        if not isinstance(out, (tuple, list)) or len(out) != len(shapes):
            raise TypeError("out must be a tuple of %d arrays (one per result), got %s"
                            % (len(shapes), _describe(out)))
        arrays = list(out)
        labels = ["out[%d]" % k for k in range(len(shapes))]
    for label, array, shape in zip(labels, arrays, shapes):
        if not isinstance(array, np.ndarray) or array.dtype != np.float64:
            raise TypeError("%s must be a numpy array of float64, got %s" % (label, _describe(array)))
        if isinstance(array, np.ma.MaskedArray):
            raise TypeError("%s is a masked array: rbd does not apply masks; pass a plain array" % label)
        if array.shape != tuple(shape):
            raise ValueError("%s must have the result's shape %s, got %s" % (label, tuple(shape), array.shape))
        if not (array.flags.c_contiguous and array.flags.writeable and array.flags.aligned):
            raise ValueError("%s must be C-contiguous, aligned and writeable" % label)
        for name, x in inputs:
            x = _memory_of(x)
            if x is not None and np.may_share_memory(array, x):
                raise ValueError("%s must not share memory with the input %s" % (label, name))
    for k in range(len(arrays)):
        for j in range(k):
            if np.may_share_memory(arrays[k], arrays[j]):
                raise ValueError("%s must not share memory with %s" % (labels[k], labels[j]))
    return arrays


def _memory_of(x):
    """The array whose memory an input is read from: a memoryview, an array.array or
    another buffer becomes an array without a copy, so it can overlap ``out``."""
    if isinstance(x, np.ndarray) or x is None:
        return x
    if isinstance(x, (list, tuple, str, bytes, numbers.Number)):
        return None  # converted by copying
    try:
        return np.asarray(x)
    except Exception:  # not array-like: the input's own check names it
        return None


def write_out(result, out, inputs=()):
    """``result`` (an array, a float or a tuple of them) copied into ``out`` after
    check_out; returns ``out``."""
    results = result if isinstance(result, tuple) else (result,)
    arrays = check_out(out, [np.shape(r) for r in results], inputs)
    for array, r in zip(arrays, results):
        array[...] = r
    return out
