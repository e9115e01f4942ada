"""ropeproof: RoPE attention theory as explicit weights, checked numerically.

The library lives in the packages ``theory`` (sympy), ``constructions`` (compilation to weights) and
``verify`` (torch checks); this package holds the command line and the claim registry.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ropeproof")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"
