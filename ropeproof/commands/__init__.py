"""One module per ``ropeproof`` subcommand; each exposes ``register(subparsers)``."""
