"""(being written) sample robots."""
def sample_model(name): raise NotImplementedError
def sample_model_names(): return []
def sample_model_path(name): raise NotImplementedError
