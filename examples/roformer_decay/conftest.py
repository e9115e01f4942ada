"""pytest: this example's modules import each other by name, as ``ropeproof check --claims`` imports
them (it puts a claims file's folder on ``sys.path``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
