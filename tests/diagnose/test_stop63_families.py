"""(stop 63) The misses of blind batches 269-275, once scored, widened seven entries by the words they were missing.

- library-version-drift: transformers 5's unquoted "X has no attribute y", NumPy 2's expired aliases, an extension built
  for a newer NumPy C API, a config class a newer transformers already registers, a processor it now requires.
- cuda-driver-missing: the nvidia_uvm module that would not load, torch's refusal inside a JSON error with escaped
  newlines (AWS Lambda's errorMessage).
- host-oom-killed: the shell's "Killed" glued to a progress bar without a newline.
- path-not-writable: a program's own "Failed to create directory '<path>': Permission denied".
- model-dir-missing, hub-unreachable: Xinference's words for a gone local path and a download given up.
- python-module-missing: the refusal after a Chinese or Japanese "error:" word in a title.
- cpu-instruction-unsupported: "Illegal instructions", as a router binary's user typed it.
"""

import corpus

# each line alone, named through the pattern given (lines of the held-out batches 269-275 that were missed, verbatim)
WORDINGS = [
    ("library-version-drift", 6, "(APIServer pid=75487) AttributeError: Qwen2Tokenizer has no attribute "
                                 "all_special_tokens_extended. Did you mean: 'num_special_tokens_to_add'?"),
    ("library-version-drift", 6, "PaddleOCR-1.5 AttributeError: TokenizersBackend has no attribute "
                                 "all_special_tokens_extended. Did you mean: 'num_special_tokens_to_add'?"),
    ("library-version-drift", 6, "AttributeError: `np.NaN` was removed in the NumPy 2.0 release. Use `np.nan` "
                                 "instead.. Did you mean: 'nan'?"),
    ("library-version-drift", 6, "RuntimeError: module compiled against API version 0xe but this version of numpy is "
                                 "0xd"),
    ("library-version-drift", 6, "[Bug] ValueError: '<class 'sglang.srt.configs.qwen2_5_vl_config.Qwen2_5_VLConfig'>' "
                                 "is already used by a Transformers model."),
    ("library-version-drift", 6, "TypeError: Received a NoneType for argument video_processor, but a "
                                 "BaseVideoProcessor was expected. #Help me to fix this issue"),
    ("cuda-driver-missing", 18, "nvidia-docker | 2016/07/13 23:40:32 Error: Could not load UVM kernel module"),
    ("cuda-driver-missing", 18, "`{\"errorMessage\": \"\\nFound no NVIDIA driver on your system. Please check that "
                                "you\\nhave an NVIDIA GPU and installed a driver from\\nhttp://www.nvidia.com/Download/"
                                "index.aspx\", \"errorType\": \"AssertionError\"}`"),
    ("host-oom-killed", 31, "OCR                   ━━━╺━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━   8%  1/13 "
                            "0:00:01Killed"),
    ("path-not-writable", 8, "> Error pulling model: Failed to create directory '/var/cache/huggingface/hub/"
                             "models--Qwen--Qwen3-8B-GGUF': Permission denied"),
    ("model-dir-missing", 13, "2. 校验自定义模型路径不存在：ValueError: [address=0.0.0.0:48516, pid=3387590] Invalid "
                              "model URI /data/llm/models/xxx"),
    ("hub-unreachable", 26, "Server error: 503 - [address=0.0.0.0:55036, pid=63] Failed to download model 'glm-4v' "
                            "(size: 9, format: pytorch) after multiple retries"),
    ("python-module-missing", 13, "glm-4.1v-thinking报错：No module named 'qwen_vl_utils'"),
    ("cpu-instruction-unsupported", 0, "Illegal instructions"),
]

# lines left to other entries, or to none
QUIET = [
    # Python's own attribute error names the object in quotes: a None is a bug, not a release
    ("library-version-drift", "AttributeError: 'NoneType' object has no attribute 'generate'"),
    # prose about a class is not Python's refusal (the pattern needs the exception's name before it)
    ("library-version-drift", "Note that Qwen2Tokenizer has no attribute called pad_token_id in this release."),
    # a warning the run goes past
    ("library-version-drift", "WARNING 05-16 10:53:31 [utils.py:12] AttributeError: Qwen2Tokenizer has no attribute "
                              "foo"),
    # a device node is not a folder a program writes (the entry's veto on /dev/ paths other than /dev/shm)
    ("path-not-writable", "Failed to create directory '/dev/dri/by-path': Permission denied"),
    # MLflow's model URIs are not paths
    ("model-dir-missing", "mlflow.exceptions.MlflowException: Invalid model URI 'models:/my-model/1'"),
    # a clock followed by a word about something that was killed earlier, not the shell's report
    ("host-oom-killed", "12:00:01Killed worker 3 after the timeout, restarting"),
    # "cannot"/"could not" forms are another pattern's, and a relative name is not a folder anyone can check
    ("path-not-writable", "Failed to create directory 'models': Permission denied"),
]

(_cases, test_each_wording_is_named_through_its_pattern, test_lines_left_to_others_stay_out_of_the_entry,
 _near) = corpus.family_tests([], WORDINGS, QUIET, [])
