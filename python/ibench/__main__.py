"""The ``ibench`` command: the same grammar as the Rust binary, defined once in Rust."""

import sys

from ibench._native import cli_main


def main() -> None:
    sys.exit(cli_main(["ibench", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
