"""sdk.twoend's judgement of the two feat-ocr scripts' output (the guide's section 7), on the lines they print."""

from ocrdeploy.sdk import twoend

OTSL = "<otsl><ched>Model<ched>Params<nl><fcel>MiniCPM-OCR 1.0<fcel>1.3B<nl></otsl>"
TF = "MiniCPMOCRForConditionalGeneration parameters: 1.300B\n{counts}\n" + OTSL
VLLM = "INFO vLLM engine ready\n{counts}\n" + OTSL
COUNTS = "prompt 1975 tokens, vision 1936 tokens, generation 284 tokens, output 677 characters"


def test_both_ends_agreeing_pass():
    assert twoend.compare(TF.format(counts=COUNTS), VLLM.format(counts=COUNTS)) == []


def test_no_prompt_count_on_either_side_is_not_equal_counts():
    """Neither side printed a prompt count: nothing shows the prompts were the same, so it fails."""
    problems = twoend.compare(TF.format(counts="output 677 characters"), VLLM.format(counts="output 677 characters"))
    assert problems == ["prompt tokens transformers=None vllm=None"]


def test_a_prompt_count_on_one_side_only_fails():
    assert twoend.compare(TF.format(counts=COUNTS), VLLM.format(counts="")) == [
        "prompt tokens transformers=1975 vllm=None"]
    assert twoend.compare(TF.format(counts=""), VLLM.format(counts=COUNTS)) == [
        "prompt tokens transformers=None vllm=1975"]
