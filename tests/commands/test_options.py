"""commands/options.py: --set KEY=VALUE read and checked as the inventory checks the same var."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocrdeploy.commands.options import parse_sets
from ocrdeploy.errors import UsageError

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("item,needle", [
    ("ansible_port=abc", "ansible_port must be a port number 1-65535, got 'abc'"),
    ("ansible_port=70000", "ansible_port must be a port number 1-65535"),
    ("ansible_port=0", "ansible_port must be a port number 1-65535"),
    ("ansible_become=maybe", "ansible_become must be true or false"),
    ("ansible_become_method=su", "ansible_become_method 'su' is not supported"),
    ("ansible_connection=docker", "ansible_connection 'docker' is not supported"),
    ('ansible_ssh_common_args=-o "open', "ansible_ssh_common_args: cannot split"),
    ("gpu=abc", "gpu must be 'auto', an index or a comma list of indexes"),
    ("installer=conda", "installer: 'conda' is not one of auto, uv, pip"),
    ("pip_index_url=mirror.example/simple", "pip_index_url: 'mirror.example/simple' is not an http(s)"),
    ("layout_url=hf-mirror.com/x.tar", "layout_url: 'hf-mirror.com/x.tar' is not an http(s)"),
    ("pip_trusted_host=a/b", "pip_trusted_host: 'a/b' is not a host name"),
])
def test_a_set_value_the_inventory_would_refuse_is_one_line_naming_the_option(item, needle):
    with pytest.raises(UsageError) as exc:
        parse_sets([item])
    assert str(exc.value).startswith(f"--set {item!r}: ")
    assert needle in str(exc.value)


@pytest.mark.parametrize("item,shown", [
    ("torch_index_url=https://u:s3cret@:99999/x", "--set 'torch_index_url=https://***@:99999/x': torch_index_url: "
                                                  "'https://***@:99999/x' is not"),
    ("pip_extra_index_url=https://a:s3cret@a.example/simple,https://b:s3cret@/simple",
     "--set 'pip_extra_index_url=https://***@a.example/simple,https://***@/simple': pip_extra_index_url: "
     "'https://***@/simple' is not"),
])
def test_a_refused_set_url_is_shown_masked(item, shown):
    """A URL var refused on the command line: its credentials read as *** in the echoed item too."""
    with pytest.raises(UsageError) as exc:
        parse_sets([item])
    assert str(exc.value).startswith(shown) and "s3cret" not in str(exc.value)


def test_set_values_the_inventory_takes_pass_as_written():
    assert parse_sets(["ansible_port=2222", "gpu=0,1", "gpu=auto", "ansible_become=yes",
                       "ansible_connection=local", "vllm_src=/src/vllm"]) == {
        "ansible_port": "2222", "gpu": "auto", "ansible_become": "yes", "ansible_connection": "local",
        "vllm_src": "/src/vllm"}


def test_install_with_a_bad_set_port_is_exit_2_not_a_traceback(tmp_path):
    inv = tmp_path / "inventory.yml"
    inv.write_text("all:\n  hosts:\n    h1:\n      ansible_host: 127.0.0.1\n      ansible_port: 1\n"
                   "  vars:\n    sdk_repo: /src/sdk\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "install", "--check", "--recipe", "sdk-only", "-i", str(inv),
                        "-H", "h1", "--connect-timeout", "1", "--set", "ansible_port=abc"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip() == "error: --set 'ansible_port=abc': ansible_port must be a port number 1-65535, got 'abc'"


@pytest.mark.parametrize("key", ["a\nb", "key\r", "a\x00b", "a\tb"])
def test_an_api_key_no_header_can_carry_is_refused_by_every_command_that_takes_one(key):
    """serve started a server requiring a key no client can send (then waited out its timeout); verify said
    'not ready' and bench 'LocalProtocolError'.  Each now says why before reaching a host."""
    from ocrdeploy.commands.bench import run_bench
    from ocrdeploy.commands.options import api_key
    from ocrdeploy.commands.router import run_restart
    from ocrdeploy.commands.services import run_serve, run_status, run_stop
    from ocrdeploy.commands.verify import run_verify

    with pytest.raises(UsageError, match="^--api-key holds a line break or another control character"):
        api_key(key)
    host = dict(host="nosuchhost.invalid", inventory=None, as_json=False, accept_new_host_keys=False,
                connect_timeout=None)
    calls = [
        lambda: run_serve(backend="dspark", gpu=None, port=None, instances=None, public=False, api_key=key,
                          systemd=False, timeout=None, **host),
        lambda: run_status(name=None, api_key=key, **host),
        lambda: run_stop(name=None, grace=None, api_key=key, **host),
        lambda: run_restart(rolling=True, change={}, timeout=None, batch=None, allow_downtime=False,
                            drain_timeout=None, router_port=None, api_key=key, **host),
        lambda: run_verify(name=None, api_key=key, scripts=None, **host),
        lambda: run_bench(server_url="http://127.0.0.1:9", api_key=key),
    ]
    for call in calls:
        with pytest.raises(UsageError, match="^--api-key holds"):
            call()


def test_an_api_key_on_one_line_passes_as_given():
    from ocrdeploy.commands.options import api_key

    assert api_key(None) is None and api_key("sk-abc 123") == "sk-abc 123"


@pytest.mark.parametrize("value", ["1e300", "1e10", "-1e12"])
def test_a_finite_number_past_any_timeout_is_refused(value):
    """--network-timeout 1e300 overflowed time_t in the probe's threads: tracebacks on stderr and every
    source reported closed.  Past 1e9 (about 31 years) no count or timeout means anything."""
    from ocrdeploy.commands.options import number

    with pytest.raises(UsageError, match=f"^--network-timeout must be at most 1e\\+09, got '{value}'$"):
        number(value, "network-timeout", 1.0)
    assert number("1e9", "network-timeout", 1.0) == 1e9
    assert number("70000", "port", None, maximum=70000) == 70000      # an option's own maximum rules


def test_preflight_with_a_huge_network_timeout_is_exit_2_not_thread_tracebacks(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("OCRDEPLOY_INVENTORY", None)
    p = subprocess.run([sys.executable, "-m", "ocrdeploy", "preflight", "--recipe", "sdk-only", "--network-timeout",
                        "1e300"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip() == "error: --network-timeout must be at most 1e+09, got '1e300'"
