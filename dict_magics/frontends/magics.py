"""The IPython magics: parse a line, call one operation, show what it returns.

Parsers are built from ``commands.COMMANDS`` on first use, so ``%load_ext`` imports nothing
heavy. A mistake the user can fix is one ``UsageError`` line, before anything is sent."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic import (
    Magics,
    line_cell_magic,
    line_magic,
    magics_class,
    needs_local_scope,
    no_var_expand,
)
from IPython.utils.text import DollarFormatter
from traitlets import Bool, Float, Int, TraitError, Unicode, validate

from .. import settings as limits

if TYPE_CHECKING:
    from ..operations.context import OperationSettings

__all__ = ["DictMagics", "parser"]

_NO_STDIN = "this front end cannot answer prompts (no stdin, e.g. nbclient or papermill)"
_PARSERS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    """``DeletionFailedError`` is importable from here, without loading it at ``%load_ext``."""
    if name == "DeletionFailedError":
        from ..errors import DeletionFailedError

        return DeletionFailedError
    raise AttributeError(name)


def parser(name: str) -> Any:
    """The parser of ``%dict_<name>``, built from its row of the commands table on first use."""
    if name not in _PARSERS:
        from IPython.core.magic_arguments import MagicArgumentParser

        from .commands import COMMANDS

        command = COMMANDS[name]
        examples = command.examples_for("magic")
        built = MagicArgumentParser(
            prog=f"dict_{name}",
            description=command.description("magic"),
            epilog=f"\nExamples::\n{examples}",
        )
        command.add_arguments(built, "magic")
        _PARSERS[name] = built
    return _PARSERS[name]


def _magic(func: Callable[..., Any], kind: Callable[..., Any] = line_magic) -> Any:
    """``func`` as a magic: its help is its parser's, built when first asked for (IPython asks
    an object's ``getdoc()`` first); it expands ``{expr}``/``$name`` itself (``_expand``)."""
    name = func.__name__.removeprefix("dict_")
    func.getdoc = lambda: parser(name).format_help()  # type: ignore[attr-defined]
    return kind(needs_local_scope(no_var_expand(func)))


def _plain(name: str, doc: str, progress: bool = False) -> Any:
    """``%dict_<name>``: parse the line, run the command, return its result (``progress``: with
    a progress bar), or print its JSON instead where the magic has ``--json``."""

    def magic(self: DictMagics, line: str = "", local_ns: Any = None) -> Any:
        args = self._args(name, line, local_ns)
        shown = {"progress": _progress(self.shell)} if progress else {}
        result = self._run(name, args, **shown)
        if not getattr(args, "json", False):
            return result
        from .output import dumps

        print(dumps(result.to_json(), indent=2))
        return None

    magic.__name__, magic.__doc__ = f"dict_{name}", doc  # IPython registers it by this name
    return _magic(magic)


def _parse(name: str, line: str) -> Any:
    """The arguments of ``line``, a value typed in quotes without them (IPython's split keeps
    them); an unbalanced quote is a one-line UsageError too."""
    try:
        args = parser(name).parse_args(split_line(line))
    except ValueError as exc:
        raise UsageError(f"cannot read the line ({exc}); nothing was sent.") from None
    for key, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, key, _unquoted(value))
    return args


def split_line(line: str) -> list[str]:
    """The words of ``line`` as IPython's ``parse_argstring`` splits them (non-POSIX, a quoted
    word keeps its quotes), in linear time: ``shlex`` grows a word one character at a time,
    so one long value took quadratic time (1.28 million characters: 69 s)."""
    import re

    words = []
    for match in re.finditer(r"""'[^']*'|"[^"]*"|[^ \t\r\n'"][^ \t\r\n]*|(?P<open>['"])""", line):
        if match.lastgroup == "open":
            raise ValueError("No closing quotation")
        words.append(match.group())
    return words


class _IdFormatter(DollarFormatter):
    """IPython's ``{expr}`` / ``$name`` expansion, except that a collection (list, range, pandas
    column...) becomes exactly its ids, not whatever its printed form would split into."""

    def __init__(self) -> None:
        import secrets

        super().__init__()
        self.held: dict[str, str] = {}
        self.marker = f"@dict-magics-{secrets.token_hex(4)}-"

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            return super().format_field(value, format_spec)
        if hasattr(value, "columns") or getattr(value, "ndim", 1) > 1:
            raise UsageError(
                "a table is not a list of ids (iterating it gives its column names); "
                "pass one column, e.g. {df['id']}. Nothing was sent."
            )
        tokens = []
        for item in value.tolist() if hasattr(value, "tolist") else value:
            token = f"{self.marker}{len(self.held)}@"
            self.held[token] = item
            tokens.append(token)
        return " ".join(tokens)

    def restore(self, parts: list[str]) -> list[str]:
        """The ids with each collection's items put back; a collection inside other text (or
        as an option's value) is refused rather than sent as a mangled id."""
        if any(self.marker in p and p not in self.held for p in parts):
            raise UsageError(_NOT_ALONE)
        return [self.held.get(p, p) for p in parts]


_NOT_ALONE = (
    "a list (or other collection) of ids must stand alone on the line, not inside other text "
    "or as an option's value; nothing was sent."
)


@contextmanager
def _user_errors() -> Iterator[None]:
    """A mistake the user can fix, or a listing the service cannot give (nothing was changed),
    is one ``UsageError`` line, with what would help in the magics' words."""
    from ..errors import DictMagicsError, OperationFailedError

    try:
        yield
    except OperationFailedError:
        raise  # asked for (raise_on_failure): the pipeline stops on it
    except DictMagicsError as exc:
        from .commands import MAGIC

        raise UsageError(MAGIC.message(exc)) from None


def _unquoted(text: str | None) -> str | None:
    """A value typed in quotes (as one holding spaces must be) without them: IPython's split
    keeps the quotes in the word."""
    if text and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _split_text(line: str) -> tuple[list[str], str]:
    """The options at the start of a ``%dict_check`` line, and the text after them verbatim
    (quotes and apostrophes as typed). ``--`` ends the options; a word that is not one of them
    starts the text."""
    from .commands import COMMANDS

    flags = {  # each option of the magic, and whether it takes a value
        flag: a.options.get("action") != "store_true"
        for a in COMMANDS["check"].args
        if a.in_front("magic")
        for flag in a.flags
    }
    options: list[str] = []
    rest = line.strip()
    while rest.startswith("-"):
        word, _, tail = rest.partition(" ")
        name, equals, _ = word.partition("=")
        if word != "--" and name not in flags:
            break
        rest = tail.strip()
        if word == "--":
            break
        options.append(word)
        if flags[name] and not equals and rest:
            value, _, rest = rest.partition(" ")
            options.append(value)
            rest = rest.strip()
    return options, _unquoted(rest) or ""


def _warn(message: str) -> None:
    """An operation's warning (not an error): one line on stderr, in the magics' words."""
    from .commands import MAGIC

    print(f"Warning: {MAGIC.message(message)}", file=sys.stderr)


def _no_stdin() -> str | None:
    """Why nobody can answer here (a kernel that allows no input); ``None`` when someone may."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    return _NO_STDIN if not getattr(kernel, "_allow_stdin", True) else None


def _prompter() -> Any:
    """The magics' ``Prompter``: ``input`` and ``getpass`` where the front end has stdin."""
    from .commands import MAGIC, TextPrompter

    closed = (StdinNotImplementedError, EOFError)
    return TextPrompter(MAGIC, nobody=_NO_STDIN, closed=closed, unanswerable=_no_stdin)


def _progress(shell: Any) -> Any:
    from .output import progress_for

    return progress_for(shell)


class _Seconds(Float):
    """A configurable ``Float`` that refuses ``True``/``False`` (``Float`` would take them as
    1.0 and 0.0: ``listing_max_age = True`` would quietly mean one second)."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, bool):
            raise TraitError(
                f"{type(obj).__name__}.{self.name} must be a number of seconds, not {value!r}."
            )
        return super().validate(obj, value)


@magics_class
class DictMagics(Magics):
    """Curate the user dictionary from IPython; settings via ``%config DictMagics``."""

    profile = Unicode(
        "", help="Profile used when -p is not given (empty: $DICT_MAGICS_PROFILE, else 'default')."
    ).tag(config=True)
    base_url = Unicode(
        "", help="Base URL for every profile instead of the stored one (empty: the profile's)."
    ).tag(config=True)
    timeout = _Seconds(
        limits.TIMEOUT, help="Seconds to wait to connect, and for each answer (> 0)."
    ).tag(config=True)
    max_retries = Int(
        limits.RETRIES,
        help="Times a request that certainly was not acted on is sent again: "
        f"{limits.span(limits.MIN_RETRIES, limits.MAX_RETRIES)}.",
    ).tag(config=True)
    workers = Int(
        limits.WORKERS,
        help="Requests in flight for several ids (-w overrides): "
        f"{limits.span(limits.MIN_WORKERS, limits.MAX_WORKERS)}.",
    ).tag(config=True)
    raise_on_failure = Bool(
        False, help="Raise DeletionFailedError when a deletion fails, so a pipeline run stops."
    ).tag(config=True)
    snapshots = Bool(
        True, help="Keep what a change takes in a snapshot first (--no-snapshot: not this once)."
    ).tag(config=True)
    auth = Unicode(
        "",
        help="'signature' or 'token' (a Bearer token); empty: $DICT_MAGICS_AUTH, else signature.",
    ).tag(config=True)
    listing_max_age = _Seconds(
        None,
        allow_none=True,
        help="Seconds a delete may snapshot from this session's listing instead of a fresh one "
        "(0: always afresh; None: $DICT_MAGICS_LISTING_MAX_AGE, else 0).",
    ).tag(config=True)
    corpus = Unicode(
        "",
        help="Sample texts (UTF-8, one a line) dry runs, sync plans and the panel show a change's "
        "effect on (--corpus overrides; empty: $DICT_MAGICS_CORPUS).",
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        if shell is not None and hasattr(shell, "configurables"):
            # A reloaded extension replaces the old instance, so %config reaches this one.
            shell.configurables[:] = [
                c
                for c in shell.configurables
                if c is self or type(c).__name__ != type(self).__name__
            ]

    # -- %config values ------------------------------------------------------------------------

    def update_config(self, config: Any) -> None:
        """A refused ``%config`` value is one ``UsageError`` line and changes nothing
        (``%config`` would log it through the root logger as ``ERROR:root:...``)."""
        try:
            super().update_config(config)
        except TraitError as exc:
            if self.shell is None:
                raise
            self.shell.show_usage_error(UsageError(f"{exc} The setting is unchanged."))

    @validate("profile", "base_url", "auth", "timeout", "max_retries", "workers", "listing_max_age")
    def _valid(self, proposal: Any) -> Any:
        """A value is checked as a line's option would be; a refusal names the setting."""
        from ..errors import DictMagicsError
        from ..operations.context import OperationSettings
        from ..profiles.credentials import check_profile
        from ..service.http import normalize_base_url

        name, value = proposal["trait"].name, proposal["value"]
        if value is None or (isinstance(value, str) and not value.strip()):
            return "" if isinstance(value, str) else value  # empty: the default
        try:
            if name == "profile":
                return check_profile(value)
            if name == "base_url":
                return normalize_base_url(value)
            return getattr(OperationSettings(**{name: value}), name)
        except DictMagicsError as exc:
            said = str(exc)
            if said.startswith(f"{name} "):  # "workers must be 1..64": name the setting once
                raise TraitError(f"DictMagics.{said}") from None
            raise TraitError(f"DictMagics.{name}: {said}") from None

    # -- shared steps --------------------------------------------------------------------------

    def _settings(self, args: Any) -> OperationSettings:
        """``%config DictMagics`` with this line's options on top."""
        from ..operations.context import OperationSettings

        workers = getattr(args, "workers", None)
        with _user_errors():
            return OperationSettings(
                profile=getattr(args, "profile", None) or self.profile or None,
                base_url=self.base_url or None,
                timeout=self.timeout,
                max_retries=self.max_retries,
                workers=self.workers if workers is None else workers,
                raise_on_failure=self.raise_on_failure,
                snapshots=self.snapshots and not getattr(args, "no_snapshot", False),
                auth=self.auth or None,
                listing_max_age=self.listing_max_age,
            )

    def _namespace(self, local_ns: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**(self.shell.user_ns if self.shell is not None else {}), **(local_ns or {})}

    def _expand(self, line: str, local_ns: Mapping[str, Any] | None) -> str:
        """``{expr}`` and ``$name`` expanded by IPython's formatter, as IPython expands a magic's
        line (left as typed where they cannot be). A line with neither is not scanned: the
        ``$name`` pattern is tried at every position, so a long line took quadratic time."""
        if "{" not in line and "$" not in line:
            return line
        try:
            return DollarFormatter().vformat(line, args=[], kwargs=self._namespace(local_ns))
        except Exception:
            return line

    def _args(self, name: str, line: str, local_ns: Mapping[str, Any] | None) -> Any:
        return _parse(name, self._expand(line, local_ns))

    def _run(self, name: str, args: Any, **context: Any) -> Any:
        """Call the command's operation (``commands.COMMANDS[name].run``) and return its result,
        naming what it names in the magics' words."""
        from .commands import COMMANDS, MAGIC, Context

        settings = self._settings(args)
        context.setdefault("prompter", _prompter())
        run = COMMANDS[name].run
        assert run is not None  # only a command with an operation gets here
        with _user_errors():
            result = run(args, Context(settings, warn=_warn, corpus=self.corpus or None, **context))
        return MAGIC.named(result)

    def _ids(self, line: str, local_ns: Mapping[str, Any] | None) -> Any:
        """The parsed line of ``%dict_delete``, its ids with collections put back."""
        formatter = _IdFormatter()
        if "{" in line or "$" in line:
            try:
                with _user_errors():
                    line = formatter.vformat(line, args=[], kwargs=self._namespace(local_ns))
            except UsageError:
                raise
            except Exception as exc:
                raise UsageError(
                    f"cannot expand the ids ({type(exc).__name__}: {exc}); nothing was sent. "
                    "Write {{ and $$ for a literal brace or dollar sign."
                ) from None
        try:
            args = _parse("delete", line)
        except UsageError as exc:
            if formatter.marker in str(exc):
                raise UsageError(_NOT_ALONE) from None
            raise
        if formatter.marker in (args.profile or ""):
            raise UsageError(_NOT_ALONE)
        from ..models.entry import check_id
        from ..operations.context import split_args

        with _user_errors():
            parts = formatter.restore(split_args(args.ids, check=False))
            args.ids = [check_id(part) for part in parts]
        if not args.ids:
            raise UsageError("no entry id given (an empty list?); nothing was sent.")
        return args

    # -- the magics (arguments and help: commands.COMMANDS) ------------------------------------

    @_magic
    def dict_login(self, line: str = "", local_ns: Any = None) -> None:
        """Store a profile in the OS keyring."""
        from ..operations.login import login

        args = self._args("login", line, local_ns)
        settings = self._settings(args)
        with _user_errors():
            done = login(
                settings,
                _prompter(),
                base_url=args.base_url,
                access_key=args.access_key,
                check=args.check,
            )
        print("\n".join(done.lines))

    @_magic
    def dict_logout(self, line: str = "", local_ns: Any = None) -> None:
        """Remove a profile from the OS keyring."""
        from ..operations.login import logout

        settings = self._settings(self._args("logout", line, local_ns))
        with _user_errors():
            print("\n".join(logout(settings).lines))

    @_magic
    def dict_status(self, line: str = "", local_ns: Any = None) -> Any:
        """Where a profile's settings come from (a ProfileStatus); sends nothing."""
        from ..operations.status import status
        from .commands import MAGIC

        settings = self._settings(self._args("status", line, local_ns))
        with _user_errors():
            return status(settings).worded(MAGIC.message)

    dict_list = _plain("list", "The dictionary's entries (an EntryList).")

    dict_lint = _plain("lint", "Problems in the dictionary (a LintReport), or its JSON.")
    dict_probe = _plain("probe", "What rules the service follows (a ProbeResult), or its JSON.")

    @_magic
    def dict_delete(self, line: str = "", local_ns: Any = None) -> Any:
        """Delete one entry (a DeleteResult) or several (a BatchResult)."""
        from ..errors import DeletionFailedError
        from ..operations.delete import interruption

        args = self._ids(line, local_ns)
        progress = _progress(self.shell) if len(args.ids) > 1 else None  # one id: no bar
        try:
            result = self._run("delete", args, progress=progress)
        except DeletionFailedError as exc:
            if note := interruption(exc.result):
                print(note)
            raise
        if note := interruption(result):
            print(note)
        return result

    @_magic
    def dict_purge(self, line: str = "", local_ns: Any = None) -> Any:
        """Delete EVERY entry, after a typed confirmation (a DeleteResult)."""
        try:
            return self._run("purge", self._args("purge", line, local_ns))
        except UsageError as exc:  # a declined question is said as the cancellation it is
            if not str(exc).startswith("purge not confirmed"):
                raise
            raise UsageError(f"Cancelled \u2014 {exc}") from None

    dict_restore = _plain(
        "restore", "Put back what a snapshot holds and the dictionary lacks.", progress=True
    )
    dict_add = _plain("add", "Add one entry (an AddResult naming the new id).")
    dict_update = _plain("update", "Change one entry in place (an UpdateResult: old and new).")
    dict_sync = _plain("sync", "Make the dictionary match a glossary file.", progress=True)
    dict_export = _plain("export", "Write the dictionary to a glossary file (an ExportResult).")

    @_magic
    def dict_snapshots(self, line: str = "", local_ns: Any = None) -> Any:
        """The snapshots on disk, newest first (a SnapshotList); sends nothing."""
        args = self._args("snapshots", line, local_ns)
        if args.limit < 0:
            raise UsageError(f"-n must be 0 (all) or more, not {args.limit}.")
        found = self._run("snapshots", args)
        if args.limit and len(found) > args.limit:
            shown = f"the {args.limit} newest of {len(found)} snapshots"
            print(f"{shown} (%dict_snapshots -n 0 lists them all)")
            return type(found)(found[: args.limit])
        return found

    dict_log = _plain("log", "The last requests that could change the dictionary.")

    @_magic
    def dict_panel(self, line: str = "", local_ns: Any = None) -> Any:
        """The confirm-then-delete widget panel (a DictPanel)."""
        from .commands import configured_corpus
        from .panel import DictPanel

        settings = self._settings(self._args("panel", line, local_ns))
        with _user_errors():
            panel = DictPanel.from_settings(settings, corpus=configured_corpus(self.corpus))
        if getattr(self.shell, "kernel", None) is None:
            print(
                "the panel is a widget: it shows in Jupyter (JupyterLab, Notebook, VS Code), not "
                "in a plain terminal; here use %dict_list, %dict_delete and %dict_purge"
            )
        return panel

    def dict_check(self, line: str = "", cell: str | None = None, local_ns: Any = None) -> Any:
        """Which entries apply to each element of a text (a CheckReport): a line, one element;
        a cell, one element per line; ``{name}`` of a list of strings, one element each."""
        import re

        options, text = _split_text(self._expand(line, local_ns))
        named = re.fullmatch(r"\{(\w+)\}|\$(\w+)", _split_text(line)[1].strip())
        items = self._namespace(local_ns).get(named.group(1) or named.group(2)) if named else None
        if isinstance(items, list | tuple) and all(isinstance(i, str) for i in items):
            text = list(items)  # type: ignore[assignment]
        if cell is not None:
            if text:
                raise UsageError(
                    "%%dict_check takes options on its first line and the text below it, "
                    "not both; nothing was sent."
                )
            text = cell
        args = _parse("check", " ".join([*options, "x"]))
        args.text = text
        return self._run("check", args)

    dict_check = _magic(dict_check, line_cell_magic)
