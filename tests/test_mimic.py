"""Mimic joints (load_urdf(..., mimic=True), rbd.couple_joints): reduced coordinates.

Oracles: Pinocchio's own mimic joints (``buildModelFromUrdf(..., mimic=True)``: rnea,
crba, frame placements and Jacobians) on the Panda; for what Pinocchio refuses
(forward dynamics, M^-1, derivatives; Talos's grippers) the coupling written out by
hand: q_full, v_full = G v from the URDF's multipliers and offsets, and the full
model (every joint independent) giving G^T M G and G^T tau.  Identities and finite
differences on the coupled model itself; both backends.
"""
import warnings

import numpy as np
import pytest

import rbd

from oracles.pinocchio_adapter import pin, robot_urdf_path


def load(name, floating=False):
    path = robot_urdf_path(name)
    if path is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (rbd.load_urdf(path, floating_base=floating, mimic=True),
                rbd.load_urdf(path, floating_base=floating), path)


def by_hand(coupled, full, q):
    """q_full and G from the couplings, written out independently of rbd's mapping."""
    independent = [n for n in full.joint_names if n not in {m[0] for m in coupled.mimic}]
    G = np.zeros((full.nv, coupled.nv))
    q_full = np.zeros(full.nq)
    rows = {}
    for name in independent:
        i, k = full.joint_id(name), coupled.joint_idx_q(name)
        n = full.joint_nq[i]
        q_full[full.q_idx[i]:full.q_idx[i] + n] = q[k:k + n]
        for d in range(full.joint_nv[i]):
            G[full.v_idx[i] + d, coupled.joint_idx_v(name) + d] = 1.0
            rows[name] = full.v_idx[i]
    for joint, primary, multiplier, offset in coupled.mimic:
        j = full.joint_id(joint)
        q_full[full.q_idx[j]] = multiplier * q_full[full.q_idx[full.joint_id(primary)]] + offset
        G[full.v_idx[j]] = multiplier * G[full.v_idx[full.joint_id(primary)]]
    return q_full, G


@pytest.mark.parametrize("robot, floating", [("panda", False), ("talos", True)])
def test_coupled_model_equals_the_coupling_written_by_hand(robot, floating, backend):
    coupled, full, _ = load(robot, floating)
    assert coupled.nv == full.nv - len(coupled.mimic) and coupled.mimic
    joint, primary = coupled.mimic[0][:2]
    assert coupled.joint_idx_v(joint) == coupled.joint_idx_v(primary)
    rng = np.random.default_rng(3)
    q = rbd.random_configuration(coupled, rng)
    v, a, tau = rng.normal(size=coupled.nv), rng.normal(size=coupled.nv), rng.normal(size=coupled.nv)
    fext = rng.normal(size=(coupled.nbodies, 6))
    qf, G = by_hand(coupled, full, q)
    np.testing.assert_array_equal(coupled.coupling, G)
    source, scale = coupled.coupling_entries  # G's one entry per row
    np.testing.assert_array_equal(G[np.arange(full.nv), source], scale)
    assert np.count_nonzero(G) == np.count_nonzero(scale)
    M = G.T @ rbd.crba(full, qf) @ G
    h = G.T @ rbd.rnea(full, qf, G @ v, np.zeros(full.nv), fext)
    close = lambda x, y, what: np.testing.assert_allclose(x, y, rtol=0, atol=1e-9 * max(1.0, np.abs(y).max()),  # noqa
                                                         err_msg=what)
    close(rbd.rnea(coupled, q, v, a, fext), G.T @ rbd.rnea(full, qf, G @ v, G @ a, fext), "rnea")
    close(rbd.crba(coupled, q), M, "crba")
    close(rbd.aba(coupled, q, v, tau, fext), np.linalg.solve(M, tau - h), "aba")
    close(rbd.inverse_mass_matrix(coupled, q), np.linalg.inv(M), "M^-1")
    close(rbd.forward_kinematics(coupled, q), rbd.forward_kinematics(full, qf), "forward kinematics")
    tip = coupled.link_frame_names[-1]
    close(rbd.frame_jacobian(coupled, q, tip, "world"), rbd.frame_jacobian(full, qf, tip, "world") @ G, "J")
    close(rbd.kinetic_energy(coupled, q, v), 0.5 * v @ M @ v, "kinetic energy")
    dq, dv, da = rbd.rnea_derivatives(coupled, q, v, a, fext)
    fq, fv, _ = rbd.rnea_derivatives(full, qf, G @ v, G @ a, fext)
    close(dq, G.T @ fq @ G, "dtau_dq")
    close(dv, G.T @ fv @ G, "dtau_dv")
    close(da, M, "dtau_da")


def test_against_pinocchio_mimic_joints(backend):
    if pin is None:
        pytest.skip("pinocchio is not installed")
    coupled, _, path = load("panda")
    pm = pin.buildModelFromUrdf(path, mimic=True)
    data = pm.createData()
    assert [pm.names[k] for k in range(1, pm.njoints) if pm.joints[k].shortname() != "JointModelMimic"] == \
        [n for n in coupled.joint_names if n not in {m[0] for m in coupled.mimic}]
    rng = np.random.default_rng(5)
    q = rbd.random_configuration(coupled, rng)
    v, a = rng.normal(size=coupled.nv), rng.normal(size=coupled.nv)  # the same order, no quaternions here
    np.testing.assert_allclose(rbd.rnea(coupled, q, v, a), pin.rnea(pm, data, q, v, a), atol=1e-10)
    M = pin.crba(pm, data, q)
    np.testing.assert_allclose(rbd.crba(coupled, q), np.triu(M) + np.triu(M, 1).T, atol=1e-12)
    pin.computeJointJacobians(pm, data, q)
    pin.framesForwardKinematics(pm, data, q)
    for frame in ("panda_leftfinger", "panda_rightfinger", "panda_hand_tcp"):
        fid = pm.getFrameId(frame)
        np.testing.assert_allclose(rbd.frame_placement(coupled, q, frame), data.oMf[fid].homogeneous, atol=1e-12)
        np.testing.assert_allclose(rbd.frame_jacobian(coupled, q, frame, "world"),
                                   pin.getFrameJacobian(pm, data, fid, pin.WORLD), atol=1e-12)


def test_identities_on_the_coupled_model(backend):
    coupled, _, _ = load("panda")
    rng = np.random.default_rng(7)
    q = rbd.random_configuration(coupled, rng)
    v, tau = rng.normal(size=coupled.nv), rng.normal(size=coupled.nv)
    qdd = rbd.aba(coupled, q, v, tau)
    np.testing.assert_allclose(rbd.rnea(coupled, q, v, qdd), tau, atol=1e-9)
    dq, dv, dtau = rbd.aba_derivatives(coupled, q, v, tau)
    h = 1e-6
    fd = np.stack([(rbd.aba(coupled, rbd.integrate(coupled, q, h * e), v, tau)
                    - rbd.aba(coupled, rbd.integrate(coupled, q, -h * e), v, tau)) / (2 * h)
                   for e in np.eye(coupled.nv)], axis=-1)
    np.testing.assert_allclose(dq, fd, atol=1e-5 * max(1.0, np.abs(fd).max()))
    np.testing.assert_allclose(dtau @ rbd.crba(coupled, q), np.eye(coupled.nv), atol=1e-8)
    batch = rbd.random_configuration(coupled, rng, batch=3)
    np.testing.assert_allclose(rbd.crba(coupled, batch)[1], rbd.crba(coupled, batch[1]), atol=1e-14)


def test_passive_terms_of_a_coupled_model_are_its_effective_ones(backend):
    """armature, damping and friction of a coupled model are on the independent coordinates:
    G^T diag(x) G for armature and damping (what crba and the damping force see), |G|^T x for
    Coulomb friction. Oracles: crba's armature share, and the full model's forces mapped by G."""
    b = rbd.ModelBuilder("fingers")
    b.add_link("palm")
    for name, armature, damping, friction in (("a", 0.5, 0.3, 0.2), ("b", 0.25, 0.1, 0.4), ("c", 0.125, 0.7, 0.1)):
        b.add_link(name, mass=0.1, com=[0.0, 0.0, 0.02], inertia=np.diag([1e-4, 1e-4, 5e-5]))
        b.add_joint("j" + name, "prismatic", "palm", name, axis=(1, 0, 0), armature=armature, damping=damping,
                    friction=friction)
    full = b.build()
    coupled = rbd.couple_joints(full, [("jb", "ja", -2.0, 0.01)])
    G = coupled.coupling
    np.testing.assert_allclose(np.diag(coupled.armature), G.T @ np.diag(full.armature) @ G, rtol=1e-15)
    np.testing.assert_allclose(np.diag(coupled.damping), G.T @ np.diag(full.damping) @ G, rtol=1e-15)
    v = np.array([0.3, -0.2])  # friction: G^T (friction * sign(G v)) over the full joints
    np.testing.assert_allclose(coupled.friction * np.sign(v), G.T @ (full.friction * np.sign(G @ v)), rtol=1e-15)
    q = np.array([0.02, -0.01])
    bare = rbd.couple_joints(full.replace(armature=np.zeros(3)), [("jb", "ja", -2.0, 0.01)])
    np.testing.assert_allclose(rbd.crba(coupled, q) - rbd.crba(bare, q), np.diag(coupled.armature), atol=1e-14)


def test_a_chain_of_mimics_resolves_to_its_independent_joint(backend):
    """joint7 follows joint6, which follows joint5, which follows joint4 (listed out of order):
    every mimic's q is its primary's through the chain, q_j = m (q_primary) + o written out
    from joint4 on; the coupled model's placements are the full model's there."""
    model = rbd.sample_model("arm7")
    rules = [("joint6", "joint5", -0.5, 0.1), ("joint7", "joint6", 2.0, -0.3), ("joint5", "joint4", 0.7, 0.2)]
    coupled = rbd.couple_joints(model, rules)
    assert coupled.nv == model.nv - 3
    q = rbd.random_configuration(coupled, np.random.default_rng(5))
    q_full = np.zeros(model.nq)
    for name in ("joint1", "joint2", "joint3", "joint4"):
        q_full[model.joint_idx_q(name)] = q[coupled.joint_idx_q(name)]
    for joint, primary, multiplier, offset in sorted(rules, key=lambda r: r[1]):  # joint4's follower first
        q_full[model.joint_idx_q(joint)] = multiplier * q_full[model.joint_idx_q(primary)] + offset
    np.testing.assert_allclose(rbd.forward_kinematics(coupled, q), rbd.forward_kinematics(model, q_full),
                               rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="form a cycle"):
        rbd.couple_joints(model, [("joint5", "joint6", 1.0, 0.0), ("joint6", "joint7", 1.0, 0.0),
                                  ("joint7", "joint5", 1.0, 0.0)])


def test_couplings_are_checked(backend):
    model = rbd.sample_model("arm7")
    with pytest.raises(ValueError, match="unknown joint"):
        rbd.couple_joints(model, [("joint7", "nope", 1.0, 0.0)])
    with pytest.raises(ValueError, match="cycle"):
        rbd.couple_joints(model, [("joint6", "joint7", 1.0, 0.0), ("joint7", "joint6", 1.0, 0.0)])
    quad = rbd.sample_model("quadruped")  # a free flyer cannot mimic
    with pytest.raises(ValueError, match="revolute, continuous or prismatic"):
        rbd.couple_joints(quad, [(quad.joint_names[0], quad.joint_names[1], 1.0, 0.0)])
    coupled = rbd.couple_joints(model, [("joint7", "joint6", -0.5, 0.1)])
    assert coupled.nv == model.nv - 1 and coupled.joint_idx_v("joint7") == coupled.joint_idx_v("joint6")
    with pytest.raises(ValueError, match=r"\(..., 6\)"):
        rbd.rnea(coupled, np.zeros(coupled.nq), np.zeros(model.nv), np.zeros(coupled.nv))
    import pickle
    assert pickle.loads(pickle.dumps(coupled)) == coupled != model


def test_derived_models_keep_their_couplings(backend):
    coupled, full, _ = load("panda")
    q = rbd.random_configuration(coupled, np.random.default_rng(2))
    # locking a primary locks its mimics: the fingers go together
    arm = rbd.lock_joints(coupled, ["panda_finger_joint1"], q)
    assert arm.nv == 7 and not arm.mimic
    qf, _ = by_hand(coupled, full, q)
    reference = rbd.lock_joints(full, ["panda_finger_joint1", "panda_finger_joint2"], qf)
    np.testing.assert_allclose(rbd.crba(arm, q[:7]), rbd.crba(reference, q[:7]), atol=1e-14)
    # a frame and a payload on a coupled model keep the coupling
    tcp = rbd.add_payload(rbd.add_frame(coupled, "tcp", "panda_hand", np.eye(4)), "tcp", 0.2, [0, 0, 0.1],
                          np.eye(3) * 1e-4)
    assert tcp.mimic == coupled.mimic and tcp.nv == coupled.nv
    assert rbd.crba(tcp, q)[0, 0] > rbd.crba(coupled, q)[0, 0]


def _two_links(second, mimic=""):
    inertial = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
    revolute = '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
    return ('<robot name="r"><link name="base"/><link name="l1">%s</link><link name="l2">%s</link>'
            '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>%s</joint>'
            '<joint name="j2" type="%s"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.1"/>%s%s</joint>'
            '</robot>' % (inertial, inertial, revolute, second, revolute if second != "fixed" else "", mimic))


def test_a_fixed_joint_with_a_mimic_tag_has_nothing_to_couple():
    """example-robot-data's reduced Talos keeps <mimic> on gripper joints it made fixed;
    Pinocchio loads it, and so must rbd: the tag is moot on a joint without motion."""
    xml = _two_links("fixed", '<mimic joint="j1" multiplier="2"/>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "loaded as independent joints" for a fixed joint either
        plain = rbd.load_urdf(xml)
        coupled = rbd.load_urdf(xml, mimic=True)
    assert coupled.nv == plain.nv == 1 and coupled.mimic == ()
    path = robot_urdf_path("talos")
    if path is None or pin is None:
        return
    reduced = path.with_name("talos_reduced.urdf")
    if reduced.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = rbd.load_urdf(reduced, floating_base=True, mimic=True)
        peer = pin.buildModelFromUrdf(str(reduced), pin.JointModelFreeFlyer(), mimic=True)
        assert (model.nq, model.nv) == (peer.nq, peer.nv)


def test_mimic_tags_that_cannot_be_enforced_say_which_joint_holds_them():
    with pytest.raises(rbd.URDFError, match=r"joint 'j2': <mimic joint='j1'> follows a fixed joint"):
        rbd.load_urdf(_two_links("revolute", '<mimic joint="j1"/>').replace('type="revolute"', 'type="fixed"', 1),
                      mimic=True)
    with pytest.raises(rbd.URDFError, match=r"joint 'j2': <mimic joint='elbow'> names no joint of the file"):
        rbd.load_urdf(_two_links("revolute", '<mimic joint="elbow"/>'), mimic=True)
    with pytest.warns(UserWarning, match="mimic joints 'j2' are loaded as independent joints"):
        assert rbd.load_urdf(_two_links("revolute", '<mimic joint="elbow"/>')).nv == 2  # not enforced: loads


def test_a_singular_coupled_model_names_the_joint(backend):
    """j1 and its mimic j2 move only massless links: the coupled mass matrix is singular in
    j1's coordinate (the second; j0 moves a real body), and the error says so."""
    body = '<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
    xml = ('<robot name="r"><link name="base"/><link name="arm">%s</link><link name="b"/><link name="c"/>'
           '<joint name="j0" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>'
           '<joint name="j1" type="revolute"><parent link="arm"/><child link="b"/><axis xyz="1 0 0"/>'
           '<origin xyz="0.5 0 0"/></joint>'
           '<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>'
           '<mimic joint="j1" multiplier="2"/></joint></robot>' % body)
    model = rbd.load_urdf(xml, mimic=True)
    assert model.nv == 2
    M = rbd.crba(model, np.zeros(2))
    assert M[0, 0] > 0 and M[1, 1] == 0.0  # (the oracle: j1 moves nothing with mass)
    with pytest.raises(rbd.SingularModelError, match="singular at joint 'j1': the bodies it moves"):
        rbd.aba(model, np.zeros(2), np.zeros(2), np.zeros(2))


def test_mass_matrices_of_a_coupled_model_are_exactly_symmetric(backend):
    """G^T M G sums its two triangles in different orders; crba (single and batched) and
    rnea_derivatives' dtau/da come back exactly symmetric all the same, as the full model's
    are.  Couplings with multipliers other than 1, of revolute and prismatic joints."""
    from models import random_model
    full = random_model(11, nlinks=9, floating_base=True)
    kinds = dict(zip(full.joint_names, full.joint_kinds))
    mimic, free = [], [n for n in full.joint_names
                       if kinds[n] in (int(rbd.JointKind.REVOLUTE), int(rbd.JointKind.PRISMATIC))]
    for multiplier, offset in ((-0.73, 0.1), (1.37, 0.0)):  # (joint, primary) pairs of one kind
        pair = next(((a, b) for a in free for b in free if a != b and kinds[a] == kinds[b]), None)
        if pair:
            mimic.append(pair + (multiplier, offset))
            free = [n for n in free if n not in pair]
    assert mimic
    coupled = rbd.couple_joints(full, mimic)
    rng = np.random.default_rng(3)
    Q = rbd.random_configuration(coupled, rng, batch=20)
    M = rbd.crba(coupled, Q)
    assert np.array_equal(M, np.swapaxes(M, -1, -2))
    assert np.array_equal(rbd.crba(coupled, Q[4]), rbd.crba(coupled, Q[4]).T)
    ones = np.ones(coupled.nv)
    dtau_da = rbd.rnea_derivatives(coupled, Q[4], ones, ones)[2]
    assert np.array_equal(dtau_da, dtau_da.T)
    np.testing.assert_allclose(dtau_da, M[4], rtol=0, atol=1e-12 * np.abs(M[4]).max())


def test_a_model_without_mimic_joints_has_the_identity_coupling():
    """v_full = v: G is the identity and its entries (arange, ones), so code written for
    coupled models (J_full G, G^T tau_full) runs unchanged on any model (it raised
    AttributeError)."""
    model = rbd.sample_model("arm7")
    assert not model.mimic
    np.testing.assert_array_equal(model.coupling, np.eye(model.nv))
    source, scale = model.coupling_entries
    np.testing.assert_array_equal(source, np.arange(model.nv))
    np.testing.assert_array_equal(scale, np.ones(model.nv))
    assert not (model.coupling.flags.writeable or source.flags.writeable or scale.flags.writeable)
