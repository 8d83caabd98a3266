"""The cu13 layout repair on a tree laid out like the real nvidia-cuda-* 13.x wheels."""

import os
import subprocess
from pathlib import Path

from ocrdeploy.inventory.model import Host
from ocrdeploy.provision.apply import Applier
from ocrdeploy.provision.connection import LocalConnection
from ocrdeploy.recipes.cuda_steps import CudaCrtFiles, CudaLayout
from ocrdeploy.recipes.cuda_layout import repair_command


def wheel_tree(wd: Path, env="vllm-ocr-env", nvcc="13.0.48", with_crt=False) -> Path:
    """What `pip install nvidia-cuda-nvcc==13.0.48 nvidia-cuda-crt nvidia-nvvm nvidia-cuda-runtime
    nvidia-cuda-nvrtc ...` leaves: one nvidia/cu13 prefix; lib/ holds only the versioned sonames
    (libcudart.so.13, libnvrtc.so.13), there is no lib64/, nvvm/bin/cicc comes with the nvvm wheel;
    the 13.0.48 packages lack bin/crt/link.stub, prelink.stub and bin/nvdisasm."""
    site = wd / env / "lib" / "python3.13" / "site-packages"
    cu = site / "nvidia" / "cu13"
    for d in ("bin/crt", "include", "lib", "nvvm/bin", "nvvm/libdevice"):
        (cu / d).mkdir(parents=True, exist_ok=True)
    for f in ("bin/nvcc", "bin/ptxas", "bin/fatbinary", "nvvm/bin/cicc", "lib/libcudart.so.13",
              "lib/libnvrtc.so.13", "include/cuda_runtime.h"):
        (cu / f).write_text("binary")
    if with_crt:
        for f in ("bin/crt/link.stub", "bin/crt/prelink.stub", "bin/nvdisasm"):
            (cu / f).write_text(f"from {nvcc}")
    (wd / env / "pyvenv.cfg").write_text("version = 3.13.9\n")
    for name in ("nvidia_cuda_nvcc", "nvidia_cuda_crt"):
        di = site / f"{name}-{nvcc}.dist-info"
        di.mkdir()
        (di / "RECORD").write_text("")
    return cu


def test_layout_repair_then_no_op(tmp_path):
    wd = tmp_path / "wd"
    cu = wheel_tree(wd)
    libcuda = tmp_path / "libcuda.so.1"
    libcuda.write_text("driver")
    host = Host("localhost", vars={"workdir": str(wd)})
    step = CudaLayout("cuda-layout", "vllm-ocr-env")
    run = Applier(LocalConnection(host), host, [step], host.vars).apply()
    r = run.results[0]
    assert r.status == "changed", r
    assert "missing: lib64, lib/libcudart.so, lib/libnvrtc.so, lib64/stubs/libcuda.so" in r.reason
    assert not any("cicc" in c for c in r.commands)                  # the wheel's real cicc is kept
    assert (cu / "nvvm" / "bin" / "cicc").read_text() == "binary"
    assert os.readlink(cu / "lib64") == "lib"
    assert os.path.realpath(cu / "lib" / "libcudart.so") == str(cu / "lib" / "libcudart.so.13")
    assert os.path.realpath(cu / "lib" / "libnvrtc.so") == str(cu / "lib" / "libnvrtc.so.13")
    assert (cu / "lib64" / "stubs" / "libcuda.so").is_symlink()
    run = Applier(LocalConnection(host), host, [step], host.vars).apply()
    assert run.results[0].status == "ok" and run.commands_run == 0


def test_crt_files_copied_from_a_13_4_92_env_or_fail_naming_them(tmp_path):
    wd = tmp_path / "wd"
    cu = wheel_tree(wd)
    host = Host("localhost", vars={"workdir": str(wd)})
    step = CudaCrtFiles("cuda-crt-files", "vllm-ocr-env")
    run = Applier(LocalConnection(host), host, [step], host.vars).apply()
    r = run.results[0]
    assert r.status == "failed"
    assert "bin/crt/link.stub, bin/crt/prelink.stub, bin/nvdisasm missing" in r.reason and "13.4.92" in r.reason
    donor = wheel_tree(wd, env="cuda134-env", nvcc="13.4.92", with_crt=True)
    run = Applier(LocalConnection(host), host, [step], host.vars).apply()
    assert run.results[0].status == "changed", run.results[0]
    assert (cu / "bin" / "crt" / "link.stub").read_text() == "from 13.4.92"
    assert (cu / "bin" / "nvdisasm").read_text() == "from 13.4.92"
    assert str(donor) in run.results[0].commands[1]
    run = Applier(LocalConnection(host), host, [step], host.vars).apply()
    assert run.results[0].status == "ok"


def test_guarded_script_repair_agrees_with_the_step(tmp_path):
    cu = wheel_tree(tmp_path / "wd")
    subprocess.run(["sh", "-c", *repair_command(str(cu), "/lib/libcuda.so.1").argv[2:]], check=True)
    assert os.readlink(cu / "lib64") == "lib" and (cu / "nvvm" / "bin" / "cicc").read_text() == "binary"
    assert os.readlink(cu / "lib64" / "stubs" / "libcuda.so") == "/lib/libcuda.so.1"


def test_a_wrong_existing_link_is_repointed(tmp_path):
    """The guide always runs `ln -sf`: libcudart.so left pointing at .so.12 is not "complete"."""
    wd = tmp_path / "wd"
    cu = wheel_tree(wd)
    libcuda = tmp_path / "libcuda.so.1"
    libcuda.write_text("driver")
    (cu / "lib" / "libcudart.so.12").write_text("old runtime")
    os.symlink(str(cu / "lib" / "libcudart.so.12"), cu / "lib" / "libcudart.so")
    host = Host("localhost", vars={"workdir": str(wd)})
    step = CudaLayout("cuda-layout", "vllm-ocr-env")
    r = Applier(LocalConnection(host), host, [step], host.vars).apply().results[0]
    assert r.status == "changed", r
    assert f"lib/libcudart.so points to {cu}/lib/libcudart.so.12, not {cu}/lib/libcudart.so.13" in r.reason
    assert os.readlink(cu / "lib" / "libcudart.so") == str(cu / "lib" / "libcudart.so.13")
    assert (cu / "nvvm" / "bin" / "cicc").read_text() == "binary"        # a real file is still kept
    assert Applier(LocalConnection(host), host, [step], host.vars).apply().results[0].status == "ok"


def test_guarded_script_repoints_a_wrong_link_too(tmp_path):
    cu = wheel_tree(tmp_path / "wd")
    (cu / "lib" / "libnvrtc.so.12").write_text("old")
    os.symlink("libnvrtc.so.12", cu / "lib" / "libnvrtc.so")
    subprocess.run(["sh", "-c", *repair_command(str(cu), "/lib/libcuda.so.1").argv[2:]], check=True)
    assert os.readlink(cu / "lib" / "libnvrtc.so") == f"{cu}/lib/libnvrtc.so.13"
    assert (cu / "nvvm" / "bin" / "cicc").read_text() == "binary"
    subprocess.run(["sh", "-c", *repair_command(str(cu), "/lib/libcuda.so.1").argv[2:]], check=True)   # idempotent
    assert os.readlink(cu / "lib64") == "lib" and not (cu / "lib" / "lib").exists()


def test_the_stub_libcuda_link_points_at_the_hosts_driver_library():
    """lib64/stubs/libcuda.so must point at the libcuda.so.1 the probe found on this host (the default
    path is only for when none was found)."""
    from ocrdeploy.recipes.cuda_steps import CudaLayout

    step = CudaLayout("cuda-layout", "vllm-ocr-env")
    facts = {"workdir": {"path": "/wd"}, "host": {"home": "/root"}, "files": {step.cu: {"exists": True}},
             "libcuda": "/usr/lib64/nvidia/libcuda.so.1"}
    links = {c.argv[-1]: c.argv[-2] for c in step.commands(facts, {}) if c.argv[0] == "ln"}
    cu = "/wd/vllm-ocr-env/lib/python3.13/site-packages/nvidia/cu13"
    assert links[f"{cu}/lib64/stubs/libcuda.so"] == "/usr/lib64/nvidia/libcuda.so.1"
    facts["libcuda"] = None
    links = {c.argv[-1]: c.argv[-2] for c in step.commands(facts, {}) if c.argv[0] == "ln"}
    assert links[f"{cu}/lib64/stubs/libcuda.so"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
