"""Runs one of DeepSeek-OCR's batch scripts on the GPU it is given (sent to the host; stdlib only).

Usage: python deepseek_gpu.py SCRIPT GPU

The repository's run_dpsk_ocr_{image,pdf,eval_batch}.py set os.environ["CUDA_VISIBLE_DEVICES"] = '0'
themselves before CUDA starts, so an environment variable from outside never wins: with GPU 0 busy
the run lands on it anyway, although config.py was sized for the free one.  This reads the script,
turns that one assignment into the chosen GPU, and runs it as __main__ from its own directory (its
imports of config, deepseek_ocr and process/ work as with `python SCRIPT`; tracebacks name the file).
"""

import os
import re
import sys

PIN = re.compile(r"""^([ \t]*)os\.environ\[\s*(['"])CUDA_VISIBLE_DEVICES\2\s*\]\s*=.*$""", re.M)


def main(argv):
    script, gpu = os.path.abspath(argv[1]), argv[2]
    with open(script, encoding="utf-8") as fh:
        source = fh.read()
    source, pins = PIN.subn(lambda m: f"{m.group(1)}os.environ['CUDA_VISIBLE_DEVICES'] = {gpu!r}", source)
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu
    sys.argv = [script]
    sys.path.insert(0, os.path.dirname(script))
    how = f"its CUDA_VISIBLE_DEVICES line set to {gpu!r}" if pins else "it sets no CUDA_VISIBLE_DEVICES"
    print(f"ocrdeploy: {os.path.basename(script)} on GPU {gpu} ({how})", file=sys.stderr, flush=True)
    code = compile(source, script, "exec")
    exec(code, {"__name__": "__main__", "__file__": script, "__builtins__": __builtins__})


if __name__ == "__main__":
    main(sys.argv)
