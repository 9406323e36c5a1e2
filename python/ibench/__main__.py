"""The ``ibench`` command: the same grammar as the Rust binary, defined once in Rust."""

import os
import sys

from ibench._native import cli_main


def main() -> None:
    # `ibench report` is drawn by this package: run it with this interpreter.
    os.environ.setdefault("IBENCH_PYTHON", sys.executable)
    sys.exit(cli_main(["ibench", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
