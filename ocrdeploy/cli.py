"""The `ocrdeploy` console command: the same tasks as `inv`, from any directory."""

from invoke import Program

from . import __version__
from .tasks import ns

program = Program(namespace=ns, version=__version__, name="ocrdeploy", binary="ocrdeploy")


def main():
    program.run()
