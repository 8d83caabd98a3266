"""`inv` entry point: the task collection lives in the package (ocrdeploy.tasks)."""

from ocrdeploy.tasks import ns  # noqa: F401
