"""(being written) URDF loader."""
def load_urdf(source, floating_base=False):
    raise NotImplementedError
