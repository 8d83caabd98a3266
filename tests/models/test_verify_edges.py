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
