"""Every magic's help (``%dict_delete?``) ends with examples a user can copy into a cell.

The examples are read from the help IPython shows, checked against the magic's own argument
parser, and the ones that pass a result from one magic to the next are run for real against the
sandbox, from a data folder whose path holds a space.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.oinspect import getdoc
from IPython.utils.capture import capture_output

from dict_magics.frontends.magics import parser
from dict_magics.sandbox import SandboxServer

MAGICS = [
    "dict_login",
    "dict_logout",
    "dict_status",
    "dict_list",
    "dict_lint",
    "dict_check",
    "dict_probe",
    "dict_delete",
    "dict_purge",
    "dict_restore",
    "dict_snapshots",
    "dict_log",
    "dict_panel",
    "dict_add",
    "dict_update",
    "dict_sync",
    "dict_export",
]


def examples(help_text: str) -> list[str]:
    """The lines of the help's last section, which must be ``Examples::``."""
    head, marker, block = help_text.rstrip().rpartition("\nExamples::\n\n")
    assert marker and head, f"no Examples:: section at the end of:\n{help_text}"
    lines = block.split("\n")
    assert all(line.startswith("  ") and line.strip() for line in lines), lines
    return [line.strip() for line in lines]


def shown_help(ip: Any, magic: str) -> str:
    """What ``%magic?`` prints, from its docstring up to IPython's ``File:`` line."""
    with capture_output() as cap:
        ip.run_cell(f"%{magic}?")
    text = cap.stdout
    assert "Docstring:" in text, text
    return text.split("Docstring:", 1)[1].split("\nFile:", 1)[0]


def test_every_dict_magic_is_covered(ip: Any) -> None:
    ours = {name for name in ip.magics_manager.magics["line"] if name.startswith("dict_")}
    assert ours == set(MAGICS)


@pytest.mark.parametrize("magic", MAGICS)
def test_help_ends_with_examples_of_the_magic_itself(ip: Any, magic: str) -> None:
    doc = getdoc(ip.find_line_magic(magic))
    lines = examples(doc)
    assert lines == examples(shown_help(ip, magic))
    assert 2 <= len(lines) <= 3, lines
    own = re.compile(rf"^(?:[A-Za-z_]\w* = )?%{magic}(?: |$)")
    assert all(own.match(line) for line in lines), lines
    assert len(set(lines)) == len(lines)


@pytest.mark.parametrize("magic", MAGICS)
def test_every_example_parses(ip: Any, magic: str) -> None:
    function = ip.find_line_magic(magic)
    for line in examples(getdoc(function)):
        arguments = line.split(f"%{magic}", 1)[1]
        try:
            parser(magic.removeprefix("dict_")).parse_argstring(arguments)
        except UsageError as exc:
            pytest.fail(f"{line!r} does not parse: {exc}")


def run(ip: Any, cell: str) -> Any:
    with capture_output() as cap:
        outcome = ip.run_cell(cell)
    assert outcome.error_in_exec is None, (cell, outcome.error_in_exec, cap.stderr)
    return outcome.result


def test_the_examples_that_pass_results_along_work(
    ip: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    sandbox: SandboxServer,
) -> None:
    """``found = %dict_list --match invoice`` then ``%dict_delete {found.ids}``; then
    ``kept = %dict_snapshots`` and ``%dict_restore "{kept[0].path}"`` put them back."""
    home = tmp_path / "Application Support" / "dict-magics"  # as on macOS: a space
    monkeypatch.setenv("DICT_MAGICS_HOME", str(home))
    for name, value in sandbox.env().items():
        monkeypatch.setenv(name, value)
    listed = examples(getdoc(ip.find_line_magic("dict_list")))
    deleting = examples(getdoc(ip.find_line_magic("dict_delete")))
    keeping = examples(getdoc(ip.find_line_magic("dict_snapshots")))
    restoring = examples(getdoc(ip.find_line_magic("dict_restore")))
    assert "found = %dict_list --match invoice" in listed
    assert "%dict_delete {found.ids}" in deleting
    assert "kept = %dict_snapshots" in keeping
    assert '%dict_restore "{kept[0].path}"' in restoring

    run(ip, "found = %dict_list --match invoice")
    found = ip.user_ns["found"]
    assert len(found) >= 2 and all("invoice" in e.from_text + e.to_text for e in found)
    batch = run(ip, "%dict_delete {found.ids}")
    assert batch.ok and not set(found.ids) & set(sandbox.entries)

    run(ip, "kept = %dict_snapshots")
    assert " " in str(ip.user_ns["kept"][0].path)
    restored = run(ip, '%dict_restore "{kept[0].path}"')
    assert restored.ok and len(restored.added) == len(found)
    assert len(sandbox.entries) == 100
    again = run(ip, "%dict_restore '{kept[0].path}'")  # single quotes too; nothing left to add
    assert again.ok and again.added == [] and len(again.skipped) == len(found)


def test_loading_builds_no_parser_until_one_is_needed() -> None:
    """``%load_ext`` stays light: a magic's parser is built on its first line or ``?``."""
    import subprocess
    import sys

    code = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from IPython.core.oinspect import getdoc\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_line_magic('load_ext', 'dict_magics')\n"
        "import sys\n"
        "from dict_magics.frontends import magics\n"
        "names = [n for n in dir(magics.DictMagics) if n.startswith('dict_')]\n"
        "print(len(magics._PARSERS), len(names), 'dict_magics.frontends.commands' in sys.modules)\n"
        "assert 'Examples::' in getdoc(shell.find_line_magic('dict_purge'))\n"
        "print(sorted(magics._PARSERS))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["0", str(len(MAGICS)), "False", "['purge']"]
