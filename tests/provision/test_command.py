import pytest

from ocrdeploy.provision.command import Command, Secret


def test_every_part_is_quoted():
    cmd = Command(["pip", "install", "torch==2.14.0", "a b", "$(reboot)"], env={"CUDA_HOME": "/x y"}, cwd="/w d")
    assert cmd.shell() == "cd '/w d' && env CUDA_HOME='/x y' pip install torch==2.14.0 'a b' '$(reboot)'"


def test_sudo_prefix_and_secrets_masked():
    cmd = Command(["curl", "-H", Secret("Authorization: Bearer hf_abc")], sudo=True)
    assert "hf_abc" not in str(cmd) and "'***'" in str(cmd)
    assert cmd.shell().startswith("sudo -n curl -H 'Authorization: Bearer hf_abc'")
    assert cmd.shell(sudo_prefix=()) .startswith("curl")


def test_shell_strings_are_refused():
    with pytest.raises(TypeError):
        Command("rm -rf /")
    with pytest.raises(ValueError):
        Command(["true"], env={"BAD;NAME": "1"}).shell()


def test_the_connection_adds_sudo_n_exactly_when_not_root():
    from ocrdeploy.inventory import Host
    from ocrdeploy.provision.connection import LocalConnection

    conn = LocalConnection(Host("localhost"))
    cmd = Command(["apt-get", "install", "-y", "gcc-13"], sudo=True)
    conn.set_uid(1000)
    assert conn.prefix(cmd) == ("sudo", "-n") and conn.shell(cmd, mask=True).startswith("sudo -n apt-get install")
    conn.set_uid(0)
    assert conn.prefix(cmd) == () and conn.shell(cmd, mask=True).startswith("apt-get install")
