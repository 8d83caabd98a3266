"""`python -m ocrdeploy` and the `ocrdeploy` command."""

import sys


def main():
    """An install's facts probes are started before the program's own imports (commands/hosts.py
    start_probes_early), then the program runs as ever."""
    if sys.argv[1:2] == ["install"]:     # no other command pays for the import
        from .commands.hosts import start_probes_early

        start_probes_early(sys.argv[1:])
    from .cli import main as run

    run()


if __name__ == "__main__":
    main()
