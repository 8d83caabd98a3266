"""(round trc54, the lead's stop-54 ruling) transformers' own refusal to run a checkpoint's remote code without
trust_remote_code is model-arch-unknown (pattern 7), as held-out batches 144 and 156 label it and as pattern 6 already
names vLLM's re-raise of the same refusal. Its wordings, each held by a real corpus case:

- configuration_auto's (and auto_factory's, tokenization_auto's) old "Loading <X> requires you to execute the
  configuration file in that repo on your local machine ...";
- dynamic_module_utils' timeout error "Loading this model requires you to execute custom code contained in the model
  repository on your local machine ...";
- resolve_trust_remote_code's "ValueError: The repository for <X> contains custom code which must be executed to
  correctly load the model ..." (the name in backticks, or none in a title).

What stays out: the interactive prompt ("... You can avoid this prompt in future ...", "Do you wish to run the custom
code? [y/N]"), answered or alone; datasets' own refusal of a dataset's loading script ("... load the dataset", "Loading
this dataset requires ..."), a real failure no entry names; a pull request's prose quoting the prompt; a source line
quoting the format string.
"""

import functools

import pytest

import corpus

SCAN = corpus.Scanner()
CORPUS = corpus.load()

_log = functools.partial(corpus.case_log, CORPUS)
_found = SCAN.findings

REFUSALS = ["EleutherAI/lm-evaluation-harness/issues/1168", "h2oai/h2o-llmstudio/issues/560",
            "OpenGVLab/InternVL/issues/1244", "erfanzar/EasyDeL/issues/94", "vllm-project/vllm-omni/issues/4975"]
PROMPT_AND_PROSE = ["Blaizzy/mlx-vlm/issues/72", "exo-explore/exo/pull/573", "FlagOpen/FlagEmbedding/pull/1378"]
DATASETS = ["EleutherAI/lm-evaluation-harness/issues/2126", "EleutherAI/lm-evaluation-harness/issues/2222"]
# the wordings one line each (the corpus cases' lines, and the held-out labels' shapes: pydantic's "Value error," under
# vLLM's ModelConfig, Xinference's "[address=..., pid=...]", a terminal wrap inside the file's kind, a lower-cased report)
WORDINGS = [
    "ValueError: Loading core42/jais-13b requires you to execute the configuration file in that repo on your local "
    "machine. Make sure you have read the code there to avoid malicious use, then set the option `trust_remote_code=True` "
    "to remove this error.",
    "ValueError: Loading this model requires you to execute custom code contained in the model repository on your local "
    "machine. Please set the option `trust_remote_code=True` to permit loading of this model.",
    "ValueError: The repository `/data1/models/InternVL3-1B` contains custom code which must be executed to correctly load "
    "the model. You can inspect the repository content at https://hf.co//data1/models/InternVL3-1B.",
    "(APIServer pid=124)   Value error, The repository /models/bundle/model contains custom code which must be executed "
    "to correctly load the model. You can inspect the repository content at /models/bundle/model .",
    "ValueError: [address=0.0.0.0:51929, pid=36115] Loading /root/.cache/reranker requires you to execute the "
    "configuration file in that repo on your local machine.",
    "ValueError: Loading /home/u/ChatGLM3-6b requires you to execute the conf                iguration file in that repo "
    "on your local machine. Make sure you have read the code there to avoid malicious u",
    "valueerror: loading internvl2-8b/ requires you to execute the configuration file in that repo on your local machine.",
    "Failed to load: The repository for org/model contains custom code which must be executed to correctly load the model. "
    "Please pass the argument `trust_remote_code=True` to allow custom code to be run.",
]
QUIET = [
    # the prompt's lines alone
    "The repository for org/model contains custom code which must be executed to correctly load the model. You can "
    "inspect the repository content at https://hf.co/org/model.",
    "You can avoid this prompt in future by passing the argument `trust_remote_code=True`.",
    "Do you wish to run the custom code? [y/N] ",
    # datasets' words
    "ValueError: The repository for super_glue contains custom code which must be executed to correctly load the "
    "dataset. You can inspect the repository content at https://hf.co/datasets/super_glue.",
    "ValueError: Loading this dataset requires you to execute custom code contained in the dataset repository on your "
    "local machine. Please set the option `trust_remote_code=True` to permit the loading of this dataset.",
    # source lines quoting the format strings
    '                    f"Loading {pretrained_model_name_or_path} requires you to execute the modeling file in that repo "',
    "                raise ValueError('Loading this model requires you to execute the modeling file in that repo on your "
    "local machine. Make sure you have read the code there to avoid malicious use')",
]


def _item(key, thread):
    return next(i for i in CORPUS[key] if thread in i["source"])


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread", REFUSALS)
def test_transformers_remote_code_refusal_is_model_arch_unknown(engine, thread):
    for case in [c for c in CORPUS["cases"] if c.get("entry") == "model-arch-unknown" and thread in c["source"]]:
        assert 7 in SCAN.alone(case["log"], engine, "model-arch-unknown", thread)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line", WORDINGS)
def test_each_wording_of_the_refusal_is_named_through_pattern_7(engine, line):
    assert 7 in SCAN.alone(line + "\n", engine, "model-arch-unknown")


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("line", QUIET)
def test_the_prompt_datasets_words_and_source_lines_are_not_model_arch_unknown(engine, line):
    assert "model-arch-unknown" not in _found(line + "\n", engine)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread", PROMPT_AND_PROSE)
def test_the_prompt_answered_or_alone_and_prose_stay_quiet(engine, thread):
    assert "model-arch-unknown" not in _found(_item("near_misses", thread)["log"], engine)


@pytest.mark.parametrize("engine", corpus.ENGINES)
@pytest.mark.parametrize("thread", DATASETS)
def test_datasets_own_refusal_is_reported_unrecognised_not_named(engine, thread):
    item = _item("unrecognised", thread)
    assert corpus.judge_unrecognised(item, SCAN.scan(item, engine)) is None


def test_pattern_7_is_its_own_context_and_has_its_literals():
    """The entry's rule needs a context line (preceded_by); pattern 7's twin there lets the refusal's line be its own, as
    patterns 4 and 6 do, and every match holds one of the two literals the prefilter looks for."""
    rule = next(r for r in SCAN.rules if r.id == "model-arch-unknown")
    assert rule.patterns[7] in list(rule.preceded_by) and rule.context_on_line
    assert {"requires you to execute ", "which must be executed to correctly"} <= set(rule.literals)
