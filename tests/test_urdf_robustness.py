"""URDF files as they come: any declared encoding, duplicated elements, absurd values,
and a derandomized fuzz of mutated real files whose every outcome must be a model
or an ``rbd.URDFError`` (never another exception, a crash or a hang)."""
import gzip
import os
import random
import re
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import rbd

from oracles.pinocchio_adapter import example_robot_data_dir

PENDULUM = """<?xml version="1.0" encoding="{encoding}"?>
<robot name="p\u00e9ndulo">
  <link name="base"/>
  <link name="bra\u00e7o">
    <inertial><origin xyz="0 0 -0.5"/><mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="ombro" type="revolute"><parent link="base"/><child link="bra\u00e7o"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""


def pendulum_torque(model, theta):
    """m g l sin(theta) about x for the 2 kg pendulum with its com 0.5 m below the axis."""
    return rbd.gravity(model, np.array([theta]))[0]


@pytest.mark.parametrize("encoding, codec", [("UTF-8", "utf-8"), ("ISO-8859-1", "latin-1"),
                                             ("UTF-16", "utf-16"), ("UTF-8", "utf-8-sig")])
def test_declared_encodings_load(encoding, codec, tmp_path):
    data = PENDULUM.format(encoding=encoding).encode(codec)
    path = tmp_path / "pendulum.urdf"
    path.write_bytes(data)
    for source in (path, str(path), data):
        model = rbd.load_urdf(source)
        assert model.name == "p\u00e9ndulo" and model.frame_names[1] == "bra\u00e7o"
        np.testing.assert_allclose(pendulum_torque(model, 0.3), 2.0 * 9.81 * 0.5 * np.sin(0.3), rtol=1e-12)


def test_unknown_encoding_is_a_urdf_error():
    with pytest.raises(rbd.URDFError, match="malformed XML"):
        rbd.load_urdf(PENDULUM.format(encoding="no-such-codec").encode("utf-8"))


@pytest.mark.parametrize("element, where", [
    ('<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
     "link 'bra\u00e7o' has 2 <inertial>"),
    ('<mass value="3"/>', "link 'bra\u00e7o' has 2 <mass>"),
    ('<origin xyz="0 0 1"/>', "link 'bra\u00e7o' has 2 <origin>"),
])
def test_duplicated_link_elements_are_refused(element, where):
    xml = PENDULUM.format(encoding="UTF-8")
    if element.startswith("<inertial>"):
        xml = xml.replace("</inertial>", "</inertial>" + element, 1)
    else:
        xml = xml.replace('<mass value="2.0"/>', '<mass value="2.0"/>' + element, 1)
    with pytest.raises(rbd.URDFError, match=where):
        rbd.load_urdf(xml.encode("utf-8"))


@pytest.mark.parametrize("element", ['<axis xyz="0 1 0"/>', '<origin xyz="1 0 0"/>', '<parent link="other"/>',
                                     '<child link="other"/>', '<limit lower="0" upper="1" effort="1" velocity="1"/>',
                                     '<mimic joint="ombro"/>', '<dynamics damping="1"/>'])
def test_duplicated_joint_elements_are_refused(element):
    tag = re.match(r"<(\w+)", element).group(1)
    xml = PENDULUM.format(encoding="UTF-8")
    if tag in ("mimic", "dynamics", "origin"):  # elements the joint does not have yet: two that differ
        element = element + element.replace('"/>', ' "/>').replace('="1 ', '="2 ').replace('="1"', '="2"')
    xml = xml.replace('<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/>' + element, 1)
    with pytest.raises(rbd.URDFError, match="joint 'ombro' has 2 <%s>" % tag):
        rbd.load_urdf(xml.encode("utf-8"))


def test_messages_quote_values_short():
    xml = PENDULUM.format(encoding="UTF-8").replace('xyz="0 0 -0.5"', 'xyz="%s"' % ("9 " * 100000))
    with pytest.raises(rbd.URDFError) as err:
        rbd.load_urdf(xml.encode("utf-8"))
    assert len(str(err.value)) < 300
    long_name = "x" * 100000
    xml = PENDULUM.format(encoding="UTF-8").replace('<parent link="base"/>', '<parent link="%s"/>' % long_name)
    with pytest.raises(rbd.URDFError) as err:
        rbd.load_urdf(xml.encode("utf-8"))
    assert len(str(err.value)) < 300


@pytest.mark.parametrize("axis", ["1e200 0 0", "1e-200 0 0", "1e300 1e300 0"])
def test_extreme_axes_keep_their_direction(axis):
    xml = PENDULUM.format(encoding="UTF-8").replace('<axis xyz="1 0 0"/>', '<axis xyz="%s"/>' % axis)
    model = rbd.load_urdf(xml.encode("utf-8"))
    expected = np.array([float(x) for x in axis.split()])
    expected = expected / np.abs(expected).max()
    expected = expected / np.linalg.norm(expected)
    J = rbd.frame_jacobian(model, np.zeros(1), 1, "local")
    np.testing.assert_allclose(J[3:, 0], expected, atol=1e-15)


@pytest.mark.parametrize("replace, match", [
    (('<mass value="2.0"/>', '<mass value="1e300"/>'), "overflow|not finite"),
    (('xyz="0 0 -0.5"', 'xyz="0 0 -1e200"'), "overflow|not finite"),
    (('ixx="0.01"', 'ixx="1e400"'), "finite"),
])
def test_overflowing_inertias_are_errors(replace, match):
    xml = PENDULUM.format(encoding="UTF-8").replace(*replace)
    with pytest.raises(rbd.URDFError, match=match):
        rbd.load_urdf(xml.encode("utf-8"))


def test_an_overflow_in_a_fixed_merge_names_the_link():
    """A link whose inertia overflows only once moved through a fixed joint (m = 1e300 at
    1e10 m): the error names the link, the joint and the link it merges into."""
    xml = ('<robot name="r"><link name="a"/><link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
           'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><link name="b"><inertial><mass value="1e300"/>'
           '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
           '<joint name="j" type="continuous"><parent link="a"/><child link="c"/></joint>'
           '<joint name="f" type="fixed"><origin xyz="1e10 0 0"/><parent link="c"/><child link="b"/></joint></robot>')
    with pytest.raises(rbd.URDFError, match="link 'b' overflows when merged into link 'c' through fixed joint 'f'"):
        rbd.load_urdf(xml)


def test_round_off_in_an_inertia_passes_silently():
    # -1e-20 next to moments of 1e-2 on a 2 kg robot: round-off, not physics
    xml = PENDULUM.format(encoding="UTF-8").replace('ixx="0.01" ixy="0" ixz="0"', 'ixx="-1e-20" ixy="0" ixz="2e-35"')
    xml = xml.replace('iyy="0.01"', 'iyy="0.0"').replace('izz="0.001"', 'izz="0.0"')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rbd.load_urdf(xml.encode("utf-8"), strict=True)


def test_a_few_percent_off_the_triangle_inequality_warns():
    xml = PENDULUM.format(encoding="UTF-8").replace('izz="0.001"', 'izz="0.021"')  # 0.01 + 0.01 < 0.021
    with pytest.warns(UserWarning, match="inconsistent inertia.*bra"):
        rbd.load_urdf(xml.encode("utf-8"))
    with pytest.raises(rbd.URDFError, match="inconsistent inertia"):
        rbd.load_urdf(xml.encode("utf-8"), strict=True)


# ------------------------------------------------------------------------------------------
# Fuzz: mutated real files are models or URDFErrors
# ------------------------------------------------------------------------------------------
def fuzz_sources():
    sources = [p for p in sorted(Path(rbd.__file__).parent.joinpath("robots").glob("*.urdf"))]
    root = example_robot_data_dir()
    if root is not None:
        for rel in ("ur_description/urdf/ur5_robot.urdf", "solo_description/robots/solo12.urdf",
                    "panda_description/urdf/panda.urdf"):
            if (root / rel).is_file():
                sources.append(root / rel)
    return sources


GARBAGE = ["", "nan", "inf", "-1", "1e400", "-1e308", "abc", "1 2", "0 0 0", "1e-320", "  ", "\u00e9", "0x10"]


def mutate(text, rnd):
    """One random mutation of the XML text."""
    how = rnd.randrange(6)
    if not re.search(r'="[^"]*"', text) or not re.search(r"<(\w+)[^<>]*/>", text):
        how = 3  # too mangled for the others: truncate further
    if len(text) < 2:
        return text
    if how == 0:  # an attribute value replaced by garbage
        spans = [m.span(1) for m in re.finditer(r'="([^"]*)"', text)]
        a, b = rnd.choice(spans)
        return text[:a] + rnd.choice(GARBAGE) + text[b:]
    if how == 1:  # an element deleted
        spans = [m.span() for m in re.finditer(r"<(\w+)[^<>]*/>", text)]
        a, b = rnd.choice(spans)
        return text[:a] + text[b:]
    if how == 2:  # an element duplicated
        spans = [m.span() for m in re.finditer(r"<(\w+)[^<>]*/>", text)]
        a, b = rnd.choice(spans)
        return text[:b] + text[a:b] + text[b:]
    if how == 3:  # truncated
        return text[:rnd.randrange(len(text))]
    if how == 4:  # bytes flipped
        chars = list(text)
        for _ in range(rnd.randrange(1, 5)):
            k = rnd.randrange(len(chars))
            chars[k] = chr(rnd.randrange(32, 127))
        return "".join(chars)
    names = re.findall(r'name="([^"]*)"', text)  # a name reused elsewhere
    if len(names) > 1:
        return text.replace('"%s"' % rnd.choice(names), '"%s"' % rnd.choice(names), 1)
    return text


@pytest.mark.parametrize("source", fuzz_sources(), ids=lambda p: p.name)
def test_mutated_urdfs_load_or_raise_urdf_error(source):
    text = source.read_text(encoding="utf-8")
    rnd = random.Random(source.name)  # derandomized
    for _ in range(60):
        mutated = text
        for _ in range(rnd.randrange(1, 4)):
            mutated = mutate(mutated, rnd)
        for data in (mutated, mutated.encode("utf-8")):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    model = rbd.load_urdf(data, floating_base=rnd.random() < 0.5)
            except rbd.URDFError:
                continue
            except FileNotFoundError:
                assert not str(data).lstrip().startswith("<")  # a truncated text that lost its '<'
                continue
            assert isinstance(model, rbd.Model)


@pytest.mark.parametrize("number", ["0_5", "1_0", "\u0661", "\uff12", "1e-3\u00a0"])
def test_numbers_python_reads_but_a_urdf_cannot_hold_are_refused(number):
    """float() reads '1_0' as 10 and other scripts' digits; urdfdom refuses them, and
    a typo must not load as a ten times heavier link."""
    xml = PENDULUM.format(encoding="UTF-8").replace('<mass value="2.0"/>', '<mass value="%s"/>' % number)
    if number.endswith("\u00a0"):  # a no-break space is whitespace to str.split: the number stays
        assert rbd.load_urdf(xml.encode("utf-8")).inertias[0, 0] == 1e-3
        return
    with pytest.raises(rbd.URDFError, match="<mass> of link 'bra\u00e7o': value=.* is not a list of numbers"):
        rbd.load_urdf(xml.encode("utf-8"))


def test_explicit_infinite_limits_mean_none_and_negative_rates_are_refused():
    xml = PENDULUM.format(encoding="UTF-8")
    model = rbd.load_urdf(xml.replace('lower="-3" upper="3" effort="10" velocity="5"',
                                      'lower="-inf" upper="inf" effort="inf" velocity="INF"'))
    assert model.lower_limits[0] == -np.inf and model.upper_limits[0] == np.inf
    assert model.velocity_limits[0] == np.inf and model.effort_limits[0] == np.inf
    for limits, match in (('lower="inf" upper="inf"', "lower='inf' must be finite"),
                          ('effort="-10"', r"effort limit of joint 'ombro' must be a non-negative number.*got -10\.0"),
                          ('velocity="-5"', r"velocity limit of joint 'ombro' must be a non-negative"),
                          ('velocity="nan"', "velocity='nan' must be finite")):
        attrs = 'lower="-3" upper="3" effort="10" velocity="5"'
        for part in limits.split():
            key = part.split("=")[0]
            attrs = re.sub(r'%s="[^"]*"' % key, part, attrs)
        with pytest.raises(rbd.URDFError, match=match):
            rbd.load_urdf(xml.replace('lower="-3" upper="3" effort="10" velocity="5"', attrs))


def test_messages_show_numbers_not_numpy_reprs():
    xml = PENDULUM.format(encoding="UTF-8").replace("</joint>", '<dynamics damping="-0.5"/></joint>')
    with pytest.raises(rbd.URDFError, match=r"damping of joint 'ombro' must be non-negative, got -0\.5$"):
        rbd.load_urdf(xml)


def test_a_planar_joint_without_axis_says_urdfs_default_is_not_supported():
    xml = PENDULUM.format(encoding="UTF-8").replace('type="revolute"', 'type="planar"').replace('<axis xyz="1 0 0"/>', "")
    with pytest.raises(rbd.URDFError, match="planar joint 'ombro' has no <axis xyz>.*default 1 0 0"):
        rbd.load_urdf(xml)
    assert rbd.load_urdf(xml.replace("</joint>", '<axis xyz="0 0 1"/></joint>')).nv == 3


def test_an_entity_declaration_is_refused_once_and_plainly():
    xml = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "x">]><robot name="r"><link name="a"/></robot>'
    with pytest.raises(rbd.URDFError) as err:
        rbd.load_urdf(xml)
    assert str(err.value) == "URDF: XML entity declarations (<!ENTITY>) are not allowed"


@pytest.mark.parametrize("source, error, match", [
    ("x" * 5000, rbd.URDFError, "neither a file path nor XML"),
    ("junk" + PENDULUM.format(encoding="UTF-8") * 20, rbd.URDFError, "an XML string starts with '<'"),
    ("junk" + PENDULUM.format(encoding="UTF-8")[:100], FileNotFoundError, "an XML string would start with '<'"),
    ("robot\0.urdf", rbd.URDFError, "neither a file path nor XML"),
], ids=["long", "long junk before xml", "junk before xml", "nul"])
def test_a_source_neither_xml_nor_a_file_gets_a_short_message(source, error, match):
    with pytest.raises(error, match=match) as err:
        rbd.load_urdf(source)
    assert len(str(err.value)) < 400


def test_a_missing_file_names_its_path(tmp_path):
    path = tmp_path / "nowhere.urdf"
    with pytest.raises(FileNotFoundError) as err:
        rbd.load_urdf(path)
    assert err.value.filename == str(path) and str(path) in str(err.value)


# ------------------------------------------------------------------------------------------
# What real files (Bullet's, ROS's) write and other loaders read: loaded, with a warning
# where rbd reads something the file did not say plainly
# ------------------------------------------------------------------------------------------
def _loaded(source):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = rbd.load_urdf(source)
    return model, [str(w.message) for w in caught]


@pytest.mark.parametrize("prefix", ["\n", "  \r\n\t", "\ufeff\n  "])
def test_white_space_before_the_declaration_loads_from_a_path_bytes_and_text(prefix, tmp_path):
    text = prefix + PENDULUM.format(encoding="UTF-8")
    path = tmp_path / "pendulum.urdf"
    path.write_bytes(text.encode("utf-8"))
    for source in (text, text.encode("utf-8"), path, str(path)):
        model = rbd.load_urdf(source)
        assert model.name == "p\u00e9ndulo"
        np.testing.assert_allclose(pendulum_torque(model, 0.3), 2.0 * 9.81 * 0.5 * np.sin(0.3), rtol=1e-12)


def test_white_space_before_a_utf16_declaration_is_still_malformed():
    # (only 8-bit text can have ASCII white space first; UTF-16 bytes are not touched)
    data = ("\n" + PENDULUM.format(encoding="UTF-16")).encode("utf-16")
    with pytest.raises(rbd.URDFError, match="malformed XML"):
        rbd.load_urdf(data)


def test_namespaces_are_not_processed():
    """A default namespace on <robot> (Drake's files) and prefixed tags nobody declared (a
    <gazebo> extension's <sensor:camera>) are plain XML 1.0, as ROS's parser reads them."""
    xml = PENDULUM.format(encoding="UTF-8")
    for variant in (xml.replace('<robot name=', '<robot xmlns="http://drake.mit.edu" name='),
                    xml.replace("</robot>", '<gazebo reference="base"><sensor:camera name="c"><x:y/></sensor:camera>'
                                            '</gazebo></robot>'),
                    xml.replace("</robot>", '<drake:collision_filter_group name="g"/></robot>')):
        model = rbd.load_urdf(variant.encode("utf-8"))
        assert model.frame_names[1] == "bra\u00e7o"
        np.testing.assert_allclose(pendulum_torque(model, 0.3), 2.0 * 9.81 * 0.5 * np.sin(0.3), rtol=1e-12)
    with pytest.raises(rbd.URDFError, match="<robot>, got <drake:robot>"):
        rbd.load_urdf('<drake:robot name="r"><link name="a"/></drake:robot>')


@pytest.mark.parametrize("edit, shown", [
    (("</robot>", '<xacro:include filename="arm.xacro"/><xacro:arm prefix="left_"/></robot>'),
     "<xacro:arm>, <xacro:include>"),
    (('<link name="base"/>', '<link name="$(arg prefix)base"/>'), "'$(arg prefix)base'"),
    (('xyz="0 0 -0.5"', 'xyz="0 0 -0.5" rpy="${pi/2} 0 0"'), "'${pi/2} 0 0'"),
])
def test_an_unexpanded_xacro_file_is_refused(edit, shown):
    """A xacro template read as a URDF would silently lack what its macros and includes add
    (Pinocchio loads it so); a processed file's xmlns:xacro declaration is harmless."""
    xml = PENDULUM.format(encoding="UTF-8")
    assert edit[0] in xml
    with pytest.raises(rbd.URDFError, match="xacro file, not a URDF: it holds %s.*expand it first" % re.escape(shown)):
        rbd.load_urdf(xml.replace(edit[0], edit[1], 1))
    declared = xml.replace("<robot name=", '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name=')
    assert rbd.load_urdf(declared) == rbd.load_urdf(xml)


@pytest.mark.parametrize("version, readable", [("1.0", True), ("1.2", True), (" 1.1 ", False), ("2.0", False),
                                               ("1.3", False), ("0.9", False), ("one", False), ("1", False),
                                               ("", False), ("\u0661.0", False)])
def test_a_urdf_version_urdfdom_does_not_read_is_refused(version, readable):
    """urdfdom (Pinocchio's parser) reads versions 1.0 to 1.2 written 'major.minor' and refuses
    the rest: a later version may mean other things, read as 1.0 it would be silently wrong."""
    xml = PENDULUM.format(encoding="UTF-8")
    versioned = xml.replace("<robot name=", '<robot version="%s" name=' % version, 1)
    assert versioned != xml
    if readable:
        assert rbd.load_urdf(versioned) == rbd.load_urdf(xml)
    else:
        with pytest.raises(rbd.URDFError, match=r"<robot version='%s'>: rbd reads URDF versions 1.0 to 1.2"
                           % re.escape(version)):
            rbd.load_urdf(versioned)


def test_urdf_1_1_origins_with_a_quaternion():
    """URDF 1.1's <origin quat_xyzw> (normalized, as urdfdom does), on joints and inertials:
    the dynamics and placements of Pinocchio's reading; rpy and quat_xyzw together, a zero
    quaternion, and quat_xyzw in a 1.0 file (which a 1.0 reader leaves out) are refused."""
    def urdf(version, origin):
        return ('<robot name="r"%s><link name="a"/><link name="b"><inertial><origin xyz="0.1 0 0" %s/>'
                '<mass value="1"/><inertia ixx="0.1" iyy="0.2" izz="0.25" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 1" %s/>'
                '<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
                % (version, origin, origin))
    pin = pytest.importorskip("pinocchio")
    text = urdf(' version="1.1"', 'quat_xyzw="0.1 0.2 0.7 0.7"')  # (not unit: normalized)
    model, pm = rbd.load_urdf(text), pin.buildModelFromXML(text)
    pd, q = pm.createData(), np.array([0.4])
    pin.forwardKinematics(pm, pd, q)
    np.testing.assert_allclose(rbd.forward_kinematics(model, q)[0], pd.oMi[1].homogeneous, rtol=0, atol=1e-14)
    np.testing.assert_allclose(rbd.crba(model, q), pin.crba(pm, pd, q), rtol=0, atol=1e-14)
    np.testing.assert_allclose(rbd.rnea(model, q, np.ones(1), np.ones(1)), pin.rnea(pm, pd, q, np.ones(1), np.ones(1)),
                               rtol=0, atol=1e-13)
    for version, origin, message in [(' version="1.1"', 'rpy="0 0 1" quat_xyzw="0 0 1 1"', "both rpy and quat_xyzw"),
                                     (' version="1.1"', 'quat_xyzw="0 0 0 0"', "is zero: no rotation"),
                                     (' version="1.1"', 'quat_xyzw="0 0 1e-200 1e-200"', None),
                                     ('', 'quat_xyzw="0 0 1 1"', "quat_xyzw, which URDF 1.1 added, in a version 1.0")]:
        if message is None:  # (tiny but not zero: a quarter turn about z, scaled before normalizing)
            np.testing.assert_allclose(rbd.load_urdf(urdf(version, origin)).joint_placements[0][:3, :3],
                                       [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
            continue
        with pytest.raises(rbd.URDFError, match=message):
            rbd.load_urdf(urdf(version, origin))
    visual = urdf("", "").replace("</inertial></link>", '</inertial><visual><origin quat_xyzw="0 0 1 1"/><geometry>'
                                  '<box size="1 1 1"/></geometry></visual></link>', 1)
    assert "quat_xyzw" in visual and rbd.load_urdf(visual).nbodies == 1  # (a visual's origin is not read)


def test_inverted_limits_mean_no_limit_as_in_bullet():
    xml = PENDULUM.format(encoding="UTF-8")
    inverted, warned = _loaded(xml.replace('lower="-3" upper="3"', 'lower="1" upper="0"'))
    assert len(warned) == 1 and "'ombro'" in warned[0] and "no limit" in warned[0]
    assert inverted.lower_limits[0] == -np.inf and inverted.upper_limits[0] == np.inf
    unlimited = rbd.load_urdf(xml.replace('lower="-3" upper="3" ', ""))
    assert inverted == unlimited  # every other number as written
    _, warned = _loaded(xml.replace('lower="-3" upper="3"', 'lower="1" upper="1"'))  # a locked range is a range
    assert warned == []


def test_an_element_repeated_with_the_same_content_is_read_once():
    xml = PENDULUM.format(encoding="UTF-8")
    once = rbd.load_urdf(xml)
    for old in ('<axis xyz="1 0 0"/>', '<mass value="2.0"/>', '<origin xyz="0 0 -0.5"/>',
                '<limit lower="-3" upper="3" effort="10" velocity="5"/>',
                '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>'):
        twice, warned = _loaded(xml.replace(old, old + "\n   " + old.replace(" ", "  ", 1)))
        assert twice == once
        assert len(warned) == 1 and re.search("(joint 'ombro'|link 'bra\u00e7o') repeats an element", warned[0])
    # copies that differ stay an error
    with pytest.raises(rbd.URDFError, match="joint 'ombro' has 2 <axis>"):
        rbd.load_urdf(xml.replace('<axis xyz="1 0 0"/>', '<axis xyz="1 0 0"/><axis xyz="1 0 0.001"/>'))


def test_an_error_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "broken.urdf"
    path.write_text(PENDULUM.format(encoding="UTF-8").replace('type="revolute"', 'type="hinge"'), "utf-8")
    for source in (path, str(path)):
        with pytest.raises(rbd.URDFError, match="unknown type 'hinge'") as err:
            rbd.load_urdf(source)
        assert getattr(err.value, "__notes__", None) == ["in the URDF file %r" % str(path)] or not hasattr(
            err.value, "add_note")
    with pytest.raises(rbd.URDFError) as err:  # text names no file
        rbd.load_urdf(path.read_text("utf-8"))
    assert not getattr(err.value, "__notes__", None)


def test_the_root_element_is_found_after_white_space_too(tmp_path):
    """Who reads a file by its root element (the CLI, load_mjcf) sees what load_urdf sees."""
    from rbd.cli import robot_file_kind
    from rbd.urdf import root_element
    text = "\n  " + PENDULUM.format(encoding="UTF-8")
    path = tmp_path / "pendulum.xml"  # (by its name it would be an MJCF file)
    path.write_bytes(text.encode("utf-8"))
    assert robot_file_kind(str(path)) == "urdf"
    assert root_element(text) == root_element(text.encode("utf-8")) == "robot"


def test_a_device_or_a_pipe_nobody_writes_to_is_refused_not_waited_on(tmp_path):
    """/dev/zero never ends and a FIFO without a writer would block open() forever: both are
    clear errors; a pipe some program writes to (``<(xacro ...)``) is read as a file."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    with pytest.raises(rbd.URDFError, match="'/dev/zero' is a device, not a file"):
        rbd.load_urdf("/dev/zero")
    fifo = tmp_path / "robot.urdf"
    os.mkfifo(fifo)
    rescue = threading.Timer(20.0, lambda: open(fifo, "wb").close())  # (frees a loader stuck in open())
    rescue.start()
    try:
        with pytest.raises(rbd.URDFError, match="is empty \\(a pipe that no program writes to\\)"):
            rbd.load_urdf(fifo)
    finally:
        rescue.cancel()
    empty = tmp_path / "empty.urdf"
    empty.write_bytes(b"")
    with pytest.raises(rbd.URDFError, match="'.*empty.urdf' is empty$"):
        rbd.load_urdf(empty)
    xml = PENDULUM.format(encoding="UTF-8").encode("utf-8")
    keeper = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (lets the writer open without waiting)
    writer = os.open(fifo, os.O_WRONLY)

    def write_later():  # the loader is reading by then: it must wait for the data, then the end
        time.sleep(0.2)
        os.write(writer, xml)
        os.close(writer)

    thread = threading.Thread(target=write_later)
    thread.start()
    try:
        piped = rbd.load_urdf(fifo)
    finally:
        thread.join()
        os.close(keeper)
    assert piped == rbd.load_urdf(xml)


def test_a_folder_refused_again_and_again_leaks_no_file_descriptor(tmp_path):
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd here")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(IsADirectoryError):
            rbd.load_urdf(tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_bytes_without_a_mark_load(codec):
    xml = PENDULUM.format(encoding="UTF-8").split("?>", 1)[1].strip()  # (no declaration to contradict)
    assert rbd.load_urdf(xml.encode(codec)) == rbd.load_urdf(xml)


def test_repeated_elements_nested_thousands_deep_are_compared_without_recursion():
    nest = "<x>" * 5000 + "</x>" * 5000
    xml = PENDULUM.format(encoding="UTF-8").replace("</joint>", "<dynamics>%s</dynamics>" % nest * 2 + "</joint>")
    model, warned = _loaded(xml)
    assert model == rbd.load_urdf(PENDULUM.format(encoding="UTF-8"))
    assert len(warned) == 1 and "repeats an element" in warned[0]


def test_bytes_that_cannot_be_xml_and_compressed_or_utf32_files(tmp_path):
    """Bytes are a file's content: a path given as bytes is told so, not 'malformed XML'; a
    gzip-compressed file says so; UTF-32 (which the XML parser cannot decode) loads."""
    xml = PENDULUM.format(encoding="UTF-8")
    expected = rbd.load_urdf(xml)
    path = tmp_path / "pendulum.urdf"
    path.write_text(xml, "utf-8")
    with pytest.raises(rbd.URDFError, match="bytes given are not XML: bytes are read as a file's content"):
        rbd.load_urdf(str(path).encode())
    squeezed = tmp_path / "pendulum.urdf.gz"
    squeezed.write_bytes(gzip.compress(xml.encode("utf-8")))
    for source in (squeezed, squeezed.read_bytes()):
        with pytest.raises(rbd.URDFError, match="gzip-compressed: decompress it first"):
            rbd.load_urdf(source)
    wide = PENDULUM.format(encoding="UTF-32").encode("utf-32")
    (tmp_path / "wide.urdf").write_bytes(wide)
    assert rbd.load_urdf(wide) == rbd.load_urdf(tmp_path / "wide.urdf") == expected
