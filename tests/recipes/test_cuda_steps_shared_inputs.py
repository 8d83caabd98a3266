"""The edges of a shared build's grouping key (VllmCompile.build_inputs) and of a vllm installed from a shared
wheel: what must split a group (g++-13 alone changed, a checkout whose commit cannot be read) and what must not
(how many GPUs of one model), and which installed wheel counts as a shared one."""

from ocrdeploy.provision.fleet import inputs_key
from ocrdeploy.recipes.cuda_steps import VllmCompile

from test_cuda_steps import _build_facts, _key


def step(**kw):
    return VllmCompile("vllm-compile", "vllm-ocr-env", "/src/vllm", **kw)


def test_a_different_g_plus_plus_alone_is_a_different_build():
    base = _key(step(), _build_facts())
    gxx = _build_facts(compilers={"gcc-13": {"version": "13.1.0"}, "g++-13": {"version": "13.3.0"}})
    assert _key(step(), gxx) != base


def test_the_number_of_gpus_of_one_model_does_not_split_a_group():
    """8 and 4 H200s compile the same kernels (the model fixes the compute capability)."""
    eight = _build_facts(gpu={"gpus": [{"name": "NVIDIA H200"}] * 8})
    assert _key(step(), eight) == _key(step(), _build_facts())
    two = _build_facts(gpu={"gpus": [{"name": "NVIDIA H200"}, {"name": "NVIDIA A100"}]})
    assert _key(step(), two) == _key(step(), _build_facts(gpu={"gpus": [{"name": "NVIDIA A100"},
                                                                        {"name": "NVIDIA H200"}]}))


def test_a_checkout_whose_commit_cannot_be_read_is_never_shared():
    """A HEAD naming a ref that neither refs/ nor packed-refs holds: no commit, so no key (two such trees
    would otherwise share whatever one of them built)."""
    facts = _build_facts(git={"/src/vllm": {"commit": None, "ref": "refs/heads/gone"}})
    assert step().build_inputs(facts, {}) is None


def test_only_a_wheel_under_the_workdirs_shared_build_directory_counts_as_a_shared_build():
    facts = _build_facts()
    key = inputs_key(step().build_inputs(facts, {}))
    facts["venvs"]["vllm-ocr-env"]["dists"]["vllm"] = {
        "version": "0.31.0", "editable": False, "complete": True,
        "source": f"file:///tmp/elsewhere/wheels/{key}/vllm-0.31.0-cp313-cp313-linux_x86_64.whl"}
    d = step().needs(facts, {})
    assert d.needed and "not the editable build of /src/vllm" in d.reason
