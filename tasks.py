"""`inv` entry point: the task collection lives in the package (ocrdeploy.tasks)."""

import os
import sys

if os.path.basename(sys.argv[0]) in ("inv", "invoke") and sys.argv[1:2] == ["install"]:
    # `inv install` over SSH: the facts probe's ssh starts now, before the tasks and recipes are imported
    # (ocrdeploy/commands/early_install.py; a line it does not read without doubt starts nothing)
    from ocrdeploy.commands import early_install

    early_install.start(sys.argv[1:])

from ocrdeploy.tasks import ns  # noqa: E402,F401
