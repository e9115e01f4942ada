"""``ropeproof cache info|clear [--cache-dir DIR]``: what the cache of earlier runs' results holds, and
emptying it.

The cache (:mod:`ropeproof.machinery._result_cache`) lives in ``--cache-dir DIR``, else
``$ROPEPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/ropeproof``, else ``~/.cache/ropeproof``. ``info``
prints its directory, entries and size and changes nothing; ``clear`` removes its entries and its record
of task seconds (``timings.json``), and nothing else in the directory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ropeproof.commands._arguments import add_command


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "cache",
        example="ropeproof cache info",
        description="Show (info) or empty (clear) the cache of earlier runs' results that ropeproof check\n"
        "reads and fills (check --no-cache neither reads nor changes it).",
    )
    p.add_argument("action", choices=("info", "clear"), help="info: show it; clear: remove its entries")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the cache's directory (default: $ROPEPROOF_CACHE_DIR, else ~/.cache/ropeproof)",
    )
    p.add_argument("--json", action="store_true", help="info: print JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ropeproof.machinery._errors import InputError
    from ropeproof.machinery._memory_budget import format_bytes
    from ropeproof.machinery._result_cache import cache_info, clear_cache

    if args.action == "clear":
        if args.json:
            raise InputError("--json applies to 'cache info' only")
        freed = clear_cache(args.cache_dir)
        info = cache_info(args.cache_dir)
        print(f"cleared the cache in {info['directory']} ({format_bytes(freed)} freed)")
        return 0
    info = cache_info(args.cache_dir)
    if args.json:
        print(json.dumps(info, indent=1))
        return 0
    entries = (
        "unreadable (damaged; it is replaced on the next run)" if info["entries"] is None else info["entries"]
    )
    print(f"directory: {info['directory']}{'' if info['exists'] else ' (does not exist yet)'}")
    print(f"entries: {entries}")
    print(f"size: {format_bytes(info['bytes'])}")
    print(f"code version: {info['code_version']}")
    return 0
