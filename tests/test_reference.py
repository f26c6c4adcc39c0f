"""One table of commands: the magics, the command line and docs/reference.md say the same.

``frontends/commands.py`` declares every command once; both front ends are built from it and the
reference is generated from it, so a command's summary and an argument's help cannot drift.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from IPython.core.oinspect import getdoc

from dict_magics.frontends.cli import build_parser
from dict_magics.frontends.commands import COMMANDS, markdown

REFERENCE = Path(__file__).resolve().parent.parent / "docs" / "reference.md"
REGENERATE = "python -m dict_magics.frontends.commands --markdown > docs/reference.md"


def test_the_reference_is_the_table_as_it_is_now() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == markdown(), f"out of date: run {REGENERATE}"
    printed = subprocess.run(
        [sys.executable, "-m", "dict_magics.frontends.commands", "--markdown"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=60,
    ).stdout
    assert printed == markdown()


def test_the_reference_names_every_magic_and_subcommand(ip: Any) -> None:
    text = markdown()
    magics = [n for n in ip.magics_manager.magics["line"] if n.startswith("dict_")]
    assert magics and all(f"`%{name}`" in text for name in magics)
    for name in _subcommands():
        assert f"`dict-magics {name}`" in text and f"## {name}\n" in text
    assert "**130** interrupted by Ctrl-C" in text and "**143**" in text and "**129**" in text


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_both_front_ends_say_each_command_and_argument_in_the_table_words(ip: Any) -> None:
    subcommands = _subcommands()
    for command in COMMANDS.values():
        magic = ip.find_line_magic(f"dict_{command.name}")
        assert (magic is None) == (command.only == "cli"), command.name
        assert (command.name in subcommands) == (command.only != "magic"), command.name
        helps = []  # whitespace aside: help text is wrapped, at hyphens too
        if magic is not None:
            helps.append("".join(getdoc(magic).split()))
        if command.name in subcommands and command.name != "sandbox":
            helps.append("".join(subcommands[command.name].format_help().split()))
        summary = "".join(command.title.split())
        for shown in helps:
            assert summary in shown, (command.name, shown)
            for a in command.args:
                if a.only is None and "`" not in a.help:
                    assert "".join(a.help.split()) in shown, (command.name, a.flags)
