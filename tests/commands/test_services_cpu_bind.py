"""CPU instances of one host get cores of their own (VLLM_CPU_OMP_THREADS_BIND): vLLM's `auto` binding pins
every instance's OpenMP threads to the same cores of NUMA node 0."""

from ocrdeploy.commands.services import cpu_binds


def test_cores_are_split_between_instances_and_one_instance_keeps_auto():
    assert cpu_binds(2, 2) == ["0", "1"]
    assert cpu_binds(8, 3) == ["0-1", "2-4", "5-7"]
    assert cpu_binds(4, 2) == ["0-1", "2-3"]
    assert cpu_binds(2, 3) == ["0", "1", "0"]            # fewer cores than instances: shared round-robin
    assert cpu_binds(16, 1) == [None]                   # one instance: vLLM's auto (its reserve core included)
    assert cpu_binds(None, 2) == [None, None]           # the probe did not count them: leave it to vLLM
