"""Where the installed example-robot-data keeps its URDFs: shared by the tests and
the peer comparison in asv_benchmarks/ (neither ships in the installed package)."""
import importlib.metadata
import os
from pathlib import Path

# A file every release of the collection has: the mark of the right directory.
_LANDMARK = "panda_description/urdf/panda.urdf"


def example_robot_data_dir():
    """The ``robots/`` directory of the installed example-robot-data, or None.

    Version 6 ships only data (under the cmeel prefix of site-packages); older
    versions have an ``example_robot_data`` module; ROS installs put it under
    an ament prefix.  Nothing here touches the network.
    """
    candidates = []
    if os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR"):
        candidates.append(Path(os.environ["EXAMPLE_ROBOT_DATA_MODEL_DIR"]))
    try:
        dist = importlib.metadata.distribution("example-robot-data")
        for file in dist.files or ():
            if file.as_posix().endswith("share/example-robot-data/package.xml"):
                candidates.append(Path(dist.locate_file(file)).parent / "robots")
                break
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        import example_robot_data  # older releases
        candidates.append(Path(example_robot_data.getModelPath(_LANDMARK))
                          / "example-robot-data" / "robots")
    except Exception:  # absent or another layout: the other candidates remain
        pass
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / "example-robot-data" / "robots")
    for directory in candidates:
        if (directory / _LANDMARK).is_file():
            return directory
    return None
