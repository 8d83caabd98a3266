"""driver.parse_job: the guide's `minicpmvocr parse` (seed 000 section 5) word for word where the test of
verify does not look: the vLLM config without thinking flags, --model, layout.device, all pages, the env."""

import pytest

from ocrdeploy.sdk.driver import SERVED_NAME, layout_device, parse_job


def test_the_vllm_form_as_the_guide_writes_it():
    job = parse_job("/w/sdk-env/bin/minicpmvocr", "/w/minicpmvocr-sdk", "dspark", ["http://127.0.0.1:18499"],
                    "/d/in.pdf", "/d/out.md", layout_dir="/w/models/PP-DocLayoutV3_infer", run_tag="t1")
    assert job.argv == ["/w/sdk-env/bin/minicpmvocr", "parse", "--config",
                        "/w/minicpmvocr-sdk/configs/backends/vllm.yaml", "--server-url", "http://127.0.0.1:18499",
                        "--model", SERVED_NAME, "--set", "input.limit=1", "--set", "run.run_tag=t1",
                        "--input", "/d/in.pdf", "--output", "/d/out.md"]
    assert SERVED_NAME == "minicpm-ocr"
    assert job.env["OCR_LAYOUT_MODEL_DIR"] == "/w/models/PP-DocLayoutV3_infer"
    assert job.env["PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK"] == "True"
    assert job.run_tag == "t1" and job.output == "/d/out.md"


def test_all_pages_a_served_model_and_the_layout_device():
    job = parse_job("m", "/r", "llamacpp", ["http://127.0.0.1:8080"], "/i.pdf", "/o.md", layout_dir="/l",
                    limit_one=False, layout_device="cuda:1", model="/w/models/MiniCPM-OCR-1.0", run_tag="t")
    a = job.argv
    assert a[a.index("--config") + 1] == "/r/configs/backends/llamacpp.yaml"
    assert a[a.index("--model") + 1] == "/w/models/MiniCPM-OCR-1.0"
    assert [a[i + 1] for i, x in enumerate(a) if x == "--set"] == ["layout.device=cuda:1", "run.run_tag=t"]


@pytest.mark.parametrize("kw", [{"run_root": "runs"}, {"layout_dir": "models/L"}])
def test_every_path_is_absolute(kw):
    args = {"layout_dir": "/l", **kw}
    with pytest.raises(ValueError, match="must be absolute"):
        parse_job("m", "/r", "dspark", ["u"], "/i.pdf", "/o.md", **args)


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown backend 'sglang'"):
        parse_job("m", "/r", "sglang", ["u"], "/i.pdf", "/o.md", layout_dir="/l")


def gpu(index, free, processes=()):
    return {"index": index, "name": "L4", "memory_total_mib": 23034, "memory_free_mib": free,
            "processes": list(processes)}


def test_the_layout_goes_to_a_free_card_else_the_one_with_most_free_memory():
    facts = {"gpu": {"gpus": [gpu(0, 20000, [{"pid": 1}]), gpu(1, 9000), gpu(2, 12000)]}}
    assert layout_device(facts) == "cuda:2"
    facts = {"gpu": {"gpus": [gpu(0, 2000, [{"pid": 1}]), gpu(1, 5000, [{"pid": 2}])]}}
    assert layout_device(facts) == "cuda:1"
    assert layout_device({"gpu": {"gpus": []}}) is None


def test_a_fraction_at_the_start_of_the_math_is_checked_for_its_places():
    """The answer's math may open with the \\frac (the `x =` elsewhere): its numerator and denominator are judged
    all the same, a swapped fraction fails and a right one scores full."""
    from ocrdeploy.sdk.driver import check_output, formula_parts

    right = "$$\\frac{a + b}{2c}$$\n\nwhere $x =$ the mean."
    assert formula_parts(right)["score"] == 1.0 and formula_parts(right)["placed"] == []
    swapped = "$$\\frac{2c}{a + b}$$\n\nwhere $x =$ the mean."
    f = formula_parts(swapped)
    assert f["missing"] == [] and f["score"] == 8 / 13      # every token, none of a + b / 2 c in its place
    check, ok, detail = check_output(swapped, "formula")[-1]
    assert check == "the formula's tokens" and not ok and "'a' not in the numerator" in detail


def test_a_missing_list_names_eight_and_counts_the_rest():
    from ocrdeploy.sdk.driver import _missing

    assert _missing([f"w{i}" for i in range(8)]) == ", ".join(repr(f"w{i}") for i in range(8))
    assert _missing([f"w{i}" for i in range(10)]) == ", ".join(repr(f"w{i}") for i in range(8)) + " and 2 more"
    assert _missing([]) == ""


def test_readable_text_needs_eight_words_of_three_letters_or_more():
    """The text page's shape check at its edge: eight words (and 40 letters, half the characters) pass, seven
    do not."""
    from ocrdeploy.sdk.driver import check_output

    eight = "Sphinx quartz judges vowing boxer liquid mystery fjords"
    seven = "Sphinx quartz judges vowing boxer liquid mysteriousness"
    readable = lambda md: dict((c, ok) for c, ok, _ in check_output(md, "text"))["readable text on the text page"]
    assert sum(ch.isalpha() for ch in seven) >= 40
    assert readable(eight) and not readable(seven)
