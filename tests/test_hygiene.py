"""The secret-hygiene check itself: it must catch a leak, or it proves nothing."""

from __future__ import annotations

import pytest

# The inner runs print secrets on purpose; that is what they check.
pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.shows_secret]


def test_hygiene_fails_a_test_that_prints_a_sandbox_secret(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(
        """
        import logging
        from dict_magics.sandbox import SandboxServer

        def test_prints():
            print(SandboxServer(0).secret_key)

        def test_logs():
            logging.getLogger("x").debug("key=%s", SandboxServer(0).secret_key)

        def test_registered(known_secret):
            import sys
            print("value:", known_secret("hunter2-but-longer"), file=sys.stderr)

        def test_clean():
            print("nothing to see")
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-o", "log_level=DEBUG")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(["*secret hygiene: a secret appeared*"])
    assert "hunter2-but-longer" not in "".join(
        line for line in result.outlines if "secret hygiene" in line
    )


def test_hygiene_sees_rich_displays(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(
        """
        from IPython.display import HTML, display

        def test_html(_shell, known_secret):
            _shell.display_formatter.format(HTML("<b>" + known_secret("s3cret-in-html") + "</b>"))

        def test_clean_html(_shell):
            _shell.display_formatter.format(HTML("<b>fine</b>"))
        """
    )
    # In a subprocess: this process's shell already reports to the outer run's check.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)


_CONFTEST = (
    __import__("pathlib")
    .Path(__file__)
    .with_name("conftest.py")
    .read_text()
    .replace('pytest_plugins = ["pytester"]', "")
)


def test_no_public_object_shows_the_secret_in_its_repr(ip, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every public object a user can hold that was built from the secret hides it."""
    from dict_magics.frontends.magics import DeletionFailedError
    from dict_magics.frontends.panel import DictPanel
    from dict_magics.models.secret import Secret
    from dict_magics.operations import context as session
    from dict_magics.profiles import credentials
    from dict_magics.profiles.status import profile_status
    from dict_magics.sandbox import SandboxServer
    from dict_magics.service.http import SignatureAuth

    with SandboxServer(5) as sandbox:
        secret = sandbox.secret_key
        for name, value in sandbox.env().items():
            monkeypatch.setenv(name, value)
        creds = credentials.load()
        client, _ = session.make_client()
        result = client.delete_entry("1")
        batch = client.delete_entries(["2", "99999"])
        panel = DictPanel(client, profile="default")
        objects = [
            creds,
            client,
            SignatureAuth("AK", secret, str),
            sandbox,
            result,
            batch,
            DeletionFailedError(batch),
            profile_status(),
            credentials.backend_info(),
            panel,
            ip.run_line_magic("dict_status", ""),
        ]
        for obj in objects:
            for text in (repr(obj), str(obj), getattr(obj, "_repr_html_", str)()):
                assert secret not in text, type(obj).__name__
        assert secret not in repr(vars(client)) and secret not in repr(vars(creds))
        assert secret not in repr(Secret(secret))  # str() of it is the value: it is a str
        panel.close()
