"""pip_index.py's edges beside test_pip_index.py: a file:// index (a local wheelhouse has no host name) is an
index like any other, and an http one without a host is not."""

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.provision.pip_index import pip_options


def test_a_local_wheelhouse_is_an_index():
    assert pip_options({"pip_index_url": "file:///opt/wheelhouse/simple"}).args == \
        ["--index-url", "file:///opt/wheelhouse/simple"]
    with pytest.raises(UsageError, match="inventory var pip_index_url: 'http:///simple' is not"):
        pip_options({"pip_index_url": "http:///simple"})
