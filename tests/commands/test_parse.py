"""commands/parse.py: what `inv parse` refuses before it reaches a host."""

import pytest

from ocrdeploy.commands.parse import run_parse
from ocrdeploy.errors import UsageError

ARGS = dict(host="nosuchhost.invalid", inventory=None, backend=None, server_urls=None, all_pages=False,
            run_root=None, as_json=False, accept_new_host_keys=False, connect_timeout=None)


@pytest.mark.parametrize("inp,out", [("/data/doc.pdf", "/data/doc.pdf"), ("/data/doc.pdf", "/data/./x/../doc.pdf"),
                                     ("/data//doc.pdf", "/data/doc.pdf")])
def test_an_output_that_is_the_input_is_refused(inp, out):
    """It went to the host, where the SDK's Markdown would be written over the document."""
    with pytest.raises(UsageError) as exc:
        run_parse(input_path=inp, output=out, **ARGS)
    assert str(exc.value).startswith(f"--output {out}: the same file as --input")


def test_another_output_goes_on_to_the_host():
    with pytest.raises(UsageError) as exc:          # the made-up host: past the option checks
        run_parse(input_path="/data/doc.pdf", output="/data/doc.md", **ARGS)
    assert "nosuchhost.invalid" in str(exc.value)
