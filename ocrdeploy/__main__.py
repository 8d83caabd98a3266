"""`python -m ocrdeploy` and the `ocrdeploy` command.

An `install` over SSH starts its facts probe's ssh before invoke, the tasks and the recipes are imported
(provision/early_probe.py): the handshake runs while the controller starts."""

import sys


def run():
    from .provision import early_probe

    early_probe.start(sys.argv[1:])
    from .cli import main

    main()


if __name__ == "__main__":
    run()
