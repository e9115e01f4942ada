import sys

from ropeproof.cli import run

sys.exit(run())
