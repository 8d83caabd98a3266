"""DeepSeek-OCR through transformers on one image, as the notes' section 4.1 and the repository's
DeepSeek-OCR-hf/run_dpsk_ocr.py run it (sent to the host; runs in deepseek-ocr-env, which holds
transformers 4.46.3 and flash-attn).

Usage: python deepseek_tf.py JOB_JSON

JOB_JSON: {"model", "image", "output", "prompt", "base_size", "image_size", "crop_mode", "attn", "device"}.
attn and device are flash_attention_2 and cuda as the notes have them (`inv deepseek-run --backend
transformers` always sends those, on the GPU CUDA_VISIBLE_DEVICES names); another attention and the CPU
exist for a model without flash-attn.  infer() with test_compress prints the vision tokens and the
compression ratio, and with save_results writes result.mmd (and images/) under the output directory:
the command reads both.
"""

import json
import os
import sys


def main(argv):
    job = json.loads(argv[1])
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(job["model"], trust_remote_code=True)
    model = AutoModel.from_pretrained(job["model"], _attn_implementation=job.get("attn") or "flash_attention_2",
                                      trust_remote_code=True, use_safetensors=True)
    model = model.eval()
    if (job.get("device") or "cuda") == "cuda":
        model = model.cuda()
    model = model.to(torch.bfloat16)
    os.makedirs(job["output"], exist_ok=True)
    print(f"ocrdeploy: {os.path.basename(job['image'])}: infer(base_size={job['base_size']}, "
          f"image_size={job['image_size']}, crop_mode={job['crop_mode']})", file=sys.stderr, flush=True)
    model.infer(tokenizer, prompt=job["prompt"], image_file=job["image"], output_path=job["output"],
                base_size=int(job["base_size"]), image_size=int(job["image_size"]), crop_mode=bool(job["crop_mode"]),
                save_results=True, test_compress=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
