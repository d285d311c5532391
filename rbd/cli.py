"""The ``rbd`` command (``python -m rbd`` is the same).

    rbd ROBOT                         the demo: tree, mass matrix, one inverse dynamics
    rbd check ROBOT [--json]          is this robot file usable for dynamics?
    rbd inverse-dynamics ROBOT TRAJ -o TORQUES [--plot FILE]
    rbd simulate ROBOT --duration T --dt DT [--torques FILE | --constant-torque X] -o TRAJ [--plot FILE]
    rbd bench ROBOT                   rbd's own timings on this machine

ROBOT is a sample robot name (``rbd.sample_model_names()``), a URDF file, or an MJCF
file (``.xml``/``.mjcf``, read by MuJoCo).  Trajectory files are CSV with a header
(``time``, then one column per coordinate: a one-coordinate joint's column is its
name, a joint with several coordinates has ``NAME[0]``, ``NAME[1]``, ... in q order;
velocities and accelerations, when given, ``v:NAME...`` and ``a:NAME...``) or ``.npz``
(arrays ``time``, ``q`` and optionally ``v``, ``a``).  Torque files have ``time`` and
one column per velocity coordinate (``tau:NAME...``), or ``time`` and ``tau`` in npz, its
first row at t <= 0.  Rows in messages count from 1, the first row below the header.
"""
import argparse
import collections
import contextlib
import difflib
import errno
import functools
import io
import json
import math
import os
import re
import signal
import stat
import sys
import time as _time
import warnings
import zipfile

import numpy as np

import rbd
from rbd._checks import IN_SAMPLE, sample_index, unprefixed
from rbd.urdf import read_file, root_element

SUBCOMMANDS = ("check", "inverse-dynamics", "simulate", "bench")
CHUNK = 8192  # samples per batched call (a progress bar step)
MAX_STEPS = 10_000_000  # simulate: the trajectory is kept in memory
UNPHYSICAL = 1e100  # simulate: torques above it are the cause of an overflow, not the motion
DIVERGED_SPEED = 1e6  # simulate: velocities above it (rad/s, m/s) when forward dynamics turns singular: diverged
MAX_SECONDS = 60.0  # bench --seconds


class CommandError(Exception):
    """A user error: the command prints it and exits with status 2."""


# ------------------------------------------------------------------------------------------
# Robots and trajectory files
# ------------------------------------------------------------------------------------------
def load_robot(spec, floating_base=False, mimic=False):
    """A sample robot name, a URDF file or an MJCF file (told apart by the root element,
    ``<robot>`` or ``<mujoco>``: URDFs are often named ``.xml`` too)."""
    try:
        if spec in rbd.sample_model_names():
            return rbd.sample_model(spec, floating_base=True if floating_base else None, mimic=mimic)
        content = None  # a pipe (<(xacro ...)): read once here, a second open finds it drained
        if _pipe_or_device(spec):
            content = read_file(spec, "")
        source = spec if content is None else content
        if robot_file_kind(spec, content) == "mjcf":
            if floating_base or mimic:
                raise CommandError("%s: --floating-base and --mimic apply to URDF files; an MJCF file declares "
                                   "its joints itself (a <freejoint> for a floating base)" % spec)
            return rbd.load_mjcf(source)
        return rbd.load_urdf(source, floating_base=floating_base, mimic=mimic)
    except FileNotFoundError:
        raise CommandError("%s: no such robot (a sample robot: %s; or a URDF or MJCF file)"
                           % (spec, ", ".join(rbd.sample_model_names()))) from None
    except (OSError, ValueError, ImportError) as exc:  # URDFError is a ValueError
        raise CommandError("%s: %s" % (spec, exc)) from None


def _pipe_or_device(path):
    """Whether ``path`` names something that exists but is neither a file nor a folder (a
    pipe, /dev/stdin, a device)."""
    return os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path)


def robot_file_kind(path, content=None):
    """``"mjcf"`` for a file whose root element is ``<mujoco>``, ``"urdf"`` for
    ``<robot>``; otherwise by the file name (``.xml``/``.mjcf``: MJCF), so that the
    loader that can say what is wrong reads it.  ``content``: the file's bytes, read
    already (a pipe)."""
    try:
        if content is not None:
            root = root_element(content)
        else:
            with open(path, "rb") as f:
                root = root_element(f.read(1 << 16))
    except OSError:  # the loader gives the error
        root = None
    return {"mujoco": "mjcf", "robot": "urdf"}.get(root, _kind_by_name(path))


def _kind_by_name(path):
    return "mjcf" if str(path).lower().endswith((".xml", ".mjcf")) else "urdf"


def coordinate_names(model, space="q", prefix=""):
    """The column names of a model's q (``space="q"``) or v coordinates."""
    sizes = model.joint_nq if space == "q" else model.joint_nv
    names = []
    for joint, n in zip(model.joint_names, sizes):
        n = int(n)
        if n == 1:
            names.append(prefix + joint)
        else:
            names += ["%s%s[%d]" % (prefix, joint, k) for k in range(n)]
    return names


def read_table(path):
    """A CSV file with a header, or an npz file, as a dict name -> array (npz: its arrays
    as they are, 2-D ones split by the model later)."""
    source, npz = _input(path)
    return _read_npz(path, source) if npz else _read_csv(path, source)


def _input(path):
    """``(source, npz)``: what to read (the path, or a pipe's bytes: a pipe is read once,
    into memory, and its bytes re-read to find a bad row) and whether it is npz, by its
    name or by its first bytes (a zip archive, or a .npy array, refused later), so that a
    pipe (``/dev/stdin``) or a file under another name reads as what it holds."""
    try:
        if _pipe_or_device(path):
            mode = os.stat(path).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # (/dev/zero never ends)
                raise CommandError("%s is a device, not a file" % path)
            with open(path, "rb") as f:  # (a named pipe: its writer may start later)
                source = f.read()
            head = source[:6]
        else:
            source = path
            with open(path, "rb") as f:
                head = f.read(6)
    except OSError as exc:
        raise CommandError("%s: %s" % (path, exc.strerror or exc)) from None
    if _is_npz(path) and head and not head.startswith(NUMPY_MAGIC):  # (NumPy would say: pickled data)
        raise CommandError("%s: not an npz file: an npz is a zip archive, this file starts with %r (a CSV file "
                           "needs another name, such as .csv)" % (path, head[:6]))
    return source, _is_npz(path) or head.startswith(NUMPY_MAGIC)


NUMPY_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY")  # a zip archive (an empty one), a .npy array


def _is_npz(path):
    """Whether an output path is written as npz (inputs: _input)."""
    return str(path).lower().endswith(".npz")


def _text(source):
    """A CSV input's text: its file (a path), or a pipe's bytes read already."""
    if isinstance(source, bytes):
        return io.TextIOWrapper(io.BytesIO(source), encoding="utf-8-sig")
    return open(source, encoding="utf-8-sig")  # -sig: a byte-order mark (spreadsheets write one)


NOT_REAL = {"c": "complex numbers", "b": "booleans", "U": "text", "S": "bytes", "O": "Python objects"}


def _read_npz(path, source):
    try:
        archive = np.load(io.BytesIO(source) if isinstance(source, bytes) else source)  # (no pickles: refused)
    except OSError as exc:
        raise CommandError("%s: %s" % (path, exc.strerror or exc)) from None
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:  # an empty or a damaged file
        raise CommandError("%s: not a readable npz file (%s)" % (path, exc or "no data")) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):  # np.save's single array under an .npz name
        raise CommandError("%s: a single .npy array, not an npz archive of named arrays (numpy.savez writes one)"
                           % path)
    arrays = {}
    with archive:
        for key in archive.files:
            try:
                x = archive[key]
            except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
                raise CommandError("%s: array %r cannot be read (%s)" % (path, key, exc)) from None
            if x.dtype.kind not in "iuf":  # the library's policy: no silent cast of complex or text
                raise CommandError("%s: array %r holds %s, real numbers are expected"
                                   % (path, key, NOT_REAL.get(x.dtype.kind, x.dtype.name)))
            arrays[key] = x.astype(float)
    return arrays


def _read_csv(path, source):
    try:
        with _text(source) as f:
            columns = _header_columns(path, f)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "no data": said later, as an error
                try:
                    rows = np.loadtxt(f, delimiter=",", ndmin=2, quotechar='"')
                except ValueError:  # say where, in our row numbering (loadtxt's is 0-based)
                    raise CommandError("%s: %s" % (path, _bad_row(path, source, columns))) from None
    except OSError as exc:
        raise CommandError("%s: %s" % (path, exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise CommandError("%s: not UTF-8 text (a CSV file with a header line is expected)" % path) from None
    if rows.size == 0:
        rows = np.zeros((0, len(columns)))
    if rows.shape[1] != len(columns):
        raise CommandError("%s: %d columns in the header, %d in the rows" % (path, len(columns), rows.shape[1]))
    return {name: rows[:, k] for k, name in enumerate(columns)}


def _header_fields(path, f):
    """The names of the header record, read from ``f`` up to its end (blank lines before
    it skipped, a leading '#' -- numpy.savetxt's -- dropped).  CSV quoting: a quoted name
    keeps everything between its quotes (commas, line breaks, spaces; "" is one quote),
    an unquoted one is stripped of spaces: a joint's name comes back as ``_csv_name``
    wrote it."""
    line = next((line for line in f if line.strip()), None)  # blank lines before it are fine
    if line is None:
        raise CommandError("%s: empty file (a header line is needed: time, then the joint columns)" % path)
    line = line.lstrip().lstrip("#")
    names, field, quoted, inside, k = [], "", False, False, 0
    while True:
        if k == len(line):
            if not inside:
                break
            line, k = next(f, None), 0  # a line break in a quoted name: the record goes on
            if line is None:
                raise CommandError("%s: the header ends inside a quoted column name" % path)
            continue
        c = line[k]
        k += 1
        if inside:
            if c == '"' and line[k:k + 1] == '"':
                field, k = field + c, k + 1
            elif c == '"':
                inside = False
            else:
                field += c
        elif c == '"' and not quoted and not field.strip():
            field, quoted, inside = "", True, True
        elif c == ",":
            names.append(field if quoted else field.strip())
            field, quoted = "", False
        elif quoted:  # after the closing quote: spaces only
            if not c.isspace():
                raise CommandError("%s: header column %d: %r after the closing quote" % (path, len(names) + 1, c))
        else:
            field += c
    names.append(field if quoted else field.strip())
    return names


def _csv_name(name):
    """A column name as a CSV header field: quoted (the csv module's way) when the reader
    would otherwise split it (a comma, a line break), read a quote or strip its spaces."""
    if any(c in name for c in ',"\r\n') or name != name.strip() or name.startswith("#"):
        return '"%s"' % name.replace('"', '""')
    return name


def _header_columns(path, f):
    """The column names of the header (see _header_fields), checked."""
    columns = _header_fields(path, f)
    if len(columns) == 1 and any(sep in columns[0] for sep in ";\t"):
        raise CommandError("%s: the header has no commas: columns must be separated by ',' (not ';' or tabs)" % path)
    if all(_is_number(c) for c in columns):
        raise CommandError("%s: the first line holds numbers, not column names: the file needs a header line "
                           "(time, then the joint columns)" % path)
    unnamed = [k + 1 for k, c in enumerate(columns) if not c]
    if unnamed:
        raise CommandError("%s: header column %d has no name (a trailing comma?)" % (path, unnamed[0]))
    counts = collections.Counter(columns)  # (a count per column would be quadratic: 60,000 columns)
    repeated = sorted(c for c, n in counts.items() if n > 1)
    if repeated:
        raise CommandError("%s: column%s %s appear%s more than once in the header"
                           % (path, "s" if len(repeated) > 1 else "", ", ".join(repeated[:12]),
                              "" if len(repeated) > 1 else "s"))
    return columns


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _bad_row(path, source, columns):
    """Why loadtxt refused the rows: the first data row that is not len(columns) numbers.
    Rows count from 1, the first below the header; blank and '#' lines are not rows."""
    with _text(source) as f:
        _header_fields(path, f)  # (it may span lines)
        row = 0
        for line in f:
            cells = line.split("#")[0].strip()
            if not cells:
                continue
            row += 1
            cells = [c.strip().strip('"') for c in cells.split(",")]
            if len(cells) != len(columns):
                return "row %d has %d value%s, the header %d columns" % (row, len(cells), "s" * (len(cells) != 1),
                                                                       len(columns))
            for name, cell in zip(columns, cells):
                try:
                    float(cell)
                except ValueError:
                    return "row %d, column %s: %s is not a number" % (row, name, repr(cell) if cell else "an empty cell")
    return "not a table of numbers below its header"


def _columns(table, names, path, what, required=True):
    """The (N, len(names)) block of ``table``'s columns ``names``; None if none of them
    is there and they are optional."""
    present = [n for n in names if n in table]
    if not present and not required:
        return None
    missing = [n for n in names if n not in table]
    if missing:
        raise CommandError("%s: missing %s column%s %s" % (path, what, "s" if len(missing) > 1 else "",
                                                          ", ".join(missing[:12]) + (" ..." if len(missing) > 12 else "")))
    return np.stack([table[n] for n in names], axis=-1) if names else np.zeros((len(table["time"]), 0))


def read_samples(path, blocks):
    """``(time, [block array or None, ...], npz)`` of a CSV or npz file of samples.  ``blocks``
    lists ``(key, column names, what, required)``: in CSV a block is those columns, in npz
    the array ``key`` of shape (rows, len(names)).  The same checks for every file: no
    unknown column or array, at least one row, finite numbers, increasing time; errors
    name the column or the row (rows count from 1, the first below the header)."""
    source, npz = _input(path)
    if not npz:  # (before reading the rows)
        check_csv_names(path, [name for _, names, _, _ in blocks for name in names])
    table = _read_npz(path, source) if npz else _read_csv(path, source)
    if "time" not in table:
        raise CommandError("%s: no 'time' %s" % (path, "array" if npz else "column"))
    expected = ["time"] + [key if npz else name for key, names, _, _ in blocks for name in ([key] if npz else names)]
    known = set(expected)
    extra = [c for c in table if c not in known]
    if extra:
        raise CommandError("%s: unknown %s%s %s (expected %s%s)"
                           % (path, "array" if npz else "column", "s" if len(extra) > 1 else "",
                              ", ".join(extra[:12]) + (" ..." if len(extra) > 12 else ""),
                              ", ".join(expected[:8]), ", ..." if len(expected) > 8 else ""))
    t = table["time"]
    if t.ndim != 1:
        raise CommandError("%s: time must be a 1-D array, got shape %s" % (path, t.shape))
    if len(t) < 1:
        raise CommandError("%s: no rows" % path)
    values, labels = [], []
    for key, names, what, required in blocks:
        if not npz:
            x = _columns(table, names, path, what, required)
        else:
            x = table.get(key)
            if x is None and required:
                raise CommandError("%s: no %r array" % (path, key))
            if x is not None and x.shape != (len(t), len(names)):
                raise CommandError("%s: %s must have shape (%d, %d), got %s" % (path, key, len(t), len(names), x.shape))
        values.append(x)
        labels.append(["%s[:, %d]" % (key, k) if npz else "column " + name for k, name in enumerate(names)])
    for x, names in zip([t[:, None]] + values, [["time" if npz else "column time"]] + labels):
        if x is not None and not np.all(np.isfinite(x)):
            row, col = np.argwhere(~np.isfinite(x))[0]
            raise CommandError("%s: row %d, %s: %g is not a finite number" % (path, row + 1, names[col], x[row, col]))
    steps = np.flatnonzero(np.diff(t) <= 0.0)
    if steps.size:
        k = steps[0] + 1
        raise CommandError("%s: time is not increasing at row %d (%g after %g)" % (path, k + 1, t[k], t[k - 1]))
    return t, values, npz


def read_trajectory(model, path):
    """``(time, q, v, a, npz)`` of a trajectory file (v and a None when absent), checked."""
    t, (q, v, a), npz = read_samples(path, [("q", coordinate_names(model), "joint", True),
                                       ("v", coordinate_names(model, "v", "v:"), "velocity", False),
                                       ("a", coordinate_names(model, "v", "a:"), "acceleration", False)])
    return t, q, v, a, npz


def _derivative(t, size, step):
    """d/dt at every row from ``size`` neighbouring rows (centred, shifted inwards at the
    ends): the derivative of the polynomial through them, exact for degree < size at any
    spacing.  ``step(rows)`` gives the (N, n) displacements from each row to ``rows``."""
    if len(t) < 2:
        raise CommandError("a trajectory needs at least two rows to derive a from v, three to derive v and a from "
                           "q (or give them as columns)")
    size = min(size, len(t))
    rows = np.clip(np.arange(len(t)) - size // 2, 0, len(t) - size)[:, None] + np.arange(size)
    offsets = t[rows] - t[:, None]
    scale = np.abs(offsets).max(axis=1, keepdims=True)  # offsets/scale in [-1, 1]: well-conditioned
    powers = (offsets / scale)[:, None, :] ** np.arange(size)[:, None]  # powers[k, i, j] = offset_j^i
    target = np.zeros((len(t), size, 1))
    target[:, 1] = 1.0  # sum_j w_j offset_j^i = d/dt t^i at 0
    try:
        weights = np.linalg.solve(powers, target)[..., 0] / scale
    except np.linalg.LinAlgError:  # time steps too small for float64
        weights = np.full(rows.shape, np.nan)
    return sum(weights[:, [j]] * step(rows[:, j]) for j in range(size))


def derive_motion(model, t, q, v=None):
    """v (unless given) and a of a sampled trajectory.  v from the five nearest samples
    (``difference`` on the manifold, fourth order) and a from the three nearest v (second
    order, at the ends too): a is the derivative of v as rnea takes it, and a v of lower
    order would leave an O(dt) error in a at the ends.  Exact for constant acceleration."""
    if v is None and len(t) == 2:  # (a line through two q: a = 0 whatever the motion)
        raise CommandError("a trajectory needs at least three rows to derive v and a from q (two when it gives "
                           "v; or give v and a as columns)")
    with np.errstate(all="ignore"):  # an overflow is found below, naming the row
        if v is None:
            v = _derivative(t, 5, lambda rows: rbd.difference(model, q, q[rows]))
            _finite(v, "the velocities derived from q")
        a = _derivative(t, 3, lambda rows: v[rows] - v)
        _finite(a, "the accelerations derived from v")
    return v, a


# A library error about one sample of a batch names its argument and index ("q[3, 3:7] is
# the quaternion ...", "... at v[3, 2]"); the command's user knows rows and columns.
_SAMPLE = re.compile(r"\b(q0|q1|q|v|a)\[(\d+), (\d+)(?::(\d+))?\]")


def in_rows(model, exc, npz, first=0):
    """The text of a library ValueError with its sample index as the file's row (from 1;
    the batch started at row index ``first``) and its coordinates as columns (of an ``npz``
    file: the array's columns) and joint.  q0 and q1 are difference's q: derive_motion passes the
    rows in order as q0, checked first."""
    text = str(exc)
    found = _SAMPLE.search(text)
    if not found:
        sample = IN_SAMPLE.search(text)  # an error of the sample as a whole (an overflow; a flat batch)
        if sample:
            return "row %d: %s" % (sample_index(sample)[0] + first + 1, text.replace(sample.group(0), ""))
        return text
    array, row, lo = found.group(1), int(found.group(2)) + first + 1, int(found.group(3))
    hi = int(found.group(4) or lo + 1) - 1
    space, key = ("q", "q") if array.startswith("q") else ("v", array)
    sizes = model.joint_nq if space == "q" else model.joint_nv
    joint = model.joint_names[np.repeat(np.arange(len(sizes)), sizes)[lo]]  # the joint of coordinate lo
    if npz:
        names = ["%s[:, %d]" % (key, k) for k in range(lo, hi + 1)]
    else:
        names = coordinate_names(model, space, "" if key == "q" else key + ":")[lo:hi + 1]
    columns = "column %s" % names[0] if lo == hi else "columns %s..%s" % (names[0], names[-1])
    detail = text.replace(found.group(0), "joint %s" % joint)
    detail = detail.replace("joint %s is the quaternion of a joint" % joint, "the quaternion of joint %s" % joint)
    return "row %d (%s): %s" % (row, columns, detail.replace(" and must not be zero", " must not be zero"))


def _finite(x, what):
    bad = np.flatnonzero(~np.all(np.isfinite(x), axis=1))
    if bad.size:
        raise CommandError("row %d: %s overflow (coordinates too large or time steps too small)" % (bad[0] + 1, what))


def write_table(path, t, blocks):
    """Write ``time`` and the named column blocks (name list, (N, k) array) to CSV or npz
    (npz: one array per block, keyed by the block's key)."""
    try:
        if _is_npz(path):
            with open(path, "ab" if _is_stdout(path) else "wb") as f:  # (np.savez would append ".npz" to "X.NPZ")
                np.savez(f, time=t, **{key: values for key, _, values in blocks})
            return
        names = [n for _, names, _ in blocks for n in names]
        check_csv_names(path, names)
        data = np.column_stack([t] + [values for _, _, values in blocks])
        # (one open: savetxt given a name opens it twice, which ends a FIFO's reader; UTF-8, as read back)
        with open(path, "a" if _is_stdout(path) else "w", encoding="utf-8", newline="") as f:  # (>> log: kept)
            np.savetxt(f, data, delimiter=",", header=",".join(_csv_name(n) for n in ["time"] + names), comments="",
                       fmt="%.17g")
    except BrokenPipeError:  # -o /dev/stdout | head: the reader went away, main() says it is fine
        raise
    except OSError as exc:
        raise CommandError("cannot write %s: %s" % (path, exc.strerror or exc)) from None


def check_csv_names(path, names):
    """Refuse a CSV file whose columns would include a second ``time`` (a one-coordinate
    joint named time): the file could not be read back."""
    if not _is_npz(path) and "time" in names:
        raise CommandError("%s: the robot has a joint named 'time', whose column would be a second time column; "
                           "use an .npz file" % path)


def _is_stdout(path):
    """Whether ``path`` is the file standard output writes to (``-o /dev/stdout``)."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # (no stdout, or one without a file)
        return False


def _summary(output):
    """print for a command's summary lines: to standard output, or to standard error when the
    output file is standard output itself (``-o /dev/stdout``), whose data they would end
    (not a device that keeps nothing: ``-o /dev/null > /dev/null`` stays silent)."""
    same = _is_stdout(output) and not stat.S_ISCHR(os.fstat(sys.stdout.fileno()).st_mode)
    return functools.partial(print, file=sys.stderr if same else sys.stdout)


def check_outputs(output, plot_path=None):
    """Refuse, before any work, output paths that cannot be written as given: a folder that
    does not exist, a folder as the file, "-" (not standard output), a plot without a file
    type matplotlib writes (it would append ".png" to the name) or over the output."""
    for path in (output, plot_path):
        if path == "-":  # (not standard output: the summary line goes there)
            raise CommandError("cannot write '-': rbd writes files, not standard output (give a file name)")
        if path == "":
            raise CommandError("cannot write '': give a file name")
        if path is not None and not _pipe_or_device(path):  # (/dev/stdout: left alone)
            # (a symbolic link: where it leads is written)
            real = os.path.realpath(path)
            folder = os.path.dirname(real)
            if not os.path.isdir(folder):
                raise CommandError("cannot write %s: no folder %s" % (path, folder))
            if os.path.isdir(real):
                raise CommandError("cannot write %s: it is a folder (give a file name)" % path)
            _check_writable(path, real)
    if plot_path is not None:
        kind, plt = plot_type(plot_path), _pyplot()
        fig = plt.figure()
        types = fig.canvas.get_supported_filetypes()
        plt.close(fig)
        if kind not in types:
            raise CommandError("--plot %s: the name must end in a file type matplotlib writes (.png, .pdf, .svg, ...%s)"
                               % (plot_path, "" if not kind else "; not .%s" % kind))
        if _same_file(plot_path, output):
            raise CommandError("--plot %s: the same file as -o" % plot_path)


def _same_file(a, b):
    """Whether two paths name one file: through links (symbolic or hard) too."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # (one does not exist yet: where each leads)
        return os.path.realpath(a) == os.path.realpath(b)


def _check_writable(path, real):
    """Whether ``path`` (``real`` where it leads; not a pipe or a device: opening a FIFO
    would pair with its reader and end it) can be written, found before the work (a
    read-only file or folder, /proc): an existing file is opened for appending, a new one
    created and removed."""
    try:
        if os.path.exists(real):
            with open(real, "ab"):
                pass
        else:
            os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
            os.unlink(real)
    except OSError as exc:
        raise CommandError("cannot write %s: %s" % (path, exc.strerror or exc)) from None


def plot_type(path):
    return os.path.splitext(str(path))[1][1:].lower()


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError("--plot needs matplotlib: pip install 'rbd[plot]'") from None
    return plt


def progress(total, what):
    """A progress bar (tqdm if installed, else a line per 10%) with ``update(n)`` and ``close()``."""
    try:
        from tqdm import tqdm
        return tqdm(total=total, desc=what, unit="sample", file=sys.stderr, disable=total < 2 * CHUNK)
    except ImportError:
        return _PlainProgress(total, what)


class _PlainProgress:
    def __init__(self, total, what):
        self.total, self.what, self.done, self.shown = total, what, 0, 0

    def update(self, n):
        self.done += n
        tenth = 10 * self.done // max(self.total, 1)
        if self.total >= 2 * CHUNK and tenth > self.shown:
            self.shown = tenth
            print("%s: %d%%" % (self.what, 10 * tenth), file=sys.stderr)

    def close(self):
        pass


def plot(path, t, values, labels, ylabel, title):
    """One line per column, labelled, to an image file (matplotlib, the ``plot`` extra) of
    the type its name ends in (checked by check_outputs)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 5))
    for k, label in enumerate(labels):
        ax.plot(t, values[:, k], label=label, lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(labels) <= 24:
        ax.legend(fontsize=7, ncol=2 if len(labels) > 8 else 1, loc="best")
    fig.tight_layout()
    try:
        image = io.BytesIO()  # (rendered first: a PNG or PDF writer seeks, which a pipe cannot)
        fig.savefig(image, dpi=100, format=plot_type(path))
        with open(path, "wb") as f:
            f.write(image.getvalue())
    except (OSError, ValueError) as exc:  # ValueError: a file type matplotlib cannot write
        raise CommandError("cannot write %s: %s" % (path, getattr(exc, "strerror", None) or exc)) from None
    finally:
        plt.close(fig)


# ------------------------------------------------------------------------------------------
# Subcommands
# ------------------------------------------------------------------------------------------
def check(args):
    """The report of ``rbd check``: (exit status, dict)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = load_robot(args.robot, args.floating_base, args.mimic)
        except CommandError as exc:
            return 1, {"robot": args.robot, "usable": False, "reason": as_options(exc)}
    report = {
        "robot": args.robot, "name": model.name, "nq": model.nq, "nv": model.nv, "nbodies": model.nbodies,
        "total_mass": model.total_mass, "joints": _joint_reports(model, args),
        "bodies": [{"name": b, "mass": float(model.inertias[i, 0]),
                    "com": (model.inertias[i, 1:4] / model.inertias[i, 0]).tolist() if model.inertias[i, 0] > 0 else None,
                    "inertia_at_origin": model.inertias[i, 4:].tolist()}
                   for i, b in enumerate(model.body_names)],
        "frames": list(model.link_frame_names),
        "mimic": [list(m) for m in model.mimic],
        "warnings": [as_options(w.message) for w in caught],
    }
    problems = []
    if model.nbodies == 0:
        problems.append("the model has no moving joint%s" % ("" if args.floating_base else
                                                           " (--floating-base gives a URDF's root link a free flyer)"))
    if model.total_mass <= 0.0:
        problems.append("the model has no mass")
    if model.nv:
        try:
            q = rbd.neutral(model)
            rbd.aba(model, q, np.zeros(model.nv), np.zeros(model.nv))
        except rbd.SingularModelError as exc:
            problems.append(str(exc) if str(exc).startswith("forward dynamics is singular")
                            else "forward dynamics is singular: %s" % exc)
    report["problems"] = problems
    report["usable"] = not problems
    return (0 if not problems else 1), report


def _joint_reports(model, args):
    """Each joint's name, type, parent body and limits; a mimic joint (it has no coordinate
    in the model) is ``mimic``: its primary, multiplier and offset, with the limits the
    file gives it (read from the file loaded with independent joints)."""
    limits = lambda m, i: (m.lower_limits[m.q_idx[i]:m.q_idx[i] + m.joint_nq[i]].tolist(),  # noqa: E731
                           m.upper_limits[m.q_idx[i]:m.q_idx[i] + m.joint_nq[i]].tolist())
    mimic = {joint: (primary, multiplier, offset) for joint, primary, multiplier, offset in model.mimic}
    if mimic:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # already reported by the first load
            free = load_robot(args.robot, args.floating_base, mimic=False)
    joints = []
    for i, (name, kind) in enumerate(zip(model.joint_names, model.joint_kinds)):
        lower, upper = limits(free, free.joint_names.index(name)) if name in mimic else limits(model, i)
        joints.append({"name": name, "type": rbd.JointKind(int(kind)).name.lower(), "parent": model.parents[i].item(),
                       "lower": lower, "upper": upper,
                       "mimic": dict(zip(("joint", "multiplier", "offset"), mimic[name])) if name in mimic else None})
    return joints


def json_safe(value):
    """The report with unbounded limits (infinities; any NaN too) as null: strict JSON."""
    if isinstance(value, dict):
        return {k: json_safe(x) for k, x in value.items()}
    if isinstance(value, list):
        return [json_safe(x) for x in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _print_check(report):
    if "reason" in report:
        print("not usable: %s" % report["reason"])
        return
    print("robot %r: nq = %d, nv = %d, %d bodies, total mass %.6g kg"
          % (report["name"], report["nq"], report["nv"], report["nbodies"], report["total_mass"]))
    print("\njoints (type, parent body, limits):")
    for j in report["joints"]:
        limits = ", ".join("[%g, %g]" % lu for lu in zip(j["lower"], j["upper"]) if np.isfinite(lu).any())
        if j["mimic"]:
            limits = "mimic of %s: %s = %g %s + %g%s" % (j["mimic"]["joint"], j["name"], j["mimic"]["multiplier"],
                                                        j["mimic"]["joint"], j["mimic"]["offset"],
                                                        ", own limits " + limits if limits else "")
        print("  %-28s %-11s parent %-3d %s" % (j["name"], j["type"], j["parent"], limits or "unlimited"))
    print("\nbodies (mass kg, centre of mass m, inertia at the body origin xx xy xz yy yz zz):")
    for b in report["bodies"]:
        com = "massless" if b["com"] is None else "[%s]" % ", ".join("%.4g" % x for x in b["com"])
        print("  %-28s %-10.4g %-34s %s" % (b["name"], b["mass"], com, " ".join("%.3g" % x for x in b["inertia_at_origin"])))
    print("\nframes: %s" % ", ".join(report["frames"]))
    if report["mimic"]:
        print("mimic joints: %s" % ", ".join("%s = %g %s + %g" % (j, m, p, o) for j, p, m, o in report["mimic"]))
    for w in report["warnings"]:
        print("warning: %s" % w)
    for p in report["problems"]:
        print("problem: %s" % p)
    print("\n%s" % ("usable" if report["usable"] else "NOT usable"))


def inverse_dynamics(args):
    check_outputs(args.output, args.plot)
    model = load_robot(args.robot, args.floating_base, args.mimic)
    t, q, v, a, npz = read_trajectory(model, args.trajectory)
    tau = np.empty((len(t), model.nv))
    start = 0  # the row index where the batch that fails starts
    bar = progress(len(t), "inverse dynamics")
    try:
        if v is None or a is None:
            v, derived = derive_motion(model, t, q, v)
            a = derived if a is None else a
        with np.errstate(all="ignore"):  # an overflow is found below, naming the row
            for start in range(0, len(t), CHUNK):
                stop = min(start + CHUNK, len(t))
                tau[start:stop] = rbd.rnea(model, q[start:stop], v[start:stop], a[start:stop])
                bar.update(stop - start)
        _finite(tau, "the torques")
    except CommandError as exc:
        raise CommandError("%s: %s" % (args.trajectory, exc)) from None
    except ValueError as exc:  # the library refusing a sample (a zero quaternion) or an overflowed value
        raise CommandError("%s: %s" % (args.trajectory, in_rows(model, exc, npz, start))) from None
    finally:
        bar.close()  # (an error then starts its own line)
    names = coordinate_names(model, "v", "tau:")
    write_table(args.output, t, [("tau", names, tau)])
    say = _summary(args.output)
    say("%d samples: torques written to %s" % (len(t), args.output))
    if args.plot:
        plot(args.plot, t, tau, [n[4:] for n in names], "joint torque (N m or N)", "inverse dynamics of %s" % model.name)
        say("plot written to %s" % args.plot)


def _torque_source(model, args):
    """tau(t) for the simulation: zero, constant, or a file's (held from each row's time)."""
    if args.torques:  # the same checks as a trajectory file
        times, (values,), _ = read_samples(args.torques, [("tau", coordinate_names(model, "v", "tau:"), "torque", True)])
        if times[0] > 0.0:  # the simulation starts at 0: the torques before the first row are unknown
            raise CommandError("%s: the first row is at t = %g s; it must be at t = 0 or earlier" % (args.torques, times[0]))
        return lambda t: values[np.searchsorted(times, t, side="right") - 1]
    constant = np.full(model.nv, args.constant_torque)
    return lambda t: constant


def _diverged(t, v, k, torque, args, singular=None):
    """The error of a simulation stopped at step k (v[:k + 1] are finite: the step's inputs
    were checked) by an overflow, or by forward dynamics turning ``singular`` (its error):
    torques near float64's range, or a motion that grew without bound, as semi-implicit
    Euler's does when the step is too long for it (a fast, light link gaining energy at every
    step) -- a singular joint at velocities no machine reaches is that too (a usable model
    loses its last digits there); any other singularity is the model's."""
    fastest = float(np.max(np.abs(v[:k + 1])))
    strongest = float(np.max(np.abs(torque(t[:k + 1]))))  # (a torque file's rows held, or a constant)
    if singular is not None and fastest < DIVERGED_SPEED:
        return "simulation stopped at t = %g s: %s" % (t[k], singular)
    if singular is None and strongest >= UNPHYSICAL:
        return ("simulation stopped at t = %g s: the torques (up to %.3g) make the motion overflow float64"
                % (t[k], strongest))
    return ("simulation diverged at t = %g s: the velocities reached %.3g and then %s; the step --dt %g is too "
            "long for this motion: try a smaller --dt" % (t[k], fastest, "overflowed float64" if singular is None
                                                          else "forward dynamics turned singular", args.dt))


def simulate(args):
    check_outputs(args.output, args.plot)
    ratio = args.duration / args.dt  # both positive and finite (argparse); the ratio may still overflow
    if not ratio < MAX_STEPS + 0.5:  # (the steps are the ratio rounded)
        raise CommandError("--duration %g / --dt %g = %.10g steps: more than %d (raise --dt or shorten --duration)"
                           % (args.duration, args.dt, ratio, MAX_STEPS))
    steps = int(round(ratio))
    if steps < 1:
        raise CommandError("--duration %g is at most half of --dt %g: no step" % (args.duration, args.dt))
    model = load_robot(args.robot, args.floating_base, args.mimic)
    check_csv_names(args.output, coordinate_names(model))  # before the work
    torque = _torque_source(model, args)
    t = np.arange(steps + 1) * args.dt
    q = np.empty((steps + 1, model.nq))
    v = np.zeros((steps + 1, model.nv))
    q[0] = rbd.neutral(model)
    energy = lambda k: rbd.kinetic_energy(model, q[k], v[k]) + rbd.potential_energy(model, q[k])  # noqa: E731
    e0, work = energy(0), 0.0
    bar = progress(steps, "simulate")
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # (an overflow is the error below, not a NumPy warning)
            for k in range(steps):
                tau = torque(t[k])
                qdd = rbd.aba(model, q[k], v[k], tau)
                v[k + 1] = v[k] + args.dt * qdd                             # semi-implicit (symplectic) Euler:
                q[k + 1] = rbd.integrate(model, q[k], args.dt * v[k + 1])   # the new velocity moves q on the manifold
                work += args.dt * float(tau @ v[k + 1])
                if not math.isfinite(work):  # (v overflowed, or the work itself)
                    raise rbd.ResultOverflow("the velocities or the work of the torques overflow float64")
                if (k + 1) % CHUNK == 0:
                    bar.update(CHUNK)
        bar.update(steps % CHUNK)  # (the last, partial chunk: the bar ends at 100%)
    except rbd.ResultOverflow:  # the torques, or the motion itself, grew past float64
        raise CommandError(_diverged(t, v, k, torque, args)) from None
    except rbd.SingularModelError as exc:
        raise CommandError(_diverged(t, v, k, torque, args, singular=exc)) from None
    except ValueError as exc:
        raise CommandError("simulation stopped at t = %g s: %s" % (t[k], exc)) from None
    finally:
        bar.close()  # (an error then starts its own line)
    try:  # (the last state's energy, finite velocities squared, may overflow too)
        final = energy(steps)
        drift = final - e0 - work
        # The zero of potential energy is arbitrary (the initial energy may be ~0 J): the drift is
        # judged against the largest kinetic energy reached, the energy that changed form.
        largest = max(float(np.max(rbd.kinetic_energy(model, q[k:k + CHUNK], v[k:k + CHUNK])))
                      for k in range(0, steps + 1, CHUNK))
    except rbd.ResultOverflow:
        raise CommandError(_diverged(t, v, steps, torque, args)) from None
    write_table(args.output, t, [("q", coordinate_names(model), q), ("v", coordinate_names(model, "v", "v:"), v)])
    say = _summary(args.output)
    say("%d step%s of %g s: trajectory written to %s" % (steps, "s" if steps > 1 else "", args.dt, args.output))
    say("energy: %.6g J at the start, %.6g J at the end, work of the torques %.6g J, drift %.3g J%s"
          % (e0, final, work, drift,
             " (%.2g%% of the largest kinetic energy, %.3g J)" % (100.0 * abs(drift) / largest, largest)
             if largest > 0.0 else ""))
    if args.plot:
        plot(args.plot, t, q, coordinate_names(model), "joint coordinate (rad or m)", "simulation of %s" % model.name)
        say("plot written to %s" % args.plot)


def bench(args):
    model = load_robot(args.robot, args.floating_base, args.mimic)
    rng = np.random.default_rng(0)
    q, v, a = rbd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    frame = model.link_frame_names[-1]
    calls = [("rnea", lambda: rbd.rnea(model, q, v, a)), ("crba", lambda: rbd.crba(model, q)),
             ("aba", lambda: rbd.aba(model, q, v, a)), ("forward_kinematics", lambda: rbd.forward_kinematics(model, q)),
             ("frame_jacobian", lambda: rbd.frame_jacobian(model, q, frame)),
             ("rnea_derivatives", lambda: rbd.rnea_derivatives(model, q, v, a)),
             ("aba_derivatives", lambda: rbd.aba_derivatives(model, q, v, a)),
             ("inverse_mass_matrix", lambda: rbd.inverse_mass_matrix(model, q))]
    n = args.batch
    qb, vb = rbd.random_configuration(model, rng, batch=n), rng.normal(size=(n, model.nv))
    calls.append(("rnea, batch of %d (per sample)" % n, lambda: rbd.rnea(model, qb, vb, vb)))
    print("rbd %s (backend %s) on %r: nq = %d, nv = %d" % (rbd.__version__, rbd.backend, model.name, model.nq, model.nv))
    singular = None
    for name, f in calls:
        try:
            start = _time.perf_counter()
            f()
            elapsed = _time.perf_counter() - start
        except rbd.SingularModelError as exc:  # forward dynamics of a robot with a massless branch
            print("  %-36s %10s    (singular model)" % (name, "-"))
            singular = str(exc)
            continue
        except MemoryError as exc:  # the nv x nv rows of a model of tens of thousands of dofs: the rest still run
            print("  %-36s %10s    (out of memory: %s)" % (name, "-", str(exc) or "not enough memory"))
            continue
        number = 1  # (a first call that takes longer than --seconds is the measure: large models)
        while elapsed <= args.seconds:
            number *= 4
            start = _time.perf_counter()
            for _ in range(number):
                f()
            elapsed = _time.perf_counter() - start
        per = elapsed / number / (n if "batch" in name else 1)
        print("  %-36s %10.2f us" % (name, per * 1e6))
    if singular:
        print("singular model: %s" % singular)


# ------------------------------------------------------------------------------------------
# Entry point
# ------------------------------------------------------------------------------------------
def _positive(kind, at_most=None):
    """An argparse type: a finite number > 0 of ``kind`` (and <= at_most)."""
    def parse(text):
        try:
            x = kind(text)
        except ValueError:
            x = None
        if x is None or not (math.isfinite(x) and x > 0 and (at_most is None or x <= at_most)):
            raise argparse.ArgumentTypeError("expected a positive %s%s, got %r" % (
                "integer" if kind is int else "number", "" if at_most is None else " up to %g" % at_most, text))
        return x
    return parse


def _finite_float(text):
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError("expected a finite number, got %r" % text)
    return x


def _parser():
    parser = argparse.ArgumentParser(
        prog="rbd", description="Rigid-body dynamics from the command line.",
        usage="rbd [--backend {numpy,cython}] {%s} ...\n       rbd [ROBOT] [--floating-base] [--mimic]   "
              "(the demo; ROBOT defaults to arm7)" % ",".join(SUBCOMMANDS),
        epilog="rbd ROBOT (no subcommand) runs the demo; see README.md.")
    parser.add_argument("--backend", choices=("numpy", "cython"), help="force a backend")
    parser.add_argument("--version", action="version", version="rbd %s" % rbd.__version__)
    sub = parser.add_subparsers(dest="command", required=True, prog="rbd")  # ("rbd check", not the usage above)

    def robot_args(p):
        p.add_argument("robot", help="a sample robot (%s), a URDF or an MJCF file" % ", ".join(rbd.sample_model_names()))
        p.add_argument("--floating-base", action="store_true", help="URDF or sample robot: add a free flyer")
        p.add_argument("--mimic", action="store_true", help="URDF or sample robot: enforce <mimic> joints")
        p.add_argument("--backend", choices=("numpy", "cython"), default=argparse.SUPPRESS,
                       help="force a backend (here or before the subcommand)")

    p = sub.add_parser("check", help="check a robot file for dynamics")
    robot_args(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = sub.add_parser("inverse-dynamics", help="joint torques of a recorded trajectory")
    robot_args(p)
    p.add_argument("trajectory", help="CSV or npz: time, q (and optionally v, a)")
    p.add_argument("-o", "--output", required=True, help="torques out (CSV or npz)")
    p.add_argument("--plot", metavar="FILE", help="plot the torques: .png, .pdf, .svg, ... (needs matplotlib)")
    p = sub.add_parser("simulate", help="forward dynamics from the neutral configuration at rest")
    robot_args(p)
    p.add_argument("--duration", type=_positive(float), required=True,
                   help="seconds (rounded to a whole number of steps)")
    p.add_argument("--dt", type=_positive(float), required=True, help="time step, seconds")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--torques", help="a torque file (CSV or npz), each row held until the next")
    group.add_argument("--constant-torque", type=_finite_float, default=0.0, help="the same torque on every coordinate")
    p.add_argument("-o", "--output", required=True, help="trajectory out (CSV or npz)")
    p.add_argument("--plot", metavar="FILE",
                   help="plot the joint coordinates: .png, .pdf, .svg, ... (needs matplotlib)")
    p = sub.add_parser("bench", help="rbd's timings of the main algorithms on this machine")
    robot_args(p)
    p.add_argument("--batch", type=_positive(int), default=1000, help="samples of the batched row")
    p.add_argument("--seconds", type=_positive(float, MAX_SECONDS), default=0.2, help="time per measurement")
    parser.subcommands = sub.choices  # name -> its parser
    for p in [parser, *sub.choices.values()]:  # (argparse's own pattern takes -5 and -.5, not -1e3 or -inf)
        p._negative_number_matcher = _NEGATIVE_NUMBER
    return parser


# An option value that starts with '-' and is a number, not an option (argparse decides by it)
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except BrokenPipeError:  # the reader went away (rbd simulate ... | head): not an error
        _quiet_stdout()
        return 0
    except OSError as exc:  # (files' errors are CommandErrors: a stream's, standard output's: > /dev/full)
        if exc.filename is not None or exc.errno not in _STREAM_ERRORS:
            raise
        _quiet_stdout()
        words = [a for a in argv if a in SUBCOMMANDS]
        print("rbd%s: error: cannot write standard output: %s" % (" " + words[0] if words else "", exc.strerror or exc),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: no traceback (command() then ends the process by SIGINT)
        print("rbd: interrupted", file=sys.stderr)
        return INTERRUPTED


INTERRUPTED = 130  # main()'s status after Ctrl-C: the shell's for SIGINT
_STREAM_ERRORS = {getattr(errno, name) for name in ("ENOSPC", "EIO", "EFBIG", "EDQUOT") if hasattr(errno, name)}


def command():
    """The ``rbd`` command (the console script, ``python -m rbd``): ``main()``, then the
    process ends with its status; after Ctrl-C by SIGINT itself, as the shell expects of
    an interrupted command (a loop around it stops).  Callers of ``main()`` (a notebook, a
    test) get the status back instead."""
    status = main()
    if status == INTERRUPTED and os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(status)


def _quiet_stdout():
    """Standard output to nowhere, once its reader went away (Python's flush at exit would
    raise BrokenPipeError again)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def one_line(text):
    """A message on one line: MuJoCo's compile errors add "Element name ..., line N" on a
    line of their own."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


#: the loaders' advice as Python calls, and the same advice on the command line
_OPTIONS_OF_CALLS = (("load_urdf(..., mimic=True)", "--mimic"), ("floating_base=True", "--floating-base"))


def as_options(message):
    """A warning or error on one line, its advice given as this command's options, not
    Python calls."""
    text = one_line(message)
    for call, option in _OPTIONS_OF_CALLS:
        text = text.replace(call, option)
    return text


@contextlib.contextmanager
def _warnings_as_lines(prefix):
    """Warnings print as ``PREFIX: warning: ...`` lines on stderr (not Python's file:line
    and source line, which name rbd's code, not the user's input)."""
    def show(message, category, filename, lineno, file=None, line=None):
        print("%s: warning: %s" % (prefix, as_options(message)), file=sys.stderr)
    with warnings.catch_warnings():  # (restores showwarning)
        warnings.showwarning = show
        yield


def _main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if _wants_demo(argv):
        mistyped = _mistyped_subcommand(argv)
        if mistyped:
            print("rbd: error: %s" % mistyped, file=sys.stderr)
            return 2
        from .__main__ import demo  # ``rbd ROBOT``: the demo
        with _warnings_as_lines("rbd"):
            return demo(argv)
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # the subcommand's own usage and "rbd check: error: ..." (argparse's names "rbd")
        parser.subcommands[args.command].error("unrecognized arguments: %s" % " ".join(extra))
    with _warnings_as_lines("rbd %s" % args.command):
        return _run(args)


def use_backend(name):
    """--backend: switch to it (None: keep the one import chose); a backend not built here
    is the command's error."""
    if name:
        try:
            rbd.set_backend(name)
        except ImportError as exc:
            raise CommandError("--backend %s: %s" % (name, unprefixed(exc))) from None


def _run(args):
    try:
        use_backend(args.backend)
        if args.command == "check":
            status, report = check(args)
            try:
                if args.json:
                    print(json.dumps(json_safe(report), indent=1, allow_nan=False))
                else:
                    _print_check(report)
                sys.stdout.flush()
            except BrokenPipeError:  # (rbd check robot | head: the verdict's status all the same)
                _quiet_stdout()
            return status
        {"inverse-dynamics": inverse_dynamics, "simulate": simulate, "bench": bench}[args.command](args)
        return 0
    except CommandError as exc:
        print("rbd %s: error: %s" % (args.command, as_options(exc)), file=sys.stderr)
        return 2
    except MemoryError as exc:
        print("rbd %s: error: %s" % (args.command, one_line(exc) or "not enough memory for this job"), file=sys.stderr)
        return 2


def _positionals(argv):
    return [a for k, a in enumerate(argv) if not a.startswith("-") and (k == 0 or argv[k - 1] != "--backend")]


def _wants_demo(argv):
    """``rbd [ROBOT] [options]`` without a subcommand is the demo, but ``rbd [--backend B]
    --help`` lists the subcommands (and ``rbd --version`` says the version)."""
    if any(a in SUBCOMMANDS for a in argv):
        return False
    return bool(_positionals(argv)) or not any(a in ("-h", "--help", "--version") for a in argv)


def _mistyped_subcommand(argv):
    """The error for a first word that is no robot but a mistyped subcommand (``rbd chek
    arm7``: the demo takes one word; ``rbd simulat``: close to a subcommand), else None."""
    words = _positionals(argv)
    if not words or words[0] in rbd.sample_model_names() or os.path.exists(words[0]):
        return None
    close = difflib.get_close_matches(words[0], SUBCOMMANDS, n=1)
    if len(words) < 2 and not close:
        return None  # a robot that does not exist: the demo says so
    return "unknown subcommand %r%s (the subcommands: %s; rbd ROBOT alone runs the demo)" % (
        words[0], ", did you mean %s?" % close[0] if close else "", ", ".join(SUBCOMMANDS))
