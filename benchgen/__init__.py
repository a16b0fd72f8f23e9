"""benchgen: benchmark RL agents on emulated games, by the protocols of the field's papers."""

import pluggy

__version__ = "0.1.0"

#: Decorator for hook implementations: ``@benchgen.hookimpl def benchgen_suites(): ...``
hookimpl = pluggy.HookimplMarker("benchgen")

__all__ = ["hookimpl", "__version__"]
