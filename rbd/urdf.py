"""Load a URDF robot description into an ``rbd.Model``.

Only the kinematic and inertial content is read (``<link>`` with
``<inertial>``, ``<joint>`` with ``<origin>``, ``<axis>``, ``<limit>``, and
``<dynamics damping friction>`` into ``model.damping`` and ``model.friction``,
which the rigid-body algorithms store but do not apply);
visual and collision geometry is ignored.  Everything that is wrong raises
``rbd.URDFError`` naming the element: malformed XML, unknown joint types,
broken trees (two parents, cycles, several roots, missing links), non-finite
numbers and physically impossible inertias.

URDF conventions kept here: ``rpy`` is roll-pitch-yaw about FIXED axes, so the
rotation is ``Rz(yaw) Ry(pitch) Rx(roll)``; a joint's ``<axis>`` defaults to
``1 0 0``; the child link's frame is the joint frame.  rbd-specific choices:
a ``<limit>`` without ``lower``/``upper`` leaves that side unbounded (and so
does Bullet's ``lower`` above ``upper``, with a warning), continuous joints are
unbounded revolute joints, and ``<mimic>`` joints are loaded as independent
joints (with a warning).  What real files write and ROS's parser reads loads:
XML without namespace processing, an exact copy of an element (read once).
"""
import codecs
import errno
import math
import os
import re
import stat
import warnings
import xml.etree.ElementTree as ET
from xml.parsers import expat

import numpy as np

from . import rotations
from ._checks import URDFError, flag, short_names, short_repr
from .model import ModelBuilder, couple_joints

_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


def load_urdf(source, floating_base=False, strict=False, mimic=False):
    """Build a ``Model`` from a URDF file path, an XML string, or the file's bytes
    (any encoding the XML declares).

    ``floating_base=True`` puts a free-flyer joint (``root_joint``) between the
    world and the root link; otherwise the root link is fixed to the world.
    Inertias follow rbd's policy: round-off passes silently, a physically
    inconsistent inertia (triangle inequality, a clearly negative moment) loads
    with one warning naming the links, or raises ``URDFError`` when ``strict``.
    ``<mimic joint multiplier offset>`` is enforced with ``mimic=True`` (the mimic
    joint follows its primary: ``rbd.couple_joints``; q, v, a, tau then hold the
    independent joints only); by default a mimic joint loads as an independent
    joint, with a warning.
    """
    floating_base, strict, mimic = (flag(x, name) for x, name in ((floating_base, "floating_base"),
                                                                 (strict, "strict"), (mimic, "mimic")))
    xml = _read(source)
    try:
        robot = _robot(xml)
        builder = ModelBuilder(robot.get("name") or "robot")
        doubled, unlimited = _drop_identical_duplicates(robot), []
        for link in robot.findall("link"):
            _add_link(builder, link)
        mimics = []
        kinds = {joint.get("name"): joint.get("type") for joint in robot.findall("joint")}
        for joint in robot.findall("joint"):
            if _add_joint(builder, joint):
                unlimited.append(joint.get("name"))
            owner = "joint %s" % short_repr(joint.get("name"))
            element = _single(joint, "mimic", owner)
            if element is not None and joint.get("type") != "fixed":  # a fixed joint has nothing to couple
                primary = element.get("joint")
                if not primary:
                    raise URDFError("URDF: %s: <mimic> needs a joint= attribute" % owner)
                if mimic and primary not in kinds:
                    raise URDFError("URDF: %s: <mimic joint=%s> names no joint of the file"
                                    % (owner, short_repr(primary)))
                if mimic and kinds[primary] == "fixed":
                    raise URDFError("URDF: %s: <mimic joint=%s> follows a fixed joint (make %s fixed too, at "
                                    "its offset)" % (owner, short_repr(primary), joint.get("name")))
                mimics.append((joint.get("name"), primary,
                               float(_floats(element, "multiplier", 1, [1.0], owner)[0]),
                               float(_floats(element, "offset", 1, [0.0], owner)[0])))
        model = builder.build(floating_base=floating_base, strict=strict)
        if mimic and mimics:
            model = couple_joints(model, mimics)
    except ValueError as exc:  # (URDFError is one) the builder's checks of the tree and the inertias, the couplings
        error = exc if isinstance(exc, URDFError) else URDFError("URDF: %s" % exc)
        if (not isinstance(source, (bytes, bytearray)) and not is_xml_text(os.fspath(source))
                and hasattr(error, "add_note")):  # (Python >= 3.11)
            error.add_note("in the URDF file %s" % short_repr(os.fspath(source), 200))  # (files loaded in loops)
        raise error from None
    if doubled:
        warnings.warn("%s repeat%s an element with the same content: it is read once"
                      % (", ".join(doubled[:12]) + (", ..." if len(doubled) > 12 else ""),
                         "s" if len(doubled) == 1 else ""), stacklevel=2)
    if unlimited:
        warn_inverted_limits(unlimited, stacklevel=3)
    if mimics and not mimic:
        warnings.warn("mimic joints %s are loaded as independent joints (load_urdf(..., mimic=True) enforces "
                      "them)" % short_names([m[0] for m in mimics]), stacklevel=2)
    return model


# ------------------------------------------------------------------------------------------
# XML
# ------------------------------------------------------------------------------------------
def _read(source):
    """The XML of ``source`` as text (an XML string) or bytes (a file's content, or
    bytes given directly), for the parser to decode as the XML declares."""
    if isinstance(source, (bytes, bytearray)):
        return _content(check_xml_bytes(bytes(source), "URDF"))
    if isinstance(source, str) and is_xml_text(source):
        # a byte-order mark would otherwise make it a "path"; white space before an XML
        # declaration (a triple-quoted string's first line) makes the XML malformed
        return _xml_start(source)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("source must be a URDF file path or an XML string, got %s" % type(source).__name__)
    name = os.fspath(source)
    shown = name if len(name) <= 200 else name[:200] + "..."  # (not a whole mistaken URDF in a message)
    try:
        return _content(read_file(source, "URDF"))
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "no such URDF file (an XML string would start with '<')",
                                shown) from None
    except URDFError:
        raise
    except (ValueError, OSError) as exc:  # a NUL character, a name too long, a folder, no permission
        if isinstance(exc, ValueError) or exc.errno == errno.ENAMETOOLONG:
            raise URDFError("URDF: source is neither a file path nor XML (an XML string starts with '<'): %s"
                            % short_repr(shown)) from None
        raise type(exc)(exc.errno, exc.strerror, shown) from None


def _wide_codec(data):
    """UTF-16 or UTF-32 (and which byte order) of text without a byte-order mark, told by
    the NUL bytes of its first character (ASCII: '<' or white space), else None."""
    if data[:3] == b"\0\0\0":
        return "utf-32-be"
    if data[1:4] == b"\0\0\0":
        return "utf-32-le"
    return "utf-16-be" if data[:1] == b"\0" else "utf-16-le" if data[1:2] == b"\0" else None


def _content(data):
    """A file's bytes for the parser: UTF-32 (which it cannot decode), with a mark or not, as text."""
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) or (_wide_codec(data) or "").startswith("utf-32"):
        return xml_text(data, "URDF")
    return _xml_start(data)


def gzip_hint(data):
    """What to say of data that is gzip-compressed ("" for any other)."""
    return " (the data is gzip-compressed: decompress it first)" if data[:2] == b"\x1f\x8b" else ""


def check_xml_bytes(data, kind):
    """``data``, bytes given as a document's content, unless they cannot be XML (a path
    given as bytes, a compressed file): then a URDFError that says how they were read."""
    head = (data[3:] if data.startswith(codecs.BOM_UTF8) else data).lstrip(b" \t\r\n")
    if head.startswith(b"<") or data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or b"\0" in data[:4]:
        return data  # (UTF-16 and UTF-32 with or without their marks: a NUL byte among the first four)
    raise URDFError("%s: the bytes given are not XML%s: bytes are read as a file's content (a path is a str "
                    "or a pathlib.Path): %s" % (kind, gzip_hint(data), short_repr(data[:60])))


def read_file(path, kind):
    """The bytes of the file at ``path``; a URDFError naming it for a device (``/dev/zero``
    never ends).  A pipe is read as a file (``<(xacro robot.urdf.xacro)``), but one that
    no program writes to is empty instead of waiting for a writer forever."""
    shown = "%s%s" % (kind + ": " if kind else "", short_repr(os.fsdecode(path), 200))
    # (O_NONBLOCK: the open itself would wait for a pipe's writer; O_BINARY: Windows' open)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fsdecode(path))
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            raise URDFError("%s is a device, not a file" % shown)
        if stat.S_ISFIFO(mode) and hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # (a writer's data may still be on its way)
        f = open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        data = f.read()
    if not data:
        raise URDFError("%s is empty%s" % (shown, " (a pipe that no program writes to)" if stat.S_ISFIFO(mode) else ""))
    return data


def xml_text(data, kind):
    """The text of an XML document given as bytes, decoded as its byte-order mark or its XML
    declaration says (UTF-8 without either), for a parser that takes text (MuJoCo's);
    ``kind`` ("MJCF") names the document in the error of bytes that do not decode."""
    data = bytes(data)
    for mark, codec in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
                        (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
                        (codecs.BOM_UTF16_BE, "utf-16")):  # (UTF-32's little-endian mark starts like UTF-16's)
        if data.startswith(mark):
            break
    else:  # without a mark: UTF-16 or UTF-32 by where the first character has its NUL bytes
        wide = _wide_codec(data)
        declared = re.match(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""", data)
        codec = wide or (declared.group(1).decode("ascii") if declared else "utf-8")
    try:
        return data.decode(codec)
    except (LookupError, UnicodeDecodeError) as exc:
        raise URDFError("%s: the bytes given are not XML text in %s (%s)%s" % (kind, codec, exc, gzip_hint(data))) \
            from None


def is_xml_text(text):
    """Whether a string is XML rather than a path (after a byte-order mark or white space)."""
    return _xml_start(text).startswith("<")


def _xml_start(xml):
    """XML text or bytes from where the parser must start: without a byte-order mark and
    white space before the first '<' (text), or before the XML declaration (bytes)."""
    return _declaration_first(xml) if isinstance(xml, (bytes, bytearray)) else xml.lstrip("\ufeff \t\r\n")


def _declaration_first(data):
    """Bytes of a file with the white space before its XML declaration dropped (files
    written by hand or by scripts have it; the declaration must come first). Only an
    8-bit encoding can have both: a UTF-8 byte-order mark goes with the white space."""
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    stripped = body.lstrip(b" \t\r\n")
    return stripped if stripped is not body and stripped.startswith(b"<?xml") else data


def _tree(xml):
    """The element tree of XML text or bytes, read as XML 1.0 without namespace processing,
    as ROS's URDF parser reads it: a prefixed tag (``<sensor:camera>`` in a ``<gazebo>``
    extension) needs no declaration, and a default namespace on ``<robot>`` changes no tag.
    Entity declarations are refused before anything is expanded: they are how XML bombs
    and external-file reads work, and URDFs never need them."""
    def refuse(*_):
        raise URDFError("URDF: XML entity declarations (<!ENTITY>) are not allowed")

    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(xml, True)
    except URDFError:
        raise
    except (expat.ExpatError, ValueError, LookupError) as exc:  # text that cannot be encoded, unknown codecs
        raise URDFError("URDF: malformed XML (%s)%s" % (short_repr(str(exc), 200),
                                                       gzip_hint(xml) if isinstance(xml, bytes) else "")) from None
    return builder.close()


class _RootFound(Exception):
    pass


ENTITIES = "!ENTITY"  # root_element's answer for XML that declares entities


def root_element(xml):
    """The tag of the root element of XML text or bytes (read up to that element), or
    None where there is none to read, or ENTITIES where entities are declared before it
    (which every loader refuses); white space before the XML declaration is allowed
    as ``load_urdf`` allows it."""
    def found(tag, _attributes):
        raise _RootFound(tag)

    def entity(*_):  # (its expansion, an XML bomb, could stop the scan before the root)
        raise _RootFound(ENTITIES)

    xml = _xml_start(xml)

    scanner = expat.ParserCreate()
    scanner.StartElementHandler = found
    scanner.EntityDeclHandler = entity
    try:
        scanner.Parse(xml, False)
    except _RootFound as root:
        return root.args[0]
    except (ValueError, LookupError, expat.ExpatError):
        pass
    return None


def stripped_for_mujoco(source):
    """The text of a URDF for MuJoCo's importer: without the ``<visual>`` and ``<collision>``
    elements that name a mesh (URDFs name them by ``package://`` paths MuJoCo cannot
    resolve; other shapes stay, for links whose mass MuJoCo takes from their geometry), and
    with fixed links kept as bodies (``<compiler fusestatic="false">``, whatever the file's own
    ``<mujoco>`` extension says: fusing changes no dynamics, since rbd merges welded bodies
    itself, but would lose their frames), so that every link is a frame and a fixed base's
    root link keeps its mass.
    A link without ``<inertial>`` that loses a mesh is named in a warning: MuJoCo would have
    taken its mass from that mesh."""
    root = _parse(source)
    lost = []
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for elem in link.findall(tag):
                if elem.find("geometry/mesh") is not None:
                    link.remove(elem)
                    if tag == "collision" and link.find("inertial") is None:
                        lost.append(link.get("name", "?"))
    if lost:
        warnings.warn("load_mjcf: links %s have no <inertial>; MuJoCo would take their mass from their "
                      "collision meshes, which are left out (URDF mesh paths): they load without that mass, "
                      "and MuJoCo's compiler refuses such a link that moves (load_urdf reads it massless)"
                      % short_names(sorted(set(lost))), UserWarning, stacklevel=3)
    extension = root.find("mujoco")
    if extension is None:
        extension = ET.SubElement(root, "mujoco")
    compiler = extension.find("compiler")
    if compiler is None:
        compiler = ET.SubElement(extension, "compiler")
    compiler.set("fusestatic", "false")
    try:
        return ET.tostring(root, encoding="unicode")
    except RecursionError:  # (the writer recurses; MuJoCo refuses a few hundred levels anyway)
        raise URDFError("URDF: elements nested too deeply for load_mjcf (load_urdf reads it)") from None


def _parse(source):
    return _robot(_read(source))


_URDF_VERSIONS = ((1, 0), (1, 1), (1, 2))  # (what urdfdom reads: a later version may mean other things)


def _robot(xml):
    root = _tree(xml)
    if root.tag != "robot":
        raise URDFError("URDF: the root element must be <robot>, got <%s>" % short_repr(root.tag, 40).strip("'\""))
    _refuse_xacro(root)
    version = root.get("version")
    written = re.fullmatch(r"([0-9]+)\.([0-9]+)", "1.0" if version is None else version)
    major_minor = (int(written.group(1)), int(written.group(2))) if written else None
    if major_minor not in _URDF_VERSIONS:
        raise URDFError("URDF: <robot version=%s>: rbd reads URDF versions 1.0 to 1.2, as urdfdom does "
                        "(written 'major.minor'; a file without the attribute is 1.0)" % short_repr(version, 40))
    read = (e.find("origin") for e in root.findall("joint") + root.findall("link/inertial"))  # (not visuals')
    if major_minor < (1, 1) and any(origin is not None and "quat_xyzw" in origin.attrib for origin in read):
        raise URDFError("URDF: an <origin> has quat_xyzw, which URDF 1.1 added, in a version 1.0 file (a 1.0 "
                        "reader, urdfdom's, leaves the rotation out): declare <robot version=\"1.1\">")
    if root.find("link") is None:  # (MuJoCo's importer would make a robot of nothing of it)
        raise URDFError("URDF: <robot> has no <link> elements")
    return root


def _refuse_xacro(robot):
    """Refuse an unexpanded xacro file: its macros, includes and ${...} / $(...) expressions
    are for xacro to expand; read as they are, the robot would silently lack what they add."""
    tags = sorted({elem.tag for elem in robot.iter() if elem.tag.startswith("xacro:")})
    expressions = dict.fromkeys(value for kind in ("link", "joint") for elem in robot.findall(kind)
                                for part in elem.iter() for value in part.attrib.values()
                                if "${" in value or "$(" in value)  # (each once, in the file's order)
    if tags or expressions:
        found = (["<%s>" % tag for tag in tags] + [short_repr(value, 40) for value in expressions])[:4]
        raise URDFError("URDF: this is a xacro file, not a URDF: it holds %s, which xacro expands; expand it first "
                        "(xacro robot.urdf.xacro > robot.urdf)" % ", ".join(found))


# the elements read from a link, a joint and a link's <inertial>
_READ = {"link": ("inertial",), "joint": ("origin", "parent", "child", "axis", "limit", "mimic", "dynamics"),
         "inertial": ("origin", "mass", "inertia")}


def _drop_identical_duplicates(robot):
    """Removes the second and later copies of an element the loader reads where they repeat
    the first exactly (files generated by scripts have them; the meaning is clear), and
    returns who had them ("link 'a'", "joint 'j'"). Copies that differ stay, for
    ``_single`` to refuse: which one counts would be a guess."""
    def same(a, b):  # (a walk, not a recursion: a repeated element may nest thousands deep)
        pairs = [(a, b)]
        while pairs:
            a, b = pairs.pop()
            if not (a.tag == b.tag and a.attrib == b.attrib and len(a) == len(b)
                    and (a.text or "").strip() == (b.text or "").strip()):
                return False
            pairs.extend(zip(a, b))
        return True

    owners = []
    for kind in ("link", "joint"):
        for elem in robot.findall(kind):
            holders = [elem] + (elem.findall("inertial")[:1] if kind == "link" else [])
            for holder in holders:
                for tag in _READ[holder.tag]:
                    found = holder.findall(tag)
                    if len(found) > 1 and all(same(found[0], other) for other in found[1:]):
                        for other in found[1:]:
                            holder.remove(other)
                        owners.append("%s %s" % (kind, short_repr(elem.get("name"))))
    return list(dict.fromkeys(owners))


def _single(elem, tag, owner):
    """The one ``<tag>`` child of ``elem`` (None if absent); two are an error: which
    one counts would be a silent guess."""
    found = elem.findall(tag)
    if len(found) > 1:
        raise URDFError("URDF: %s has %d <%s> elements; at most one is allowed" % (owner, len(found), tag))
    return found[0] if found else None


def _where(elem, owner):
    return "<%s> of %s" % (elem.tag, owner)


def warn_inverted_limits(joints, stacklevel):
    """The warning for joints whose lower limit is above the upper one (loaded unbounded)."""
    warnings.warn("joints %s have a lower limit above the upper one, which Bullet's URDFs write for "
                  "\"no limit\": they load unbounded" % short_names(joints), stacklevel=stacklevel)


def _floats(elem, attr, count, default, owner, unbounded=0):
    """``count`` finite numbers from attribute ``attr`` of ``elem`` (or ``default``);
    ``unbounded`` = +1 or -1 also admits that infinity (a limit written as none)."""
    text = None if elem is None else elem.get(attr)
    if text is None:
        return np.array(default, dtype=float)
    try:
        values = [_number(x) for x in text.split()]
    except ValueError:
        raise URDFError("URDF: %s: %s=%s is not a list of numbers"
                        % (_where(elem, owner), attr, short_repr(text))) from None
    if len(values) != count:
        raise URDFError("URDF: %s: %s=%s must have %d number%s"
                        % (_where(elem, owner), attr, short_repr(text), count, "s" if count > 1 else ""))
    if not all(math.isfinite(x) or x == unbounded * math.inf for x in values):
        raise URDFError("URDF: %s: %s=%s must be finite" % (_where(elem, owner), attr, short_repr(text)))
    return np.array(values)


def _number(token):
    """A decimal number as XML Schema writes one: Python's float() would also read
    '1_0' as 10 and other scripts' digits, where a URDF has a typo."""
    if not token.isascii() or "_" in token:
        raise ValueError(token)
    return float(token)


def _origin(elem, owner):
    """The 4x4 pose of an ``<origin xyz rpy>`` element, or ``<origin xyz quat_xyzw>`` (URDF
    1.1; the quaternion normalized, as urdfdom does) (identity if absent)."""
    origin = _single(elem, "origin", owner)
    pose = np.eye(4)
    if origin is not None and origin.get("quat_xyzw") is not None:
        if origin.get("rpy") is not None:
            raise URDFError("URDF: %s has both rpy and quat_xyzw: give one of them" % _where(origin, owner))
        x, y, z, w = _floats(origin, "quat_xyzw", 4, None, owner)
        largest = max(abs(x), abs(y), abs(z), abs(w))
        if not largest > 0.0:
            raise URDFError("URDF: %s: quat_xyzw=%s is zero: no rotation" % (_where(origin, owner),
                                                                              short_repr(origin.get("quat_xyzw"))))
        pose[:3, :3] = rotations.quat_to_matrix(np.array([w, x, y, z]) / largest)  # (normalizes; scaled first: 1e-200)
    else:
        roll, pitch, yaw = _floats(origin, "rpy", 3, (0.0, 0.0, 0.0), owner)
        pose[:3, :3] = rotations.euler_zyx_to_matrix([yaw, pitch, roll])
    pose[:3, 3] = _floats(origin, "xyz", 3, (0.0, 0.0, 0.0), owner)
    return pose


def _name(elem, what):
    name = elem.get("name")
    if not name:
        raise URDFError("URDF: a <%s> element has no name" % what)
    return name


# ------------------------------------------------------------------------------------------
# Links and joints
# ------------------------------------------------------------------------------------------
def _add_link(builder, link):
    name = _name(link, "link")
    owner = "link %s" % short_repr(name)
    inertial = _single(link, "inertial", owner)
    if inertial is None:
        builder.add_link(name)  # massless
        return
    mass_elem, inertia_elem = _single(inertial, "mass", owner), _single(inertial, "inertia", owner)
    if mass_elem is None or inertia_elem is None:
        raise URDFError("URDF: <inertial> of %s needs both <mass> and <inertia>" % owner)
    # No defaults here (as urdfdom): a forgotten attribute must not read as zero mass or inertia.
    missing = [key for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz") if inertia_elem.get(key) is None]
    if mass_elem.get("value") is None:
        raise URDFError("URDF: <mass> of %s has no value attribute" % owner)
    if missing:
        raise URDFError("URDF: <inertia> of %s lacks %s" % (owner, ", ".join(missing)))
    mass = _floats(mass_elem, "value", 1, (0.0,), owner)[0]
    if mass < 0:
        raise URDFError("URDF: %s has a negative mass %g" % (owner, mass))
    ixx, ixy, ixz, iyy, iyz, izz = (_floats(inertia_elem, key, 1, (0.0,), owner)[0]
                                    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    frame = _origin(inertial, owner)  # the inertia is given in this frame, about the com
    R = frame[:3, :3]
    try:
        builder.add_link(name, mass=mass, com=frame[:3, 3], inertia=R @ inertia @ R.T)
    except URDFError:
        raise
    except ValueError as exc:
        raise URDFError("URDF: %s" % exc) from None


def _add_joint(builder, joint):
    """Adds the joint; True when its limits were read as none (lower above upper)."""
    name = _name(joint, "joint")
    owner = "joint %s" % short_repr(name)
    kind = joint.get("type")
    if kind not in _JOINT_TYPES:
        raise URDFError("URDF: %s has unknown type %s (expected one of %s)"
                        % (owner, short_repr(kind), ", ".join(_JOINT_TYPES)))
    for tag in ("mimic", "dynamics", "calibration", "safety_controller"):
        _single(joint, tag, owner)
    links = {}
    for role in ("parent", "child"):
        elem = _single(joint, role, owner)
        if elem is None or not elem.get("link"):
            raise URDFError("URDF: %s has no <%s link=...>" % (owner, role))
        links[role] = elem.get("link")
    options, unlimited = {}, False
    limit = _single(joint, "limit", owner)
    if limit is not None and kind in ("revolute", "prismatic"):
        lower = _floats(limit, "lower", 1, (-np.inf,), owner, unbounded=-1)[0]
        upper = _floats(limit, "upper", 1, (np.inf,), owner, unbounded=+1)[0]
        if lower > upper:  # Bullet's "no limit" (the caller warns)
            lower, upper, unlimited = -np.inf, np.inf, True
        options = dict(lower=lower, upper=upper)
    if limit is not None:
        options["velocity"] = _floats(limit, "velocity", 1, (np.inf,), owner, unbounded=+1)[0]
        options["effort"] = _floats(limit, "effort", 1, (np.inf,), owner, unbounded=+1)[0]
    dynamics = _single(joint, "dynamics", owner)
    if dynamics is not None and kind != "fixed":  # a fixed joint has no motion to damp
        options.update((key, _floats(dynamics, key, 1, (0.0,), owner)[0]) for key in ("damping", "friction"))
    axis_elem = _single(joint, "axis", owner)
    axis = _floats(axis_elem, "xyz", 3, (1.0, 0.0, 0.0), owner)
    if kind == "planar" and (axis_elem is None or axis_elem.get("xyz") is None):
        raise URDFError("URDF: planar %s has no <axis xyz>, and URDF's default 1 0 0 is not supported: rbd's "
                        "planar joint moves in its frame's x-y plane (<axis xyz=\"0 0 1\"/>)" % owner)
    if kind in ("revolute", "continuous", "prismatic") and not np.any(axis):
        raise URDFError("URDF: %s has a zero <axis>" % owner)
    try:
        builder.add_joint(name, kind, parent=links["parent"], child=links["child"],
                          origin=_origin(joint, owner), axis=axis, **options)
    except URDFError:  # already names the element (URDFError is a ValueError)
        raise
    except ValueError as exc:
        raise URDFError("URDF: %s" % exc) from None
    return unlimited
