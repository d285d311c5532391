"""rbd's algorithms on Dask arrays: batches larger than memory, or spread over machines.

    import dask.array as da, rbd.dask
    q = da.from_zarr(...)                          # (N, nq), chunked along N
    tau = rbd.dask.rnea(model, q, v, a)            # a Dask array (N, nv), the same chunks along N
    tau.to_zarr(...)                               # or .compute()

Every algorithm that takes state arrays is here (those of ``rbd.ALGORITHMS``, the
contact dynamics, the kinematic Hessian, the regressor), with the same arguments: the
state arguments (and a batched ``fext``) are Dask (or NumPy) arrays whose leading batch
dimensions are chunked, their trailing coordinate dimensions whole, broadcast against
each other as ``rbd``'s own batches are; the result is a
Dask array (a tuple of them for the algorithms with several outputs) with the
inputs' batch chunks (each batch axis split wherever an argument that spans it is split)
and the algorithm's per-sample shape.  Each chunk runs through the backend active when the
graph is built (rbd_c in parallel on a worker's threads, or NumPy), in worker processes too.

The model goes to the workers once: with a ``dask.distributed`` client it is
scattered to every worker (``Client.scatter(..., broadcast=True)``) and the tasks
refer to it; with the local schedulers it is shared in memory.  Dask is an optional
dependency (``pip install 'rbd[dask]'``).
"""
import functools
import inspect
import re
import weakref

import numpy as np

from ._checks import IN_SAMPLE, MAX_BATCH_DIMS, _in_sample, sample_index


# the per-sample state arguments of each algorithm (what is chunked), in order
_STATE = {
    "integrate": ("q", "v"), "difference": ("q", "q"), "normalize": ("q",),
    "integrate_jacobians": ("q", "v"), "difference_jacobians": ("q", "q"),
    "forward_kinematics": ("q",), "frame_placement": ("q",), "frame_placements": ("q",),
    "frame_velocity": ("q", "v"), "frame_acceleration": ("q", "v", "v"), "frame_jacobian": ("q",),
    "frame_jacobian_time_derivative": ("q", "v"), "frame_velocity_derivatives": ("q", "v"),
    "frame_acceleration_derivatives": ("q", "v", "v"), "center_of_mass": ("q",), "com_jacobian": ("q",),
    "rnea": ("q", "v", "v"), "gravity": ("q",), "nonlinear_effects": ("q", "v"), "crba": ("q",),
    "aba": ("q", "v", "v"), "coriolis_matrix": ("q", "v"), "kinetic_energy": ("q", "v"),
    "potential_energy": ("q",), "centroidal_momentum": ("q", "v"), "centroidal_momentum_matrix": ("q",),
    "centroidal_momentum_matrix_time_variation": ("q", "v"), "rnea_derivatives": ("q", "v", "v"),
    "aba_derivatives": ("q", "v", "v"), "inverse_mass_matrix": ("q",),
    "kinematic_hessian": ("q",), "joint_torque_regressor": ("q", "v", "v"), "contact_jacobian": ("q",),
    "constrained_dynamics": ("q", "v", "v"), "impulse_dynamics": ("q", "v"),
}


def _import():
    try:
        import dask.array as da
    except ImportError as exc:
        raise ImportError("rbd.dask needs Dask: pip install 'rbd[dask]' (%s)" % exc) from exc
    return da


_SCATTERED = weakref.WeakKeyDictionary()  # model -> {client id: its future on the workers}


def _model_reference(model):
    """The model, or its future on every worker when a distributed client is running
    (scattered once per client, and kept: a dropped future would free the workers' copy)."""
    try:
        from distributed import get_client
        client = get_client()
    except (ImportError, ValueError):
        return model
    futures = _SCATTERED.setdefault(model, {})
    if client.id not in futures:
        futures[client.id] = client.scatter(model, broadcast=True, hash=True)
    return futures[client.id]


def _states_and_keywords(name, args, kwargs):
    """The state arguments (by position or by name, as ``rbd.<name>`` takes them) and the
    other arguments by name (a frame, a reference, a batched ``fext`` given as
    ``rbd.rnea(model, q, v, a, fext)``)."""
    import rbd
    count = len(_STATE[name])
    parameters = list(inspect.signature(getattr(rbd, name)).parameters.values())[1:]
    positional = [p.name for p in parameters if p.kind == p.POSITIONAL_OR_KEYWORD]  # (not out=)
    if len(args) > len(positional):
        raise TypeError("%s takes at most %d positional arguments after the model, got %d"
                        % (name, len(positional), len(args)))
    kwargs = dict(kwargs)
    for key, value in zip(positional, args):
        if key in kwargs:
            raise TypeError("%s got multiple values for argument %r" % (name, key))
        kwargs[key] = value
    missing = [key for key in positional[:count] if kwargs.get(key) is None]
    if missing:
        raise TypeError("%s needs its state arguments %s (%s missing)"
                        % (name, ", ".join(positional[:count]), ", ".join(missing)))
    return positional[:count], [kwargs.pop(key) for key in positional[:count]], kwargs


def _in_batch(error, starts, names):
    """``error`` of a chunk whose first sample is at ``starts`` (one index per batch
    dimension) told in the whole batch's indices: an entry of a state argument (``names``;
    each spans the whole batch, broadcast before chunking) or a sample's position shifted,
    any other message given the chunk's place."""
    message = str(error.args[0]) if error.args else ""

    def shift(index):
        return [i + s for i, s in zip(index, starts)] + index[len(starts):]

    def entry(match):  # q[1, 1, 3:7], at v[3, 4, 2]
        return "%s[%s" % (match.group(1), ", ".join(map(str, shift([int(i) for i in match.group(2).split(", ")]))))

    def sample(match):  # in sample [1, 1] of the batch, in sample 3 of the batch
        return _in_sample(shift(sample_index(match)))

    entries = re.compile(r"\b(%s)\[(\d+(?:, \d+)*)(?=[,\]])" % "|".join(map(re.escape, names)))
    told = IN_SAMPLE.sub(sample, entries.sub(entry, message, count=1), count=1)
    if told == message and any(starts):
        told = "%s (in the chunk of the batch from sample %s)" % (message, ", ".join(map(str, starts)))
    error.args = (told,) + tuple(error.args[1:])
    return error


def _backend(name):
    """The module of the backend named ``name`` (the one active when the graph was built:
    a worker process has its own active backend)."""
    if name == "numpy":
        from . import reference
        return reference
    from . import _import_compiled  # (a worker without rbd_c: the build hint, as set_backend gives)
    return _import_compiled()


def _on_chunk(name, count, nbatch, backend, model, *states, **kwargs):
    starts, states = [int(x[0]) if len(x) else 0 for x in states[:nbatch]], states[nbatch:]  # (its first sample)
    batched_fext = count > len(_STATE[name])
    if batched_fext:  # the chunk of a batched fext
        kwargs = dict(kwargs, fext=states[-1])
        states = states[:-1]
    algorithm = getattr(_backend(backend), name)
    try:
        results = algorithm(model, *states, **kwargs)
    except ValueError as error:  # (the chunked arguments' entries are shifted: an unbatched fext's are not)
        names = list(inspect.signature(algorithm).parameters)[1:1 + len(_STATE[name])]
        raise _in_batch(error, starts, names + ["fext"] * batched_fext) from None
    if isinstance(results, tuple):  # several outputs: each sample's flattened one after the other
        batch = np.shape(results[0])[:nbatch]  # (a chunk may have no samples: each size written out)
        return np.concatenate([np.reshape(r, batch + (int(np.prod(np.shape(r)[nbatch:])),)) for r in results], axis=-1)
    return np.asarray(results)


def run(name, model, *args, **kwargs):
    """``rbd.<name>(model, *args, **kwargs)`` on Dask arrays (see the module's docstring)."""
    import rbd
    from rbd._checks import check_model
    da = _import()
    if name not in _STATE:
        raise ValueError("rbd.dask runs the algorithms with state arrays (%s), not %r"
                         % (", ".join(sorted(_STATE)), name))
    kinds = _STATE[name]
    check_model(model)
    if "out" in kwargs:
        raise TypeError("rbd.dask.%s takes no out= (its result is a Dask array: store it with "
                        "to_zarr, da.store or compute)" % name)
    names, states, kwargs = _states_and_keywords(name, args, kwargs)
    trailing = [(model.nq,) if kind == "q" else (model.nv,) for kind in kinds]
    fext = kwargs.get("fext")
    if fext is not None and np.ndim(fext) > 2:  # a batched fext: chunked as the states
        names.append("fext")
        states.append(kwargs.pop("fext"))
        trailing.append((model.nbodies, 6))
    elif isinstance(fext, da.Array):  # one sample's: computed once here, not in every chunk's task
        kwargs["fext"] = fext.compute()
    states = [da.asarray(x) for x in states]
    for key, x in zip(names, states):
        if any(np.isnan(d) for d in x.shape):
            raise ValueError("%s: %s has unknown chunk sizes (shape %s, as after boolean indexing): "
                             "call its compute_chunk_sizes() first" % (name, key, x.shape))
    for key, x, own in zip(names, states, trailing):
        if x.ndim < len(own) or x.shape[x.ndim - len(own):] != own:
            raise ValueError("%s: %s has shape %s; expected (..., %s)" % (name, key, x.shape, ", ".join(map(str, own))))
    try:
        batch = np.broadcast_shapes(*(x.shape[:x.ndim - len(own)] for x, own in zip(states, trailing)))
    except ValueError:
        raise ValueError("%s: the state arguments' batch dimensions do not match: %s"
                         % (name, ", ".join("%s %s" % (key, x.shape) for key, x in zip(names, states)))) from None
    batch_ndim = len(batch)
    if batch_ndim < 1:
        raise ValueError("rbd.dask works on batches: give the state arrays leading batch dimensions")
    if batch_ndim > MAX_BATCH_DIMS:
        raise ValueError("%s: the state arguments have %d batch dimensions; at most %d are supported"
                         % (name, batch_ndim, MAX_BATCH_DIMS))
    batch_chunks = tuple(_axis_chunks(states, trailing, batch, k) for k in range(batch_ndim))
    inputs = [da.broadcast_to(x, batch + own).rechunk(batch_chunks + tuple((n,) for n in own))
              for x, own in zip(states, trailing)]
    # the per-sample output shapes, and the other arguments checked, from a batch of no samples
    # (one sample, any one, could be where the algorithm raises: a contact set singular there)
    # (in the arguments' dtypes: a complex or boolean one gets rbd's own error, before any chunk runs)
    probe = [np.empty((0,) + own, dtype=x.dtype) for x, own in zip(states, trailing)]
    empty = getattr(rbd, name)(model, *probe[:len(kinds)], **dict(kwargs, **(
        {"fext": probe[-1]} if len(probe) > len(kinds) else {})))  # (a batched fext's dtype checked too)
    several = isinstance(empty, tuple)
    shapes = [np.shape(x)[1:] for x in (empty if several else (empty,))]
    shape = (sum(int(np.prod(s)) for s in shapes),) if several else shapes[0]
    batch_index = "abcdefghijklmnop"[:batch_ndim]
    out_index = batch_index + "wxyz"[:len(shape)]  # (letters a-p: batch axes, q-t: the inputs' own)
    pairs = [_model_reference(model), None]
    for k, chunks in enumerate(batch_chunks):  # each batch axis's sample indices: a chunk's first is its place
        pairs += [da.arange(batch[k], chunks=chunks), batch_index[k]]
    for x, own, axes in zip(inputs, trailing, ("q", "r", "s", "tu")):  # (fext, last: two axes of its own)
        pairs += [x, batch_index + axes[:len(own)]]
    result = da.blockwise(functools.partial(_on_chunk, name, len(inputs), batch_ndim, rbd.backend, **kwargs),
                          out_index, *pairs,
                          dtype=float, concatenate=True, meta=np.empty((0,) * len(out_index)),
                          new_axes={axis: size for axis, size in zip(out_index[batch_ndim:], shape)})
    if several:
        parts, start = [], 0
        for own in shapes:
            stop = start + int(np.prod(own))
            parts.append(result[..., start:stop].reshape(result.shape[:batch_ndim] + own))
            start = stop
        return tuple(parts)
    return result


def _axis_chunks(states, trailing, batch, k):
    """The chunks of batch axis ``k``: split wherever an argument that spans it splits it
    (broadcasting puts a length-1 axis against it; one argument always spans it), so no
    chunk is larger than any argument's there, whichever argument gives which."""
    cuts = {0}
    for x, own in zip(states, trailing):
        axis = x.ndim - len(own) - len(batch) + k
        if axis >= 0 and x.shape[axis] == batch[k]:
            cuts.update(np.cumsum(x.chunks[axis]).tolist())
    cuts = sorted(cuts | {batch[k]})
    return tuple(b - a for a, b in zip(cuts[:-1], cuts[1:])) or (0,)


__all__ = ["run"] + sorted(_STATE)


def __getattr__(name):
    if name in _STATE:
        from . import reference  # (the algorithm's own signature and text, whichever backend runs it)
        own = getattr(reference, name)

        def algorithm(model, *args, **kwargs):
            return run(name, model, *args, **kwargs)
        algorithm.__name__ = algorithm.__qualname__ = name
        shown = inspect.signature(own)
        algorithm.__signature__ = shown.replace(parameters=[p for p in shown.parameters.values() if p.name != "out"])
        algorithm.__doc__ = ("rbd.%s on Dask arrays chunked along their batch dimensions (see rbd.dask): the "
                             "same arguments, a Dask array (or a tuple of them) as the result.\n\n%s"
                             % (name, inspect.getdoc(own) or ""))
        return algorithm
    raise AttributeError("module 'rbd.dask' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(_STATE))
