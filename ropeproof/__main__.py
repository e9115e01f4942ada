import sys

from ropeproof._cli import run

sys.exit(run())
