"""models/hostside.py's copy_tree (--from), run here on local paths (test_hostside.py is services' name: the basenames must differ, tests has no packages)."""

import pytest

from ocrdeploy.models import hostside


@pytest.mark.parametrize("src", ["missing", "a-file"])
def test_a_from_path_that_is_no_directory_is_the_failure_named(tmp_path, src):
    """--from a path that is not there (or a file) copied nothing without a word, and the model then failed
    as '<dest>: not a directory', which names the destination, not the mistake."""
    (tmp_path / "a-file").write_text("x")
    source = str(tmp_path / src)
    dest = str(tmp_path / "models" / "MiniCPM-OCR-1.0")
    with pytest.raises(FileNotFoundError, match=f"^--from {source}: no such directory on this host$"):
        hostside.copy_tree(source, dest, "copy:MiniCPM-OCR-1.0")
    (result,) = hostside.run({"models": [{"spec": {"name": "MiniCPM-OCR-1.0", "kind": "main", "repo": None,
                                                   "required": ["config.json"], "weight": None},
                                          "dest": dest, "source": "local", "from": source}],
                              "cache": str(tmp_path / "cache.json")})
    assert result["ok"] is False and result["problems"] == [
        f"FileNotFoundError: --from {source}: no such directory on this host"]
