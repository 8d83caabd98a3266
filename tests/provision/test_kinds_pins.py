"""Pins read without packaging.requirements (provision/kinds.py's Pin) agree with packaging's reading,
and whatever the simple form does not cover still goes to packaging."""

import subprocess
import sys

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from ocrdeploy.provision.kinds import Pin, PipInstall, requirement

SIMPLE = ["torch==2.14.0", "vllm", "A", "paddlepaddle-gpu==3.3.0", "huggingface_hub>=0.24,<1",
          "setuptools>=77.0.3,<81.0.0", "nvidia-cuda-nvcc==13.0.48", "zope.interface ~= 6.0",
          "requests[socks,security]==2.32.3", "foo [ bar ] >= 1.0 , != 1.5.*", "x===weird-1",
          "transformers==5.19.0.dev0", "numpy<2", "pkg>1!2.0", "pkg!=1.0+l", "pkg==1.0.post1"]
COMPLEX = ["foo; python_version < '3.12'", "foo @ https://example.com/foo-1.0.tar.gz", "foo (>=1.0)"]
INVALID = ["", "foo==", "-foo==1", "foo==1.0,", "foo==1.0,,>=2", "foo>=1.0 <2", "foo[bar==1", "foo[]==1",
           "foo==1.*.0", "foo~=1", "pkg>1!2.0+local.7", "foo>=1.0.*", "foo bar", "foo[-x]==1", "foo ==1 ; ", "foo===", "foo=1.0"]


@pytest.mark.parametrize("line", SIMPLE)
def test_a_simple_pin_is_read_as_packaging_reads_it(line):
    pin, req = requirement(line), Requirement(line)
    assert isinstance(pin, Pin)
    assert (pin.name, pin.extras, pin.specifier, pin.marker, pin.url) == \
           (req.name, req.extras, req.specifier, req.marker, req.url)
    assert Requirement(str(pin)).specifier == req.specifier and Requirement(str(pin)).extras == req.extras


@pytest.mark.parametrize("line", COMPLEX)
def test_markers_urls_and_parentheses_go_to_packaging(line):
    got = requirement(line)
    assert isinstance(got, Requirement) and str(got) == str(Requirement(line))


@pytest.mark.parametrize("line", INVALID)
def test_an_invalid_line_is_packagings_error_whichever_way_it_is_read(line):
    try:
        Requirement(line)
    except InvalidRequirement:
        with pytest.raises(InvalidRequirement):
            requirement(line)
    else:       # packaging accepts it: then so must we, with the same reading
        got = requirement(line)
        assert (got.name, got.extras, got.specifier) == (Requirement(line).name, Requirement(line).extras,
                                                          Requirement(line).specifier)


def test_a_step_with_an_invalid_pin_names_itself():
    with pytest.raises(ValueError, match="^bad-step: "):
        PipInstall("bad-step", "sdk-env", ["torch==2.0", "foo=="])


def test_a_simple_pin_decides_like_a_requirement():
    from ocrdeploy.provision.kinds import satisfied

    for line, version, ok in [("torch==2.14.0", "2.14.0", True), ("torch==2.14.0", "2.14.1", False),
                              ("numpy<2", "2.0.0rc1", False), ("numpy<2", "1.26.4", True),
                              ("huggingface_hub>=0.24,<1", "0.23.9", False), ("vllm", "0.31.0.dev0", True)]:
        assert satisfied({"version": version}, requirement(line))[0] == ok == \
               satisfied({"version": version}, Requirement(line))[0], (line, version)


def test_the_default_plan_is_built_without_packaging_requirements():
    code = ("import sys; from ocrdeploy.recipes.minicpm import build_plan; "
            "build_plan('dspark', {'sdk_repo': '/s', 'vllm_src': '/v', 'transformers_src': '/t'}); "
            "print('packaging.requirements' in sys.modules, 'packaging.markers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
