import sys

from ropeproof.cli import main

sys.exit(main())
