import os
import sys
from pathlib import Path

import pytest
import yaml

TESTS = Path(__file__).parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
SMI = FIXTURES / "nvidia-smi"
sys.path.insert(0, str(TESTS))

from sshlab import SSHLab, sshd_available  # noqa: E402


@pytest.fixture
def smi_box(monkeypatch):
    """Put a recorded nvidia-smi box first on PATH for an in-process (local) probe."""

    def use(box: str):
        monkeypatch.setenv("PATH", f"{SMI / box}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("OCRDEPLOY_PROBE_NO_NVML", "1")
        return SMI / box

    return use


@pytest.fixture(scope="session")
def tiny():
    """The engine tests' tiny random Llama (tests/tinymodel.py), at the one path engines.tiny_model says why."""
    from engines import tiny_model

    return tiny_model()


@pytest.fixture
def lab(tmp_path_factory):
    if not sshd_available():
        if os.environ.get("CI"):
            pytest.fail("sshd is not installed; .ci/run must apt-get install openssh-server")
        pytest.skip("sshd not installed (apt-get install openssh-server)")
    lab = SSHLab(tmp_path_factory.mktemp("sshlab"))
    yield lab
    lab.stop()


def write_inventory(path: Path, hosts: dict, groups: dict | None = None, all_vars: dict | None = None) -> Path:
    doc = {"all": {"hosts": hosts}}
    if all_vars:
        doc["all"]["vars"] = all_vars
    if groups:
        doc["all"]["children"] = groups
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
