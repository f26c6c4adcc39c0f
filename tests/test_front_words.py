"""Front-end words live in front ends: below them, what helps is named neutrally.

Lower layers raise errors whose ``option`` names a ``Remedy`` (and return plans, warnings that
name one); each front end words it (``frontends/commands.py``): the magics ``%dict_restore``, the
command line ``dict-magics restore``, the panel its buttons. A scan of the source checks that
no module below the front ends writes a magic, a subcommand or a flag in a string it could show
(docstrings aside), and the scan itself is tested on a planted copy of the package.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
from pathlib import Path
from typing import Any

import layering
import pytest
from conftest import point_at, run_cell

import dict_magics
from dict_magics.errors import CredentialsError, Notice, Remedy, UsageProblem
from dict_magics.frontends.cli import build_parser, main
from dict_magics.frontends.commands import CLI, MAGIC, PANEL, Hints
from dict_magics.frontends.panel_html import confirm_purge_html
from dict_magics.models import PurgePlan
from dict_magics.operations import purge as purging
from dict_magics.sandbox import SandboxServer

ROOT = Path(dict_magics.__file__).parent
LOWER_DIRS = ("models", "service", "profiles", "formats", "operations")


def _subcommands() -> list[str]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    raise AssertionError("the command line has no subcommands")


SUBCOMMANDS = _subcommands()
FRONT_WORDS = re.compile(
    r"%dict_\w+"  # a magic
    rf"|dict-magics (?:{'|'.join(SUBCOMMANDS)})\b"  # a subcommand
    r"|(?<![\w-])--[a-z][a-z-]*"  # a long flag: --no-snapshot, --yes, --workers
    r"|(?<![\w-])-[a-zA-Z](?:/--| \(--)"  # a short one beside it: -w/--workers, -y (--yes)
)


def _docstrings(tree: ast.AST) -> set[int]:
    """Every string that is a statement of its own: docstrings of modules, classes and
    functions, and the ones written under an attribute. Never shown to a user."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def front_words(root: Path) -> list[str]:
    """``path:line: text`` for each front-end word in a string constant (f-string parts too)
    of a module below the front ends."""
    files = [
        root / f"{name}.py" for name in sorted(layering.BASE) if (root / f"{name}.py").exists()
    ]
    for folder in LOWER_DIRS:
        files.extend(sorted((root / folder).rglob("*.py")))
    found = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
            ):
                for match in FRONT_WORDS.finditer(node.value):
                    where = path.relative_to(root)
                    found.append(f"{where}:{node.lineno}: {match.group()!r}")
    return found


def test_no_module_below_the_front_ends_words_a_command_or_flag() -> None:
    assert front_words(ROOT) == []


def _planted(tmp_path: Path, where: str, addition: str) -> list[str]:
    copy = tmp_path / "dict_magics"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / where
    target.write_text(target.read_text(encoding="utf-8") + addition, encoding="utf-8")
    return front_words(copy)


@pytest.mark.parametrize(
    ("planted", "word"),
    [
        ('\n\ndef _planted(n):\n    return f"{n} gone: %dict_restore puts it back"\n', "%dict_"),
        ('\n\nHINT = "run `dict-magics snapshots` to see them"\n', "dict-magics snapshots"),
        ('\n\nHINT = ("or add " "--no-snapshot")\n', "--no-snapshot"),
        ('\n\ndef _planted(n):\n    return f"-w/--workers must be 1..{n}"\n', "-w/--"),
    ],
)
def test_the_scan_sees_a_planted_front_end_word(tmp_path: Path, planted: str, word: str) -> None:
    found = _planted(tmp_path, "operations/purge.py", planted)
    assert len(found) == 1 and found[0].startswith("operations/purge.py:")
    assert word in found[0]


def test_the_scan_leaves_docstrings_alone(tmp_path: Path) -> None:
    planted = '\n\ndef _planted():\n    """%dict_purge --yes, like `dict-magics purge`."""\n'
    assert _planted(tmp_path, "service/http.py", planted) == []


# -- the purge plan ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "",
        " \n",
        "DELETE-ALL",
        "delete\u2011all",  # a non-breaking hyphen
        "\uff44elete-all",  # a fullwidth d: NFKC would make it the word
        "delete-all\u200b",  # a zero-width space: not stripped
        "delete\u00adall",
        "delete-all!",
    ],
)
def test_only_the_exact_word_or_host_confirms_a_purge(answer: str) -> None:
    """Nothing but the word or the host, surrounding spaces aside: no case folding, no
    Unicode normalisation, no invisible characters; and an empty answer never, even for a plan
    whose host came out empty."""
    assert not purging.plan("work", "h:1", []).accepts(answer)
    assert not purging.plan("work", "", []).accepts(answer)


def test_the_plan_counts_each_listed_entry_once_and_names_its_copy() -> None:
    from dict_magics.models import Entry

    rows = [Entry("1", "en", "a", "de", "b"), Entry("2", "en", "c", "de", "d")]
    plan = purging.plan("work", "h:1", [*rows, rows[0]], "/s/p.json")
    assert (plan.count, plan.snapshot, plan.word, plan.undoable) == (
        2,
        "/s/p.json",
        "delete-all",
        True,
    )
    assert plan.remedy is Remedy.RESTORE
    assert plan.question == "Type delete-all (or h:1) to confirm, anything else cancels: "
    assert plan.accepts("delete-all") and plan.accepts("  h:1\n") and not plan.accepts("yes")
    bare = purging.plan("work", "h:1", rows)
    assert not bare.undoable and bare.remedy is Remedy.NO_SNAPSHOT
    unlisted = purging.plan("work", "h:1", None)
    assert unlisted.count is None and not unlisted.undoable and unlisted.remedy is None
    assert purging.plan("work", "h:1", []).remedy is None


def test_the_plan_text_in_each_front_ends_words() -> None:
    kept = PurgePlan(host="h:1", profile="work", count=1204, snapshot="/s/p.json")
    assert str(kept) == (
        "This deletes all 1,204 entries on h:1 (profile 'work'); a snapshot is kept at "
        "/s/p.json (removed if you cancel; a restore puts them back)."
    )
    assert "; %dict_restore puts them back)" in MAGIC.text(kept)
    assert "; `dict-magics restore` puts them back)" in CLI.text(kept)
    bare = PurgePlan(host="h:1", profile="work", count=1)
    assert str(bare).endswith(
        "all 1 entry on h:1 (profile 'work'); no snapshot is kept (snapshots are off), so it "
        "cannot be undone."
    )
    assert "no snapshot is kept (--no-snapshot)" in CLI.text(bare)
    assert (
        "no snapshot is kept (--no-snapshot or %config DictMagics.snapshots = False)"
        in MAGIC.text(bare)
    )
    assert "could not be listed" in str(PurgePlan(host="h", profile="p", count=None))
    assert "how many is unknown" in str(PurgePlan(host="h", profile="p", count=None))
    assert "nothing to keep" in str(PurgePlan(host="h", profile="p", count=0))


def test_the_plan_is_escaped_in_html_and_cleaned_in_text() -> None:
    plan = PurgePlan(
        host="<b>h</b>", profile="p\x1b[2J<i>", count=3, snapshot="/s/<script>x</script>.json"
    )
    html = plan._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>h</b>" not in html and "&lt;b&gt;h&lt;/b&gt;" in html and "&lt;i&gt;" in html
    assert "\x1b" not in str(plan) and "\\x1b" in str(plan)
    panel = confirm_purge_html(plan, PANEL.names)
    assert "Undo puts them back" in panel and "<code>delete-all</code>" in panel
    assert "&lt;b&gt;h&lt;/b&gt;" in panel and "<script>" not in panel


def test_a_cancelled_purge_removes_its_snapshot_and_names_no_front_end(
    env_creds: SandboxServer,
) -> None:
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.prompts import ScriptedPrompter

    prompter = ScriptedPrompter(["no"])
    with pytest.raises(UsageProblem, match="purge not confirmed"):
        purging.purge(OperationSettings(), prompter)
    warning = prompter.asked[0][1]
    path = warning.split("a snapshot is kept at ")[1].split(" (removed")[0]
    assert not Path(path).exists() and "a restore puts them back" in warning
    assert env_creds.entries and not [r for r in env_creds.requests if r.method == "DELETE"]


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A service without the listing endpoint: no snapshot can be kept there."""
    with SandboxServer(10, listing=False) as server:
        yield point_at(monkeypatch, server)


# -- each front end says its own words -----------------------------------------------------------


@pytest.mark.parametrize(
    ("remedy", "magic", "cli", "panel"),
    [
        (Remedy.RESTORE, "%dict_restore", "`dict-magics restore`", "Undo"),
        (Remedy.NO_SNAPSHOT, "--no-snapshot", "--no-snapshot", "DictMagics.snapshots = False"),
        (Remedy.LOGIN, "%dict_login -p work", "`dict-magics login -p work`", "%dict_login"),
        (Remedy.SNAPSHOTS, "%dict_snapshots", "`dict-magics snapshots`", "Snapshot list"),
        (Remedy.WORKERS, "-w/--workers", "-w/--workers", "DictMagics.workers"),
    ],
)
def test_each_front_end_words_a_remedy(remedy: Remedy, magic: str, cli: str, panel: str) -> None:
    error = UsageProblem("it failed.", option=remedy, profile="work")
    assert MAGIC.message(error).startswith("it failed. ") and magic in MAGIC.message(error)
    assert cli in CLI.message(error) and "%dict_" not in CLI.message(error)
    assert panel in PANEL.message(error)
    warning = Notice("no copy", option=remedy, profile="work")
    assert MAGIC.message(warning).startswith("no copy. ") and magic in MAGIC.message(warning)
    assert (
        UsageProblem("plain.").option is None and MAGIC.message(UsageProblem("plain.")) == "plain."
    )


def test_the_magics_name_their_login_and_no_snapshot(ip: Any, bare: SandboxServer) -> None:
    _, _, err = run_cell(ip, "%dict_delete 2")
    assert "cannot be undone. (--no-snapshot goes ahead without this warning.)" in err
    assert "dict-magics" not in err
    with pytest.raises(Exception) as refused:
        ip.run_line_magic("dict_purge", "-y")
    assert "--no-snapshot (or %config DictMagics.snapshots = False)" in str(refused.value)


def test_the_magics_and_the_command_line_name_their_own_login(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Exception) as refused:
        ip.run_line_magic("dict_list", "-p nobody")
    assert "%dict_login -p nobody" in str(refused.value)
    assert "dict-magics login" not in str(refused.value)
    assert main(["list", "--profile", "nobody"]) == 2
    err = capsys.readouterr().err
    assert "`dict-magics login -p nobody`" in err and "%dict_" not in err


def test_the_command_line_names_its_no_snapshot(
    bare: SandboxServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["purge", "--yes"]) == 2
    err = capsys.readouterr().err
    assert "With --no-snapshot it goes ahead without a copy." in err and "%" not in err
    assert main(["delete", "3"]) == 0
    err = capsys.readouterr().err
    assert "cannot be undone. (--no-snapshot goes ahead without this warning.)" in err
    assert "%dict_" not in err


def test_credentials_name_the_profile_and_no_front_end(memory_keyring: Any) -> None:
    from dict_magics.profiles import credentials

    with pytest.raises(CredentialsError) as missing:
        credentials.load("nobody")
    assert missing.value.option == "login" and missing.value.profile == "nobody"
    assert "%dict" not in str(missing.value) and "dict-magics" not in str(missing.value)


def test_a_hint_adds_to_the_message_and_never_repeats_it(tmp_path: Path) -> None:
    """The message says what happened, the front end's hint what to do: no clause twice."""
    from dict_magics.formats import format_of
    from dict_magics.operations.context import OperationSettings
    from dict_magics.operations.export import export

    there = tmp_path / "glossary.csv"
    there.write_text("kept", encoding="utf-8")
    with pytest.raises(UsageProblem) as existing:
        export(OperationSettings(), there)
    with pytest.raises(UsageProblem) as unnamed:
        format_of(tmp_path / "glossary.txt")
    for words in (MAGIC, CLI, PANEL):
        for refused in (existing.value, unnamed.value):
            said = words.message(refused)
            lowered = said.lower()
            assert lowered.count("replace it") <= 1, said
            assert "name the format" not in lowered and lowered.count("--format") <= 1, said
    assert CLI.message(existing.value).endswith(
        "already exists; nothing was written. Choose another name, or add --force to replace it."
    )
    assert PANEL.message(unnamed.value).endswith("Rename it to end in .csv, .tsv, .xlsx or .tbx.")


# -- every remedy has words in every front end that can meet it ----------------------------------

NOT_REACHABLE: dict[str, dict[Remedy, str]] = {
    "panel": {
        # The panel asks with its own Confirm and typed word; a refusal there names no flag.
        Remedy.YES: "the panel's questions are its Confirm button and the purge's typed word",
        Remedy.OVERWRITE: "the panel exports nothing to a file",
    },
}
"""Remedies a front end can never meet, and why (an empty answer would be a silent gap)."""

FRONT_ENDS = {"magic": MAGIC, "cli": CLI, "panel": PANEL}


@pytest.mark.parametrize("remedy", list(Remedy), ids=str)
@pytest.mark.parametrize("front", FRONT_ENDS)
def test_every_remedy_has_words_in_each_front_end_or_a_reason(front: str, remedy: Remedy) -> None:
    words = FRONT_ENDS[front]
    has_words = remedy in words.hints or remedy in words.names
    unreachable = NOT_REACHABLE.get(front, {}).get(remedy)
    assert has_words != bool(unreachable), (front, remedy, "words" if has_words else "none")
    said = words.message(UsageProblem("it failed.", option=remedy, profile="work"))
    if remedy in words.hints:
        assert said.startswith("it failed. ") and len(said) > len("it failed. ")


def _own_words(words: Hints) -> list[str]:
    return [*words.hints.values(), *words.names.values()]


def test_each_front_end_speaks_only_its_own_words() -> None:
    """The command line names no magic or %config; the magics name no `dict-magics` command;
    the panel names no command-line flag (it names magics for what it has no button for)."""
    for text in _own_words(CLI):
        assert "%dict_" not in text and "%config" not in text, text
    for text in _own_words(MAGIC):
        assert "dict-magics " not in text, text
    for text in _own_words(PANEL):
        assert "dict-magics " not in text and "--" not in text, text


def test_every_option_the_lower_layers_name_is_a_remedy() -> None:
    """An ``option="..."`` a lower layer raises with must be a ``Remedy`` value (else no front
    end has words for it) or a setting its message words itself, and every ``Remedy`` is named
    by some layer below the front ends."""
    package = Path(dict_magics.__file__).parent
    named: set[str] = set()
    for path in package.rglob("*.py"):
        if "frontends" in path.relative_to(package).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "option":
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    named.add(node.value.value)
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Remedy"
                and path.name != "errors.py"
            ):
                named.add(Remedy[node.attr].value)
    values = {r.value for r in Remedy}
    assert named - values == SELF_WORDED
    assert values - named == set()


SELF_WORDED = {"auth", "chunk_size", "listing_max_age"}
"""Settings whose refusal names the setting and its allowed values itself (``auth must be
'signature' or 'token', not ...``): every front end shows the message as it is, no hint."""
