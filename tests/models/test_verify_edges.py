"""hostside.verify on a model directory at the edges of its checks: sizes that differ either way, digests
written in capitals, a digest of the wrong length, an empty required file, weights nothing vouches for."""

import hashlib
import json
import os

import pytest

from ocrdeploy.models import hostside

SPEC = {"name": "MiniCPM-OCR-1.0", "kind": "main", "required": ["config.json"], "weight": "model.safetensors"}


def model_dir(tmp_path, manifest=None):
    d = tmp_path / "m"
    d.mkdir()
    weight = os.urandom(50_000)
    (d / "model.safetensors").write_bytes(weight)
    (d / "config.json").write_text("{}")
    digest = hashlib.sha256(weight).hexdigest()
    if manifest is not None:
        (d / "release_manifest.json").write_text(json.dumps(manifest(digest)))
    return d, digest


def test_a_file_longer_than_the_hub_says_is_wrong_too(tmp_path):
    d, digest = model_dir(tmp_path, lambda h: {"weight_sha256": h})
    size = (d / "model.safetensors").stat().st_size
    res = hostside.verify(SPEC, str(d), sizes={"model.safetensors": size - 1}, move_bad=False)
    assert not res["ok"]
    assert f"model.safetensors is truncated or wrong: {size} bytes, the hub says {size - 1}" in res["problems"]
    assert hostside.verify(SPEC, str(d), sizes={"model.safetensors": size}, move_bad=False)["ok"]


@pytest.mark.parametrize("where", ["weight_sha256", "files", "hub"])
def test_a_digest_in_capitals_is_the_same_digest(tmp_path, where):
    if where == "hub":
        d, digest = model_dir(tmp_path)
        res = hostside.verify(SPEC, str(d), lfs={"model.safetensors": digest.upper()}, move_bad=False)
    else:
        d, digest = model_dir(tmp_path, lambda h: {"weight_sha256": h.upper()} if where == "weight_sha256"
                              else {"files": {"model.safetensors": h.upper()}})
        res = hostside.verify(SPEC, str(d), move_bad=False)
    assert res["ok"], res["problems"]
    assert res["compared"] == ["model.safetensors"] and (d / "model.safetensors").exists()


@pytest.mark.parametrize("extra", ["0", "00"])
def test_a_digest_longer_than_64_hex_digits_is_no_sha256(tmp_path, extra):
    d, _ = model_dir(tmp_path, lambda h: {"weight_sha256": h + extra})
    res = hostside.verify(SPEC, str(d), move_bad=False)
    assert not res["ok"] and any("weight_sha256 must be a sha256 (64 hex digits)" in p for p in res["problems"])


def test_an_empty_required_file_is_a_problem(tmp_path):
    d, _ = model_dir(tmp_path, lambda h: {"weight_sha256": h})
    (d / "config.json").write_bytes(b"")
    res = hostside.verify(SPEC, str(d), move_bad=False)
    assert res["problems"] == ["required file config.json is empty"]


@pytest.mark.parametrize("kind", ["main", "draft", "deepseek"])
def test_weights_nothing_vouches_for_are_not_verified_for_every_kind_that_has_them(tmp_path, kind):
    d, _ = model_dir(tmp_path)
    res = hostside.verify({**SPEC, "kind": kind}, str(d), move_bad=False)
    assert not res["ok"] and res["problems"][0].startswith("nothing to verify the weights against")


@pytest.mark.parametrize("n,said", [(1023, "1023 bytes"), (1024, "1.0 KiB"), (1 << 20, "1.0 MiB"),
                                    (1 << 30, "1.0 GiB"), ((1 << 30) - 1, "1024.0 MiB")])
def test_sizes_change_unit_at_exactly_one_unit(n, said):
    assert hostside.human_bytes(n) == said


def _as_job(name):
    """The spec a ModelStep hands the host (steps.ModelStep.job), from the catalog."""
    from ocrdeploy.models.catalog import MODELS
    m = MODELS[name]
    return {"name": m.name, "kind": m.kind, "required": list(m.required), "weight": m.weight}


def test_weight_sha256_is_about_the_file_the_spec_names_else_model_safetensors(tmp_path):
    """weight_sha256 checks the spec's weight file; DeepSeek-OCR's spec names none, so model.safetensors."""
    d, digest = model_dir(tmp_path, lambda h: {"weight_sha256": h})
    res = hostside.verify(_as_job("DeepSeek-OCR"), str(d), move_bad=False)
    assert _as_job("DeepSeek-OCR")["weight"] is None
    assert res["ok"], res["problems"]
    assert res["files"]["model.safetensors"]["checked_against"] == ["release_manifest.json weight_sha256"]
    # a spec naming another weight file: the digest is that file's, and model.safetensors is not its subject
    os.rename(d / "model.safetensors", d / "weights.bin")
    res = hostside.verify({**SPEC, "weight": "weights.bin"}, str(d), move_bad=False)
    assert res["ok"], res["problems"]
    assert res["compared"] == ["weights.bin"]


def test_a_manifest_of_exactly_its_bound_is_read(tmp_path):
    """MANIFEST_MAX is the most a manifest may be, not one byte less: one padded to exactly it is read whole."""
    d, digest = model_dir(tmp_path)
    def manifest(size):           # a JSON object of exactly `size` bytes, its last byte the closing brace
        body = json.dumps({"weight_sha256": digest, "notes": ""})
        return body[:-2] + "x" * (size - len(body)) + body[-2:]
    (d / "release_manifest.json").write_text(manifest(hostside.MANIFEST_MAX))
    assert (d / "release_manifest.json").stat().st_size == hostside.MANIFEST_MAX
    res = hostside.verify(SPEC, str(d), move_bad=False)
    assert res["ok"], res["problems"]
    (d / "release_manifest.json").write_text(manifest(hostside.MANIFEST_MAX + 1))
    res = hostside.verify(SPEC, str(d), move_bad=False)
    assert not res["ok"] and "more than the 4.0 MiB a manifest may be" in res["problems"][0]


def test_every_bad_file_is_moved_aside_under_its_own_digest(tmp_path):
    """Two files that fail in one run are both moved aside (the quarantine directory made once, then reused),
    each named by its own digest, so a second bad copy of the same file never replaces the first."""
    weight2 = os.urandom(1000)
    d, digest = model_dir(tmp_path, lambda h: {"weight_sha256": "0" * 64,
                                               "files": {"extra.safetensors": "1" * 64}})
    (d / "extra.safetensors").write_bytes(weight2)
    res = hostside.verify(SPEC, str(d))
    assert not res["ok"]
    q = d / hostside.QUARANTINE
    assert sorted(res["quarantined"]) == sorted([
        str(q / f"model.safetensors.{digest[:12]}.bad"),
        str(q / f"extra.safetensors.{hashlib.sha256(weight2).hexdigest()[:12]}.bad")])
    assert not (d / "model.safetensors").exists() and not (d / "extra.safetensors").exists()
    # another bad weight later: moved aside beside the first, which stays
    other = os.urandom(2000)
    (d / "model.safetensors").write_bytes(other)
    res = hostside.verify(SPEC, str(d))
    assert res["quarantined"][0] == str(q / f"model.safetensors.{hashlib.sha256(other).hexdigest()[:12]}.bad")
    assert (q / f"model.safetensors.{digest[:12]}.bad").exists() and len(list(q.iterdir())) == 3


def test_a_layout_dir_without_its_weights_is_missing_them_not_a_safetensors_dir(tmp_path):
    """Only a directory with safetensors and no .pdiparams is told it is the wrong kind of model; a Paddle
    directory missing inference.pdiparams is told that file is missing."""
    d = tmp_path / "layout"
    d.mkdir()
    (d / "inference.json").write_text("{}")
    (d / "inference.yml").write_text("a: 1\n")
    res = hostside.verify(_as_job("PP-DocLayoutV3_infer"), str(d), move_bad=False)
    assert res["problems"] == ["missing required file inference.pdiparams"]
