"""(stop 58, the lead) hub-unreachable's urllib3 pattern by its key tokens: the hub hosts its other patterns name.

urllib3 2.x says "Failed to resolve '%s' (%s)" (connection.py's NameResolutionError) when DNS fails; the pattern had
only the Hugging Face and ModelScope hosts, while every other hub-unreachable pattern also names Paddle's model hosts
on bcebos and AI Studio, where PaddleOCR, PaddleX and MinerU fetch their models.  Batch 215 held two such runs offline
(PPOCRLabel, MinerU#466, the second a title cut at the host).  A host that is no hub (a service's name, a site) stays
the client's or the safety net's.
"""

import corpus

# hub-unreachable p18 (urllib3's NameResolutionError), each line alone; the lines after it leave the entry out
WORDINGS = [("hub-unreachable", 18, line) for line in (
    "离线环境下部署，报错：Failed to resolve 'paddleocr.bj.bcebos.com'",
    "NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f2c>: Failed to resolve "
    "'paddleocr.bj.bcebos.com' ([Errno -2] Name or service not known)\")",
    "Failed to resolve 'paddle-model-ecology.bj.bcebos.com' ([Errno 11001] getaddrinfo failed)",
    "Failed to resolve 'aistudio.baidu.com' ([Errno -3] Temporary failure in name resolution)",
    "Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name resolution)",
    "Failed to resolve \\'cdn-lfs.hf.co\\' ([Errno 8] nodename nor servname provided, or not known)",
    "Failed to resolve 'huggingface.co'",
    "Failed to resolve 'huggingface.co'.",
    "Failed to resolve 'gitea-cdn.baidu-tech.com' ([Errno -3] Temporary failure in name resolution)",
)]
QUIET = [("hub-unreachable", line) for line in (
    "Failed to resolve 'ollama'",
    "Failed to resolve 'huggingface.co' in the example below, so we mock the hub",
    "Failed to resolve 'bcebos.com.example.org' ([Errno -2] Name or service not known)",
    "Failed to resolve 'example.com' ([Errno -3] Temporary failure in name resolution)",
)]

# the family's two checks from corpus.family_tests (it has no corpus case or near-miss of its own: the two unbound
# checks are not collected)
_, test_each_wording_is_named_through_its_pattern, test_lines_left_to_others_stay_out_of_the_entry, _ = \
    corpus.family_tests([], WORDINGS, QUIET, [])
