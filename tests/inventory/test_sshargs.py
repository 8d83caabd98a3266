import re

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.inventory import load_inventory
from ocrdeploy.inventory.sshargs import Hop, SSHArgsError, jump_hops, parse_ssh_args


def test_what_paramiko_can_do_is_mapped():
    a = parse_ssh_args("-o ProxyJump=ops@bastion:2222 -o ConnectTimeout=7 -o ServerAliveInterval=30 "
                       "-o UserKnownHostsFile=~/.ssh/lab_known -i ~/.ssh/gpu.pem -p 2200 -l ubuntu -C -A")
    assert (a.proxy_jump, a.connect_timeout, a.keepalive) == ("ops@bastion:2222", 7.0, 30)
    assert (a.known_hosts_files, a.identity_file) == (["~/.ssh/lab_known"], "~/.ssh/gpu.pem")
    assert (a.port, a.user) == (2200, "ubuntu")
    assert a.compress and a.forward_agent and a.ignored == []
    b = parse_ssh_args("-o 'ProxyCommand=ssh -W %h:%p bastion' -J jump1 -oCompression=yes")
    assert (b.proxy_command, b.proxy_jump, b.compress) == ("ssh -W %h:%p bastion", "jump1", True)


def test_what_it_cannot_do_is_named_with_the_reason():
    a = parse_ssh_args("-o ControlMaster=auto -o ControlPersist=60s -o StrictHostKeyChecking=no "
                       "-o GSSAPIAuthentication=no -F ~/.ssh/other -4 --weird")
    joined = " | ".join(a.ignored)
    assert "-o ControlMaster=auto (one connection per host" in joined
    assert "-o StrictHostKeyChecking=no (host keys are always verified" in joined
    assert "-F ~/.ssh/other" in joined and "-4 (" in joined and "--weird (not an option" in joined
    assert len(a.ignored) == 7


@pytest.mark.parametrize("text,message", [
    ("-o", "-o needs a value"),
    ("-o ConnectTimeout=soon", "expected a whole number"),
    ("-o ProxyJump", "expected Key=Value"),
    ("-o 'ProxyCommand=ssh -W", "cannot split"),
    ("-p 70000", "-p: expected a port number 1-65535"),
    ("-o Port=0", "expected a port number 1-65535"),
])
def test_malformed_args(text, message):
    with pytest.raises(SSHArgsError, match=message):
        parse_ssh_args(text)


def test_inventory_checks_the_new_vars_with_file_and_line(tmp_path):
    p = tmp_path / "hosts.ini"
    p.write_text("[gpu]\na ansible_become=True ansible_become_user=ocr ansible_python_interpreter=/opt/py/bin/python3\n"
                 "b ansible_ssh_common_args='-o ControlMaster=auto' ansible_become_password=secret\n")
    inv = load_inventory(p)
    a, b = inv.hosts["a"], inv.hosts["b"]
    assert (a.become_user, a.python_interpreter) == ("ocr", "/opt/py/bin/python3")
    assert b.become_user is None and b.python_interpreter is None
    assert b.ignored_settings() == [
        "ssh option -o ControlMaster=auto (one connection per host is opened and reused for the whole run anyway)",
        "ansible_become_password (ocrdeploy never sends a password: sudo -n, so allow NOPASSWD)"]
    for text, line, message in [
        ("[g]\nx\n[g:vars]\nansible_become=maybe\n", 4, "ansible_become must be true or false"),
        ("[g]\nx ansible_become_method=su\n", 2, "ansible_become_method 'su' is not supported"),
        ("[g]\nx ansible_ssh_common_args='-o ConnectTimeout=x'\n", 2, "ansible_ssh_common_args: -o ConnectTimeout=x"),
    ]:
        p.write_text(text)
        with pytest.raises(UsageError) as err:
            load_inventory(p)
        assert str(err.value).startswith(f"{p}:{line}: ") and message in str(err.value), str(err.value)


@pytest.mark.parametrize("value,user", [("yes", "root"), ("true", "root"), (True, "root"), ("no", None),
                                        (False, None), ("0", None)])
def test_become_follows_ansible_booleans(tmp_path, value, user):
    import yaml

    p = tmp_path / "inv.yml"
    p.write_text(yaml.safe_dump({"all": {"hosts": {"a": {"ansible_become": value}}}}))
    assert load_inventory(p).hosts["a"].become_user == user


@pytest.mark.parametrize("spec,hops", [
    ("bastion", [Hop(None, "bastion", 22)]),
    ("ops@bastion:2222,ssh://me@corp@inner", [Hop("ops", "bastion", 2222), Hop("me@corp", "inner", 22)]),
    ("u@[2001:db8::2]:2200, [::1]", [Hop("u", "2001:db8::2", 2200), Hop(None, "::1", 22)]),
])
def test_jump_hosts_read_as_openssh_reads_them(spec, hops):
    """The last '@' ends the user (OpenSSH's strrchr); no port is 22."""
    assert jump_hops(spec) == hops


@pytest.mark.parametrize("spec,message", [
    ("fe80::1", "an IPv6 address is written in brackets"),
    ("[::1]2222", "expected [address]:port"),
    ("[::1", "expected [address]:port"),
    ("host:0", "not a number 1-65535"),
    ("us er@host", "not [user@]host[:port]"),
])
def test_malformed_jump_hosts(spec, message):
    with pytest.raises(SSHArgsError, match=re.escape(message)):
        jump_hops(spec)


def test_glued_values_none_and_the_several_files_form():
    a = parse_ssh_args("-p2 -lu -o 'UserKnownHostsFile=~/.ssh/a ~/.ssh/b' -o ProxyJump=none -o ProxyCommand=NONE "
                       "-o ForwardAgent=no -o Compression=no")
    assert (a.port, a.user) == (2, "u")
    assert a.known_hosts_files == ["~/.ssh/a", "~/.ssh/b"]
    assert a.proxy_jump is None and a.proxy_command is None
    assert not a.forward_agent and not a.compress


def test_no_flag_means_no_agent_forwarding_and_no_compression():
    """Agent forwarding hands the host the user's keys: it is on only where -A or ForwardAgent=yes asks for it."""
    for text in ("", "-o ControlMaster=auto -i ~/.ssh/gpu.pem -p 2200"):
        a = parse_ssh_args(text)
        assert a.forward_agent is False and a.compress is False, text
        assert (a.proxy_jump, a.proxy_command, a.connect_timeout, a.keepalive) == (None, None, None, None)
        assert a.known_hosts_files == []
