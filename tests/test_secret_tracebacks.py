"""Verbose tracebacks print every frame's local variables: the secret must not be among them."""

from __future__ import annotations

import pytest
from IPython.utils.capture import capture_output

from dict_magics.models.secret import Secret

CELLS = [
    "from dict_magics.frontends.panel import DictPanel\nDictPanel.from_profile()",
    "from dict_magics.profiles import credentials\ncredentials.load()",
    "from dict_magics.operations.context import make_client\nmake_client(timeout=float('nan'))",
]


@pytest.mark.parametrize("cell", CELLS)
def test_verbose_tracebacks_hide_the_secret(
    ip, monkeypatch: pytest.MonkeyPatch, known_secret, cell: str
) -> None:
    secret = known_secret("tb-secret-0123456789")
    monkeypatch.setenv("DICT_MAGICS_ACCESS_KEY", "AK-traceback")
    monkeypatch.setenv("DICT_MAGICS_SECRET_KEY", secret)
    # A plain-http remote base URL: refused after the secret has been read.
    monkeypatch.setenv("DICT_MAGICS_BASE_URL", "http://dictionary.example.com")
    if "nan" in cell:
        monkeypatch.setenv("DICT_MAGICS_BASE_URL", "https://dictionary.example.com")
    ip.run_line_magic("xmode", "Verbose")
    try:
        with capture_output() as captured:
            ip.run_cell(cell)
    finally:
        ip.run_line_magic("xmode", "Context")
    shown = captured.stdout + captured.stderr
    assert "Traceback" in shown or "Error" in shown, shown
    assert "secret hidden" in shown or "plain http" in shown or "positive" in shown
    assert secret not in shown


def test_secret_is_a_str_that_hides_its_repr() -> None:
    value = Secret("abc123")
    assert value == "abc123" and value.encode() == b"abc123" and isinstance(value, str)
    assert repr(value) == "<secret hidden>" and "abc123" not in repr({"k": value})


@pytest.mark.parametrize("source", ["env", "keyring"])
def test_no_frame_of_load_holds_the_plain_secret(
    memory_keyring, monkeypatch: pytest.MonkeyPatch, known_secret, source: str
) -> None:
    """``pytest -l``, ``%debug`` and ``capture_locals`` show every local of every frame."""
    import traceback

    from dict_magics.errors import InvalidBaseUrlError
    from dict_magics.profiles import credentials

    secret = known_secret("locals-secret-0123456789")
    # A plain-http remote base URL: refused after every item, the secret too, has been read.
    items = {"base_url": "http://dictionary.example.com", "access_key": "AK-locals-1"}
    for item, value in {**items, "secret_key": secret}.items():
        if source == "env":
            monkeypatch.setenv(f"DICT_MAGICS_{item.upper()}", value)
        else:
            memory_keyring.set_password("dict-magics", f"default:{item}", value)
    with pytest.raises(InvalidBaseUrlError) as caught:
        credentials.load()
    error = caught.value
    assert error.__traceback__ is not None
    below_this_test = error.__traceback__.tb_next  # this test's own frame holds the secret
    shown = "".join(
        traceback.TracebackException(
            type(error), error, below_this_test, capture_locals=True
        ).format()
    )
    assert "in load" in shown and "values = " in shown, shown
    assert secret not in shown
