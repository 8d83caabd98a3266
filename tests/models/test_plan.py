"""models/plan.py: where each model comes from, and the URLs it is given checked before anything runs."""

import pytest

from ocrdeploy.errors import UsageError
from ocrdeploy.models.plan import build_models_plan


@pytest.mark.parametrize("kwargs,says", [
    ({"layout_url": "notaurl"}, "--layout-url: 'notaurl' is not an http(s):// or file:// URL"),
    ({"layout_url": "http://[::1"}, "--layout-url: 'http://[::1' is not an http(s)"),
    ({"layout_url": "notaurl", "source": "auto"}, "--layout-url: 'notaurl' is not"),
    ({"endpoint": "hf-mirror.com"}, "--endpoint: 'hf-mirror.com' is not an http(s)"),
    ({"endpoint": "http://[::1"}, "--endpoint: 'http://[::1' is not"),
])
def test_a_bad_url_option_is_one_line_naming_the_option(kwargs, says):
    with pytest.raises(UsageError) as exc:
        build_models_plan({}, **kwargs)
    assert says in str(exc.value)


def test_a_bad_url_var_is_named_as_the_inventory_var():
    with pytest.raises(UsageError) as exc:
        build_models_plan({"layout_url": "ftp://x/l.tar"})
    assert "inventory var layout_url: 'ftp://x/l.tar' is not" in str(exc.value)


def test_a_model_named_twice_is_one_step():
    """--model X --model X ended in a ValueError traceback (plan models: duplicate step names)."""
    plan = build_models_plan({}, names=["MiniCPM-OCR-1.0", "MiniCPM-OCR-1.0"])
    names = [s.name for s in plan.steps]
    assert names.count("model:MiniCPM-OCR-1.0") == 1
