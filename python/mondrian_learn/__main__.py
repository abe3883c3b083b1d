"""Command line: ``python -m mondrian_learn demo [--out DIR]``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the chosen job."""
    parser = argparse.ArgumentParser(prog="python -m mondrian_learn")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="fit Mondrian forests on real data; save plots")
    demo.add_argument("--out", default="mondrian_demo", help="folder for the plots")
    demo.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        from mondrian_learn._demo import run_demo

        run_demo(args.out, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
