"""Textbook rotation and pose formulas written out for the tests (no rbd code):
the independent side of the hand-derived checks."""
import numpy as np


def skew(w):
    """[w]x, the matrix of the cross product with w."""
    w = np.asarray(w, dtype=float)
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def pose(R=np.eye(3), p=(0.0, 0.0, 0.0)):
    """The 4x4 homogeneous transform [[R, p], [0, 1]]."""
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = p
    return M
