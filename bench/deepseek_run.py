"""What `inv deepseek-run` costs around DeepSeek-OCR's own batch script.

Usage: python bench/deepseek_run.py [--repeat 5]

The recorded RTX 5090 box (tests/fixtures/nvidia-smi/rtx5090-590) is on PATH: a run needs a GPU to
be handed (the scripts go through recipes/deepseek_gpu.py, which gives them the chosen one).  A
directory of three PDFs shows what each further file of a directory input costs.

A work dir with a deepseek-ocr-env whose python is this interpreter, config.py with an absolute
MODEL_PATH, and a run_dpsk_ocr_pdf.py that only writes its .mmd (so the figure is ocrdeploy's
overhead: the probe, config.py swapped in and back, the log, the output listing).  Times the
script run directly, then `ocrdeploy deepseek-run` locally and over an SSH lab host as root
(whose ~/.bashrc runs pyenv init, so every command sshd runs pays that hook).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ocrdeploy.recipes import deepseek  # noqa: E402
from ocrdeploy.sdk import samples  # noqa: E402

SCRIPT = r'''
import os, sys
sys.path.insert(0, os.getcwd())
from config import INPUT_PATH, OUTPUT_PATH
os.makedirs(OUTPUT_PATH, exist_ok=True)
name = os.path.basename(INPUT_PATH).replace(".pdf", ".mmd")
open(os.path.join(OUTPUT_PATH, name), "w").write("# page\n\n<--- Page Split --->\n")
print("done")
'''


def median_time(argv, env, repeat, cwd=None):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
        assert out.returncode == 0, out.stdout + out.stderr
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ocrdsrun-"))
    try:
        wd = tmp / "wd"
        env_bin = wd / deepseek.ENV / "bin"
        env_bin.mkdir(parents=True)
        os.symlink(os.path.realpath(sys.executable), env_bin / "python")
        vdir = wd / "DeepSeek-OCR" / deepseek.VLLM_DIR
        vdir.mkdir(parents=True)
        values, _ = deepseek.config_values(40, 8, model_path=str(wd / "models" / "DeepSeek-OCR"),
                                           input_path="/in", output_path="/out")
        (vdir / "config.py").write_text(deepseek.render_config("", values))
        (vdir / "run_dpsk_ocr_pdf.py").write_text(SCRIPT)
        pdf = tmp / "doc.pdf"
        pdf.write_bytes(samples.deepseek_document())
        inv = tmp / "inv.yml"
        inv.write_text(yaml.safe_dump({"all": {"vars": {"workdir": str(wd)}}}))
        smi = ROOT / "tests" / "fixtures" / "nvidia-smi" / "rtx5090-590"
        env = dict(os.environ, OCRDEPLOY_INVENTORY=str(inv), OCRDEPLOY_PROBE_NO_NVML="1",
                   PATH=f"{smi}:{os.environ['PATH']}")

        direct_cfg = deepseek.render_config((vdir / "config.py").read_text(),
                                            {"INPUT_PATH": str(pdf), "OUTPUT_PATH": str(tmp / "direct")})
        shutil.copy(vdir / "config.py", tmp / "config.keep")
        (vdir / "config.py").write_text(direct_cfg)
        t_direct, _ = median_time([str(env_bin / "python"), "run_dpsk_ocr_pdf.py"], env, args.repeat, cwd=vdir)
        shutil.copy(tmp / "config.keep", vdir / "config.py")
        print(f"the script alone (stand-in, writes one .mmd): {t_direct:.3f} s")

        cli = [sys.executable, "-m", "ocrdeploy", "deepseek-run", "--input", str(pdf), "--json"]
        t_local, out = median_time(cli, env, args.repeat)
        assert json.loads(out.stdout)["hosts"]["localhost"]["outputs"], out.stdout
        print(f"inv deepseek-run, local: {t_local:.2f} s ({t_local - t_direct:.2f} s around the script)")
        docs = tmp / "docs"
        docs.mkdir()
        for i in range(3):
            shutil.copy(pdf, docs / f"doc{i}.pdf")
        t_dir, out = median_time(cli[:-3] + ["--input", str(docs), "--json"], env, args.repeat)
        assert len(json.loads(out.stdout)["hosts"]["localhost"]["runs"]) == 3, out.stdout
        print(f"inv deepseek-run, local, a directory of 3 PDFs: {t_dir:.2f} s "
              f"({(t_dir - t_local) / 2:.2f} s per further file, its script run included)")

        from sshlab import SSHLab

        lab = SSHLab(tmp / "lab")
        try:
            h = lab.start("h", "127.0.2.2", path_prefix=str(smi))
            inv2 = tmp / "inv-ssh.yml"
            inv2.write_text(yaml.safe_dump({"all": {"hosts": {"h": lab.inventory_entry(h, workdir=str(wd))}}}))
            e = dict(env, OCRDEPLOY_INVENTORY=str(inv2), OCRDEPLOY_KNOWN_HOSTS=str(lab.known_hosts))
            t_ssh, out = median_time(cli + ["--host", "h"], e, args.repeat)
            assert json.loads(out.stdout)["hosts"]["h"]["outputs"], out.stdout
            user = lab.inventory_entry(h)["ansible_user"]
            hook = "~/.bashrc runs pyenv init" if Path(os.path.expanduser(f"~{user}/.bashrc")).exists() and \
                "pyenv" in Path(os.path.expanduser(f"~{user}/.bashrc")).read_text() else "no shell hooks"
            print(f"inv deepseek-run over SSH as {user} ({hook}): {t_ssh:.2f} s "
                  f"({t_ssh - t_direct:.2f} s around the script)")
        finally:
            lab.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
