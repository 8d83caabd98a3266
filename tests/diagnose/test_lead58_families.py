"""(stop 58, the lead) hub-unreachable's urllib3 pattern by its key tokens: the hub hosts its other patterns name.

urllib3 2.x says "Failed to resolve '%s' (%s)" (connection.py's NameResolutionError) when DNS fails; the pattern had
only the Hugging Face and ModelScope hosts, while every other hub-unreachable pattern also names Paddle's model hosts
on bcebos and AI Studio, where PaddleOCR, PaddleX and MinerU fetch their models.  Batch 215 held two such runs offline
(PPOCRLabel, MinerU#466, the second a title cut at the host).  A host that is no hub (a service's name, a site) stays
the client's or the safety net's.
"""

import pytest

import corpus

SCAN = corpus.Scanner()

NAMED = [
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
]
NOT_HUB = [
    "Failed to resolve 'ollama'",
    "Failed to resolve 'huggingface.co' in the example below, so we mock the hub",
    "Failed to resolve 'bcebos.com.example.org' ([Errno -2] Name or service not known)",
    "Failed to resolve 'example.com' ([Errno -3] Temporary failure in name resolution)",
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line", NAMED)
def test_a_hub_host_that_does_not_resolve_is_hub_unreachable(engine, line):
    rep = SCAN.scan({"log": line + "\n"}, engine)
    assert [f["id"] for f in rep["findings"]] == ["hub-unreachable"], rep


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line", NOT_HUB)
def test_another_host_or_a_sentence_is_not(engine, line):
    rep = SCAN.scan({"log": line + "\n"}, engine)
    assert "hub-unreachable" not in {f["id"] for f in rep["findings"]}, rep
