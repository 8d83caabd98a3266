"""(round t95) hub-gated-repo beside hub-unreachable and unauthorized-401: the hub ANSWERED and refused a gated repository
to this token (huggingface_hub's GatedRepoError, the hub's own "Access to model X is restricted", transformers' OSError,
a raw client's 401/403 for a repository path of the hub) is a failure of its own; the hub not answering stays
hub-unreachable and a client's key refused by the inference server stays unauthorized-401. Each pattern is held by its
real corpus logs, so dropping one (or an alternative) fails here. Real corpus logs only."""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()


_log = functools.partial(corpus.case_log, CORPUS)
_found = SCAN.findings


# (thread, pattern): each alternative of each pattern by a thread of its own, two or more tools per pattern
GATED = [
    # huggingface_hub's GatedRepoError with its status / "Cannot access gated repo for url <url>"
    ("BAAI-DCAI/SpatialBot/issues/4", 0), ("vllm-project/semantic-router/issues/817", 0),
    ("ml-explore/mlx-examples/issues/759", 0),
    # the hub's message: "is restricted." / "is restricted and you are not in the authorized list" / "Repo model X is gated."
    ("google-research/timesfm/issues/33", 1), ("hiyouga/LlamaFactory/issues/3403", 1),
    ("ariG23498/gemma3-object-detection/issues/5", 1), ("kyegomez/NeoSapiens/issues/3", 1),
    ("LetheSec/HuggingFace-Download-Accelerator/issues/4", 1),
    # transformers' OSError
    ("Aratako/T5Gemma-TTS/issues/6", 2), ("PromtEngineer/localGPT/issues/799", 2),
    # requests' 401/403 for a repository path of the hub or its mirror (resolve/, api/models/.../revision/)
    ("hyperonym/basaran/issues/289", 3), ("akx/ggify/issues/5", 3), ("ggml-org/llama.cpp/issues/5236", 3),
    ("McGill-NLP/llm2vec/issues/36", 3), ("LetheSec/HuggingFace-Download-Accelerator/issues/39", 3),
    # hf-hub's Rust clients: ureq's "<url>: status code 401", mistral.rs's Status(403, Response[...])
    ("huggingface/candle/issues/418", 4), ("EricLBuehler/mistral.rs/issues/621", 4),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,pattern", GATED)
def test_a_gated_repository_refused_is_hub_gated_repo(engine, thread, pattern):
    assert pattern in SCAN.alone(_log("hub-gated-repo", thread), engine, "hub-gated-repo")


# (thread, the head of one line of its log, pattern): each ALTERNATIVE alone, its line scanned by itself, so that dropping
# or breaking one alternative fails here even where the rest of the log still names the entry
ALTERNATIVES = [
    ("ml-explore/mlx-examples/issues/759", "GatedRepoError: 401", 0),
    ("vllm-project/semantic-router/issues/817", "huggingface_hub.errors.GatedRepoError: 401", 0),
    ("google-research/timesfm/issues/33", "Cannot access gated repo for url", 0),
    ("hiyouga/LlamaFactory/issues/3403", "Cannot access gated repo for url", 0),
    ("google-research/timesfm/issues/33", "Access to model google/timesfm", 1),
    ("BAAI-DCAI/SpatialBot/issues/4", "Access to model RussRobin", 1),
    ("hiyouga/LlamaFactory/issues/3403", "Access to model meta-llama", 1),
    ("ariG23498/gemma3-object-detection/issues/5", "Access to model google/gemma-3-4b-pt", 1),
    ("kyegomez/NeoSapiens/issues/3", "Repo model meta-llama", 1),
    ("LetheSec/HuggingFace-Download-Accelerator/issues/4", "Repo model meta-llama", 1),
    ("Aratako/T5Gemma-TTS/issues/6", "OSError: You are trying", 2),
    ("PromtEngineer/localGPT/issues/799", "OSError: You are trying", 2),
    ("hyperonym/basaran/issues/289", "requests.exceptions.HTTPError: 401", 3),
    ("akx/ggify/issues/5", "requests.exceptions.HTTPError: 401", 3),
    ("ggml-org/llama.cpp/issues/5236", "requests.exceptions.HTTPError: 403", 3),
    ("McGill-NLP/llm2vec/issues/36", "HTTPError: 403", 3),
    ("LetheSec/HuggingFace-Download-Accelerator/issues/39", "requests.exceptions.HTTPError: 403", 3),
    ("huggingface/candle/issues/418", "Error: request error:", 4),
    ("EricLBuehler/mistral.rs/issues/621", "Could not get file", 4),
]


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread,head,pattern", ALTERNATIVES)
def test_each_alternative_names_the_entry_on_its_own_line(engine, thread, head, pattern):
    line = next(l for l in _log("hub-gated-repo", thread).splitlines() if l.lstrip().startswith(head))
    assert pattern in SCAN.alone(line + "\n", engine, "hub-gated-repo", note=line), line


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("entry,thread", [
    ("hub-unreachable", "PaddlePaddle/PaddleX/issues/5159"),      # the hub's CDN not answering: the network
    ("unauthorized-401", "popjane/free_chatgpt_api/issues/3"),   # a client's key refused by an API server
    ("unauthorized-401", "wandb/openui/issues/199"),
])
def test_the_other_hub_and_key_failures_keep_their_entries(engine, entry, thread):
    found = _found(_log(entry, thread), engine)
    assert entry in found and "hub-gated-repo" not in found, found


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_a_401_from_the_hub_overrides_the_client_key_entry(engine):
    # requests' "401 Client Error: Unauthorized for url" reads as unauthorized-401 by its words; for a hub repository
    # path it is the gated repository, and unauthorized-401 is dropped on that line
    found = _found(_log("hub-gated-repo", "hyperonym/basaran/issues/289"), engine)
    assert "unauthorized-401" not in found, found


@pytest.mark.parametrize("engine", corpus.ENGINES)
def test_ollamas_runner_killed_by_sigkill_is_host_oom_killed(engine):
    # (the lead's decision) Go's "signal: killed" for Ollama's runner: the kernel's (or jetsam's) memory kill
    assert 23 in SCAN.alone(_log("host-oom-killed", "ollama/ollama/issues/10739"), engine, "host-oom-killed")
