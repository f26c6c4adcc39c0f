"""The IPython magics: argument parsing, prompts and display only.

Each magic parses its line, builds ``OperationSettings`` from ``%config DictMagics``, and hands
over to ``dict_magics.operations``; every user mistake (a bad id, missing credentials, an
unusable keyring, an unanswerable prompt) comes back as one ``UsageError`` line before anything
is sent. This module loads with ``%load_ext`` and therefore imports nothing heavy: requests,
urllib3, ipywidgets and keyring load on first use.
"""

from __future__ import annotations

import argparse
import string
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
    from ..models import (
        AddResult,
        BatchResult,
        ChangePreview,
        CheckReport,
        DeleteResult,
        DryRunResult,
        EntryList,
        ExportResult,
        LintReport,
        NoChange,
        RestoreResult,
        SyncPlan,
        SyncResult,
        UpdateResult,
    )
    from ..operations.context import OperationSettings
    from ..operations.history import AuditTable, SnapshotList
    from ..profiles.status import ProfileStatus

__all__ = ["DictMagics"]


def __getattr__(name: str) -> Any:
    """``DeletionFailedError`` is importable from here too, without loading it at ``%load_ext``."""
    if name == "DeletionFailedError":
        from ..errors import DeletionFailedError

        return DeletionFailedError
    raise AttributeError(name)


_NO_STDIN = "this front end cannot answer prompts (no stdin, e.g. nbclient or papermill)"


class _LinearDollar(DollarFormatter):
    """IPython's ``{expr}`` / ``$name`` expansion, in linear time where the line has no ``$``:
    IPython's ``$name`` pattern is tried at every position of the text between fields, so a
    long value took quadratic time (1.28 million characters: over a minute) even with no
    ``$`` in it."""

    def parse(self, fmt_string: str) -> Any:
        if "$" not in fmt_string:
            return string.Formatter.parse(self, fmt_string)
        return super().parse(fmt_string)


SNAPSHOTS_SHOWN = 20
"""Snapshots ``%dict_snapshots`` shows unless told otherwise."""


def _shows_widgets(shell: Any) -> bool:
    """True where a front end can show widgets (a kernel with a comm channel, e.g. Jupyter);
    False in a plain terminal IPython."""
    return getattr(shell, "kernel", None) is not None


def _expands(func: Callable[..., Any]) -> Callable[..., Any]:
    """A line magic that expands ``{expr}`` / ``$name`` itself (``_LinearDollar``), as IPython
    would, instead of IPython's quadratic expansion."""
    import functools

    @functools.wraps(func)
    def magic(self: Any, line: str = "", local_ns: Mapping[str, Any] | None = None) -> Any:
        return func(self, self._expanded(line, local_ns))

    return needs_local_scope(no_var_expand(magic))


class _IdFormatter(_LinearDollar):
    """IPython's ``{expr}`` / ``$name`` expansion, except that a collection becomes its ids.

    ``%dict_delete {ids}`` with a list, tuple, set, range or pandas/numpy column deletes exactly
    those ids, instead of whatever the collection's printed form would split into (a list's
    brackets and quotes, a Series' index numbers). Each id travels through the argument parser
    as an opaque token and is put back afterwards, so spaces, commas, quotes and backslashes in
    an id arrive exactly as they were.
    """

    def __init__(self) -> None:
        super().__init__()
        self.held: dict[str, str] = {}
        import secrets

        self.marker = f"@dict-magics-{secrets.token_hex(4)}-"

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            return super().format_field(value, format_spec)
        if hasattr(value, "columns") or getattr(value, "ndim", 1) > 1:
            raise UsageError(
                "a table is not a list of ids (iterating it gives its column names); "
                "pass one column, e.g. {df['id']}. Nothing was sent."
            )
        if hasattr(value, "tolist"):
            value = value.tolist()
        tokens = []
        for item in value:
            token = f"{self.marker}{len(self.held)}@"
            self.held[token] = item
            tokens.append(token)
        return " ".join(tokens)

    def restore(self, parts: list[str]) -> list[str]:
        """The ids with each collection's items put back; a collection inside other text (or
        as an option's value) is refused rather than sent as a mangled id."""
        ids = []
        for part in parts:
            if part in self.held:
                ids.append(self.held[part])
            elif self.marker in part:
                raise UsageError(_NOT_ALONE)
            else:
                ids.append(part)
        return ids


_NOT_ALONE = (
    "a list (or other collection) of ids must stand alone on the line, not inside other text "
    "or as an option's value; nothing was sent."
)


class _Recorded:
    """One of IPython's ``magic_arguments`` decorators, recorded now and applied later.

    IPython builds every parser (and formats its help) when the class is defined, which made
    ``%load_ext`` pay for ten parsers nobody had asked for yet (and for importing
    ``IPython.core.magic_arguments``). These record what IPython's ``argument`` and ``kwds``
    would do; ``parser_of`` hands them to IPython's own ``construct_parser`` on first use.
    """

    def __init__(self, method: str, *args: Any, **kwargs: Any) -> None:
        self.method, self.args, self.kwargs = method, args, kwargs

    def __call__(self, func: Any) -> Any:
        if not getattr(func, "has_arguments", False):
            func.has_arguments = True
            func.decorators = []
        func.decorators.append(self)
        if self.method == "kwds":
            func.argcmd_kwds = self.kwargs
        return func

    def add_to_parser(self, parser: Any, group: Any) -> None:
        """Called by IPython's ``construct_parser``, as for its own decorators."""
        if self.method == "add_argument":
            (group or parser).add_argument(*self.args, **self.kwargs)


def argument(*args: Any, **kwargs: Any) -> _Recorded:
    """IPython's ``@argument``: one ``add_argument`` call, made when the parser is built."""
    return _Recorded("add_argument", *args, **kwargs)


def kwds(**kwargs: Any) -> _Recorded:
    """IPython's ``@kwds``: keywords for the parser, used when it is built."""
    return _Recorded("kwds", **kwargs)


def magic_arguments() -> Callable[[Any], Any]:
    """IPython's ``@magic_arguments()``, except that the parser is built on first use: when a
    magic first parses a line, or when ``%dict_delete?`` asks for the help (IPython calls an
    object's ``getdoc()`` before reading its docstring)."""

    def mark(func: Any) -> Any:
        if not getattr(func, "has_arguments", False):
            func.has_arguments = True
            func.decorators = []
        func.getdoc = lambda: parser_of(func) and func.__doc__
        return func

    return mark


def parser_of(magic: Any) -> Any:
    """The argument parser of ``magic`` (a function or a bound method), built once."""
    func = getattr(magic, "__func__", magic)
    parser = func.__dict__.get("parser")
    if parser is None:
        from IPython.core.magic_arguments import construct_parser

        parser = func.parser = construct_parser(func)
    return parser


def _parse(magic: Any, line: str) -> Any:
    """Parse ``line``, with an unbalanced quote reported as a one-line UsageError."""
    try:
        return parser_of(magic).parse_args(split_line(line))
    except ValueError as exc:
        raise UsageError(f"cannot read the line ({exc}); nothing was sent.") from None


def split_line(line: str) -> list[str]:
    """The words of ``line`` exactly as IPython's ``parse_argstring`` splits them (non-POSIX
    ``shlex``, whitespace-split: a word starting with a quote runs to the same quote, which it
    keeps), in linear time: ``shlex`` grows each word a character at a time, so one long value
    took quadratic time (1.28 million characters: 69 s)."""
    import re  # not at %load_ext: only once a magic runs

    words = []
    for match in re.finditer(_WORDS, line):
        if match.lastgroup == "open":
            raise ValueError("No closing quotation")
        words.append(match.group())
    return words


_WORDS = r"""'[^']*'|"[^"]*"|[^ \t\r\n'"][^ \t\r\n]*|(?P<open>['"])"""


def _parse_ids(magic: Any, line: str) -> Any:
    """``_parse`` for ``%dict_delete``; the usual line (``17``, ``17 18,19``: digits, commas
    and spaces only) is read without running argparse, as argparse reads it: every option at
    its default, the words as the ids."""
    if not _is_plain_ids(line):
        return _parse(magic, line)
    func = getattr(magic, "__func__", magic)
    defaults = func.__dict__.get("plain_defaults")
    if defaults is None:
        defaults = func.plain_defaults = vars(_parse(magic, "0"))
    return argparse.Namespace(**{**defaults, "ids": line.split()})


def _is_plain_ids(line: str) -> bool:
    """ASCII digits first, then only digits, commas, spaces and tabs (of the spaces shlex splits
    on, a line has these two). No regular expression: this module loads with ``%load_ext``."""
    start = line.lstrip(" \t")[:1]
    return "0" <= start <= "9" and all(ch in _PLAIN_CHARS for ch in line)


_PLAIN_CHARS = frozenset("0123456789, \t")


@contextmanager
def _user_errors() -> Iterator[None]:
    """Every mistake the user can fix is reported as IPython's one-line ``UsageError``, with
    what would help worded as the magics' own commands and flags (``hints.MAGIC``)."""
    from ..errors import DictMagicsError, OperationFailedError

    try:
        yield
    except OperationFailedError:
        raise  # asked for (raise_on_failure): the pipeline stops on it
    except DictMagicsError as exc:
        from .hints import MAGIC

        raise UsageError(MAGIC.worded(exc)) from None


@contextmanager
def _listing_errors() -> Iterator[None]:
    """A listing the service cannot give (none at all, malformed, no answer) is one line too:
    nothing was changed, and the message says what happened."""
    from ..errors import ServiceError

    try:
        yield
    except ServiceError as exc:
        from .hints import MAGIC

        raise UsageError(MAGIC.worded(exc)) from None


def _examples(*lines: str) -> _Recorded:
    """The last part of a magic's help (``%dict_delete?``): lines to copy into a cell.

    They go in argparse's epilog, so they come after the options, at the very end.
    """
    return kwds(epilog="\nExamples::\n\n" + "\n".join(f"  {line}" for line in lines))


def _cancelled(message: str) -> str:
    """A declined question, said as the cancellation it is (the operation's words kept)."""
    if message.lower().startswith("cancel"):
        return message
    return f"Cancelled \u2014 {message}"


def _unquoted(text: str | None) -> str | None:
    """A path typed in quotes, as one holding spaces must be, without them: IPython splits a
    magic's line keeping the quotes in the word."""
    if text and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


_TEXT_OPTIONS = {"-p": True, "--profile": True, "--from-lang": True, "--to-lang": True}
"""The options of ``%dict_check``, and whether each takes a value."""


def _split_text_line(line: str) -> tuple[list[str], str]:
    """The options at the start of a ``%dict_check`` line, and the text after them, verbatim:
    the text is not split like arguments, so quotes and apostrophes in it stay as typed
    (``chiffre d'affaires``). ``--`` ends the options; a word that is not an option starts
    the text."""
    options: list[str] = []
    rest = line.strip()
    while rest.startswith("-"):
        word, _, tail = rest.partition(" ")
        if word == "--":
            rest = tail.strip()
            break
        name, equals, _ = word.partition("=")
        if name not in _TEXT_OPTIONS:
            break
        options.append(word)
        rest = tail.strip()
        if _TEXT_OPTIONS[name] and not equals and rest:
            value, _, tail = rest.partition(" ")
            options.append(value)
            rest = tail.strip()
    return options, _unquoted(rest) or ""


def _print_json(data: Any) -> None:
    """A report as the command line's ``--json`` prints it (unsafe characters as escapes)."""
    from .cli_output import dumps

    print(dumps(data, indent=2))


def _in_magic_words(result: Any) -> Any:
    """A delete's, purge's or sync plan's result, set to name what it names (the restore that
    undoes it, the flag that asks for more) in the magics' words."""
    from dataclasses import replace

    from ..models import BatchResult, DeleteResult, SyncPlan
    from .hints import MAGIC

    if isinstance(result, DeleteResult | BatchResult | SyncPlan):
        return replace(result, names=MAGIC.names)
    return result


def _say(note: str | None) -> None:
    if note:
        print(note)


def _warn(message: str) -> None:
    """A warning from an operation (not an error): one line on stderr, in the magics' words."""
    from .hints import MAGIC

    print(f"Warning: {MAGIC.worded(message)}", file=sys.stderr)


class _Keyboard:
    """The ``Prompter`` of the magics: ``input`` and ``getpass`` where the front end has stdin.

    ``confirmations`` keeps what was typed at each confirmation, so a magic can tell a question
    the user declined from any other refusal.
    """

    def __init__(self) -> None:
        self.confirmations: list[str] = []
        self.shown: list[object] = []

    def ask(self, question: str) -> str:
        return self._read(input, question)

    def ask_secret(self, question: str) -> str:
        import getpass

        return self._read(getpass.getpass, question)

    def unanswerable(self) -> str | None:
        """Why nobody can answer here (a kernel that allows no input), before anything is
        asked or shown; ``None`` when someone may."""
        from IPython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)
        if kernel is not None and not getattr(kernel, "_allow_stdin", True):
            return _NO_STDIN
        return None

    def confirm(self, warning: object, question: str) -> str:
        from .hints import MAGIC

        self.shown.append(warning)
        print(MAGIC.text(warning))
        answer = self.ask(question)
        self.confirmations.append(answer)
        return answer

    @staticmethod
    def _read(read: Callable[[str], str], question: str) -> str:
        from ..operations.prompts import NoAnswer

        try:
            return read(question)
        except (StdinNotImplementedError, EOFError):
            raise NoAnswer(_NO_STDIN) from None


def _workers_argument(what: str) -> Callable[[Any], Any]:
    """``-w/--workers``: how many ``what`` (e.g. "additions in flight") at once."""
    return argument(
        "-w",
        "--workers",
        type=int,
        help=f"{what} "
        f"({limits.span(limits.MIN_WORKERS, limits.MAX_WORKERS)}; default: DictMagics.workers)",
    )


_RETRIES = "Times a request that certainly was not acted on is sent again"
_WORKERS = "Requests in flight for several ids (-w overrides)"


class _Bounded(Int):
    """A configurable ``Int(min=..., max=...)`` whose help and refusal name the whole range."""

    def __init__(self, default: int, low: int, high: int, help: str) -> None:
        super().__init__(default, min=low, max=high, help=f"{help}: {limits.span(low, high)}.")
        self.tag(config=True)

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, bool):
            # Int takes True as 1: a switch where a count is meant is a mistake, not a number.
            raise TraitError(
                f"{type(obj).__name__}.{self.name} must be {limits.span(self.min, self.max)}, "
                f"not {value!r}."
            )
        try:
            return super().validate(obj, value)
        except TraitError:
            if not isinstance(value, int) or isinstance(value, bool):
                raise
            raise TraitError(
                f"{type(obj).__name__}.{self.name} must be {limits.span(self.min, self.max)}, "
                f"not {value!r}."
            ) from None


class _Seconds(Float):
    """A configurable ``Float`` that refuses ``True``/``False``: ``Float`` takes them as 1.0 and
    0.0, so ``%config DictMagics.listing_max_age = True`` would quietly mean one second."""

    def validate(self, obj: Any, value: Any) -> Any:
        if isinstance(value, bool):
            raise TraitError(
                f"{type(obj).__name__}.{self.name} must be a number of seconds, not {value!r}."
            )
        return super().validate(obj, value)


def _checked(trait: str, check: Callable[[str], str], value: str) -> str:
    """``check(value)`` for a text trait (empty stays empty), its refusal as a ``TraitError``."""
    from ..errors import DictMagicsError

    if not value.strip():
        return ""
    try:
        return check(value)
    except DictMagicsError as exc:
        said = str(exc)
        if said.startswith(f"{trait} "):  # "auth must be ...": name the setting once
            raise TraitError(f"DictMagics.{said}") from None
        raise TraitError(f"DictMagics.{trait}: {said}") from None


@magics_class
class DictMagics(Magics):
    """Delete user-dictionary entries from IPython; settings via ``%config DictMagics``."""

    profile = Unicode(
        "",
        help="Profile used when -p is not given (empty: $DICT_MAGICS_PROFILE, else 'default').",
    ).tag(config=True)
    base_url = Unicode(
        "",
        help="Base URL used for every profile instead of the stored one (empty: the profile's).",
    ).tag(config=True)
    timeout = _Seconds(
        limits.TIMEOUT, help="Seconds to wait to connect, and for each answer (> 0)."
    ).tag(config=True)
    max_retries = _Bounded(limits.RETRIES, limits.MIN_RETRIES, limits.MAX_RETRIES, _RETRIES)
    workers = _Bounded(limits.WORKERS, limits.MIN_WORKERS, limits.MAX_WORKERS, _WORKERS)
    raise_on_failure = Bool(
        False,
        help="Raise DeletionFailedError when a deletion fails, so a pipeline run stops.",
    ).tag(config=True)
    snapshots = Bool(
        True,
        help="Keep the entries about to be deleted in a snapshot file first, so "
        "%dict_restore can put them back (--no-snapshot turns it off for one line).",
    ).tag(config=True)
    auth = Unicode(
        "",
        help="How requests prove who sends them: 'signature' (every request signed) or "
        "'token' (one token request, then a Bearer token kept in memory only); empty: "
        "$DICT_MAGICS_AUTH, else 'signature'.",
    ).tag(config=True)

    listing_max_age = _Seconds(
        None,
        allow_none=True,
        help="Seconds a delete may take its snapshot's terms from this session's own listing "
        "(kept current by its own deletes, adds and updates) instead of listing afresh first: "
        "saves a round trip per cell, but an edit made elsewhere within that time is not in "
        "the snapshot. 0: always list afresh; None: $DICT_MAGICS_LISTING_MAX_AGE, else 0. "
        "A purge always lists afresh.",
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
        """A refused ``%config`` value is one ``UsageError`` line and changes nothing.

        ``%config`` would log it through the root logger (``ERROR:root:...``).
        """
        try:
            super().update_config(config)
        except TraitError as exc:
            if self.shell is None:
                raise
            self.shell.show_usage_error(UsageError(f"{exc} The setting is unchanged."))

    @validate("profile")
    def _valid_profile(self, proposal: Any) -> str:
        from ..profiles import credentials

        return _checked("profile", credentials.check_profile, proposal["value"])

    @validate("base_url")
    def _valid_base_url(self, proposal: Any) -> str:
        from ..service.http import normalize_base_url

        return _checked("base_url", normalize_base_url, proposal["value"])

    @validate("auth")
    def _valid_auth(self, proposal: Any) -> str:
        from ..operations.context import auth_mode

        return _checked("auth", auth_mode, proposal["value"])

    @validate("timeout")
    def _valid_timeout(self, proposal: Any) -> float:
        from ..operations.context import timeout_ok

        if not timeout_ok(proposal["value"]):
            raise TraitError(f"DictMagics.timeout must be > 0 seconds, not {proposal['value']!r}.")
        return proposal["value"]

    @validate("listing_max_age")
    def _valid_listing_max_age(self, proposal: Any) -> float | None:
        from ..operations.context import age_ok

        value = proposal["value"]
        if value is not None and not age_ok(value):
            raise TraitError(
                "DictMagics.listing_max_age must be a number of seconds >= 0 (0: list afresh "
                f"before every snapshot), not {value!r}."
            )
        return value

    # -- shared steps ------------------------------------------------------------------------

    def _settings(
        self, profile: str | None = None, workers: int | None = None, snapshots: bool = True
    ) -> OperationSettings:
        """``%config DictMagics`` with this line's options on top."""
        from ..operations.context import OperationSettings

        with _user_errors():
            return OperationSettings(
                profile=profile or self.profile or None,
                base_url=self.base_url or None,
                timeout=self.timeout,
                max_retries=self.max_retries,
                workers=self.workers if workers is None else workers,
                raise_on_failure=self.raise_on_failure,
                snapshots=self.snapshots and snapshots,
                auth=self.auth or None,
                listing_max_age=self.listing_max_age,
            )

    def _read(self, magic: Any, line: str) -> tuple[Any, OperationSettings]:
        """The parsed line of ``magic`` and the settings it asks for."""
        args = _parse(magic, line)
        return args, self._settings(args.profile)

    def _expand(self, line: str, local_ns: Mapping[str, Any] | None) -> tuple[str, _IdFormatter]:
        """The line with ``{expr}``/``$name`` expanded, and the formatter holding the ids it
        took out of collections."""
        formatter = _IdFormatter()
        if not any(sign in line for sign in "{}$"):
            return line, formatter  # nothing to expand: no copy of a namespace that grows
        namespace = dict(self.shell.user_ns) if self.shell is not None else {}
        namespace.update(local_ns or {})
        from ..errors import DictMagicsError

        try:
            return formatter.vformat(line, args=[], kwargs=namespace), formatter
        except UsageError:
            raise
        except DictMagicsError as exc:
            from .hints import MAGIC

            raise UsageError(MAGIC.worded(exc)) from None
        except Exception as exc:
            raise UsageError(
                f"cannot expand the ids ({type(exc).__name__}: {exc}); nothing was sent. "
                "Write {{ and $$ for a literal brace or dollar sign."
            ) from None

    def _expanded(self, line: str, local_ns: Mapping[str, Any] | None) -> str:
        """``line`` with ``{expr}`` and ``$name`` expanded as IPython does (left as it is where
        they cannot be), without copying the namespace when there is nothing to expand."""
        if not any(sign in line for sign in "{}$"):
            return line
        namespace = dict(self.shell.user_ns) if self.shell is not None else {}
        namespace.update(local_ns or {})
        try:
            return _LinearDollar().vformat(line, args=[], kwargs=namespace)
        except Exception:
            return line

    def _ids(self, line: str, local_ns: Mapping[str, Any] | None) -> tuple[Any, list[str]]:
        """The parsed line of ``%dict_delete`` and its ids, collections put back."""
        expanded, formatter = self._expand(line, local_ns)
        try:
            args = _parse_ids(self.dict_delete, expanded)
        except UsageError as exc:
            if formatter.marker in str(exc):
                raise UsageError(_NOT_ALONE) from None
            if "required: ID" not in str(exc):
                raise
            raise UsageError("no entry id given (an empty list?); nothing was sent.") from None
        if formatter.marker in (args.profile or ""):
            raise UsageError(_NOT_ALONE)
        from ..models.entry import check_id
        from ..operations.context import split_args

        with _user_errors():
            parts = formatter.restore(split_args(args.ids, check=False))
            return args, [check_id(part) for part in parts]

    # -- the magics --------------------------------------------------------------------------

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_login",
        "%dict_login -p work --base-url https://api.example.com",
        "%dict_login -p work --no-check",
    )
    @argument("-p", "--profile", help="profile to store (default: the current profile)")
    @argument("--base-url", help="service base URL, e.g. https://api.example.com")
    @argument("--access-key", help="access key (asked for when not given)")
    @argument(
        "--check",
        action=argparse.BooleanOptionalAction,
        help="list the dictionary once (read-only) to prove the keys work, without asking "
        "(--no-check: neither ask nor check; default: ask)",
    )
    @_expands
    def dict_login(self, line: str = "") -> None:
        """Store a profile's base URL, access key and secret key in the OS keyring.

        What is not given is asked for; the secret key is only ever typed at a hidden prompt,
        never on the command line, and is never shown afterwards. Then it offers to check the
        keys with one read-only request (a listing); the profile is stored either way.
        """
        from ..operations.login import login

        args, settings = self._read(self.dict_login, line)
        with _user_errors():
            done = login(
                settings,
                _Keyboard(),
                base_url=args.base_url,
                access_key=args.access_key,
                check=args.check,
            )
        print("\n".join(done.lines))

    @line_magic
    @magic_arguments()
    @_examples("%dict_logout", "%dict_logout -p work")
    @argument("-p", "--profile", help="profile to remove (default: the current profile)")
    @_expands
    def dict_logout(self, line: str = "") -> None:
        """Remove a profile's items (base URL, access key, secret key) from the OS keyring."""
        from ..operations.login import logout

        _, settings = self._read(self.dict_logout, line)
        with _user_errors():
            print("\n".join(logout(settings).lines))

    @line_magic
    @magic_arguments()
    @_examples("%dict_status", "%dict_status -p work")
    @argument("-p", "--profile", help="profile to describe (default: the current profile)")
    @_expands
    def dict_status(self, line: str = "") -> ProfileStatus:
        """Show where a profile's settings come from; sends nothing.

        Lists the base URL, the masked access key and which keyring backend (or environment
        variable) holds the secret key, never the secret itself, and warns about a plaintext
        or missing keyring backend.
        """
        from ..operations.status import status

        _, settings = self._read(self.dict_status, line)
        with _user_errors():
            from .hints import MAGIC

            return status(settings).worded(MAGIC.worded)

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_list",
        "%dict_list --from-lang ja --to-lang en",
        "found = %dict_list --match invoice",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument("--match", metavar="TEXT", help="only entries whose source or target contains TEXT")
    @argument("--from-lang", metavar="L", help="only entries from language L (e.g. ja)")
    @argument("--to-lang", metavar="L", help="only entries into language L (e.g. en)")
    @_expands
    def dict_list(self, line: str = "") -> EntryList:
        """List the dictionary's entries (returns an EntryList, shown as a table).

        --match is case-insensitive and looks in both terms. Sends one GET only. The result
        feeds the other magics and pandas: %dict_delete {found.ids}, found.to_pandas(),
        found.to_csv('entries.csv').
        """
        from ..operations.listing import list_entries

        args, settings = self._read(self.dict_list, line)
        with _user_errors(), _listing_errors():
            return list_entries(
                settings, match=args.match, from_lang=args.from_lang, to_lang=args.to_lang
            )

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_lint",
        "report = %dict_lint -p work",
        "%dict_lint --json",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument(
        "--json",
        action="store_true",
        help='print the report as JSON ({"findings": [...], "counts": {...}}) instead',
    )
    def dict_lint(self, line: str = "") -> LintReport | None:
        """Find problems in the dictionary (returns a LintReport); sends one GET only.

        Kinds: duplicate, conflict (one source, several targets), near-duplicate (equal after
        width, case and space folding), too-long, bad-language, whitespace, control, overlap
        (a source term inside another). Each finding names its entries and a fix.
        report.duplicate_ids feeds %dict_delete --dry-run {report.duplicate_ids};
        report.by_kind() and report.to_pandas() slice it. The same works offline on any
        listing: found.lint().
        """
        from ..operations.lint import lint

        args, settings = self._read(self.dict_lint, line)
        with _user_errors(), _listing_errors():
            report = lint(settings)
        if args.json:
            _print_json(report.to_json())
            return None
        return report

    @line_cell_magic
    @magic_arguments()
    @_examples(
        "%dict_check 会議の請求書と見積書と納品書と契約書を送ります。",
        "%dict_check --from-lang ja --to-lang en 本日の会議は中止です。",
        "result = %dict_check {sample}",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument("--from-lang", metavar="L", help="only entries from language L (e.g. ja)")
    @argument("--to-lang", metavar="L", help="only entries into language L (e.g. en)")
    @argument(
        "text",
        nargs="+",
        metavar="TEXT",
        help="the text to check, as typed after the options (quotes not needed); "
        "or the body of a %%%%dict_check cell",
    )
    def dict_check(self, line: str = "", cell: str | None = None) -> CheckReport:
        """Show which entries apply to each sentence of TEXT (returns a CheckReport).

        The service applies at most 3 entries per sentence, the earliest matches first
        (per language pair); this plays that rule on the listing (one GET, no translation
        request): each sentence's matching entries, applied or "not applied (limit 3)", and
        the entries that match but never apply. Sentences end at 。！？, at . ! ? before a
        space, and at line ends. For a longer text use a cell: %%dict_check on the first
        line (options too), the text below it.
        """  # noqa: RUF002 (the full-width marks are meant)
        from ..operations.textcheck import check_text

        options, text = _split_text_line(line)
        if cell is not None:
            if text:
                raise UsageError(
                    "%%dict_check takes options on its first line and the text below it, "
                    "not both; nothing was sent."
                )
            text = cell
        args = _parse(self.dict_check, " ".join([*options, "x"]))
        settings = self._settings(args.profile)
        with _user_errors(), _listing_errors():
            return check_text(settings, text, from_lang=args.from_lang, to_lang=args.to_lang)

    @line_magic
    @no_var_expand
    @needs_local_scope
    @magic_arguments()
    @_examples(
        "%dict_delete 17",
        "%dict_delete 17 18,19 --dry-run",
        "%dict_delete {found.ids}",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @_workers_argument("requests in flight for several ids")
    @argument(
        "--dry-run",
        action="store_true",
        help="show what would be deleted (terms, ids not there); only the listing is fetched",
    )
    @argument(
        "--no-snapshot",
        action="store_true",
        help="do not keep the entries in a snapshot first (they cannot be restored)",
    )
    @argument(
        "ids",
        nargs="+",
        metavar="ID",
        help="entry ids, separated by spaces and/or commas; {expr} and $name expand as in "
        "any line magic, and a list (or other collection) expands to its ids",
    )
    def dict_delete(
        self, line: str = "", local_ns: Mapping[str, Any] | None = None
    ) -> DeleteResult | BatchResult | DryRunResult:
        """Delete one entry (returns a DeleteResult) or several (returns a BatchResult).

        Every id is checked before the first request; the entries are then looked up and kept
        in a snapshot (%dict_restore puts them back), and the results name their terms.
        Several ids run in parallel with a progress bar; the summary lists every failure
        with its reason. --dry-run shows what would go and sends no deletion. A list, an
        EntryList's {found.ids} or a pandas column such as {df['id']} gives its ids.
        """
        from ..errors import DeletionFailedError
        from ..operations.delete import delete, interruption

        args, ids = self._ids(line, local_ns)
        settings = self._settings(args.profile, args.workers, not args.no_snapshot)
        progress = None
        if len(ids) > 1:  # one id is one request: no bar to show
            from .progress import BarSink

            progress = BarSink(shell=self.shell)
        try:
            with _user_errors():
                result = delete(
                    settings,
                    ids,
                    progress=progress,
                    dry_run=args.dry_run,
                    warn=_warn,
                )
        except DeletionFailedError as exc:
            _say(interruption(exc.result))
            raise
        _say(interruption(result))  # type: ignore[arg-type]
        return _in_magic_words(result)

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_purge --dry-run",
        "%dict_purge",
        "%dict_purge -y",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument(
        "-y",
        "--yes",
        action="store_true",
        help="delete at once without asking (for scripts and pipelines)",
    )
    @argument(
        "--dry-run",
        action="store_true",
        help="show how many entries (and which) would be deleted; only the listing is fetched",
    )
    @argument(
        "--no-snapshot",
        action="store_true",
        help="do not keep the entries in a snapshot first (needed where the service has no "
        "listing; they cannot be restored)",
    )
    @_expands
    def dict_purge(self, line: str = "") -> DeleteResult | DryRunResult:
        """Delete EVERY entry of the user dictionary; returns a DeleteResult.

        Lists the dictionary and keeps it in a snapshot first (%dict_restore puts it back),
        then asks you to type delete-all (or the host name), stating how many entries on
        which host and profile, and where the snapshot is; anything else cancels with nothing
        deleted, and stops a Run All there. --yes skips the question. Where the service has
        no listing it refuses unless --no-snapshot.
        """
        from ..errors import UsageProblem
        from ..models.purge import PurgePlan
        from ..operations.context import connect
        from ..operations.purge import purge

        args = _parse(self.dict_purge, line)
        settings = self._settings(args.profile, snapshots=not args.no_snapshot)
        keyboard = _Keyboard()
        with _user_errors(), connect(settings) as (client, _):
            try:
                return _in_magic_words(
                    purge(
                        settings,
                        keyboard,
                        yes=args.yes,
                        dry_run=args.dry_run,
                        client=client,
                        warn=_warn,
                    )
                )
            except UsageProblem as exc:
                said, shown = keyboard.confirmations, keyboard.shown
                stated = shown[-1] if shown else None
                if said and isinstance(stated, PurgePlan) and not stated.accepts(said[-1]):
                    raise UsageError(_cancelled(str(exc))) from None
                raise

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_restore --dry-run",
        "%dict_restore",
        '%dict_restore "{kept[0].path}"',
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @_workers_argument("additions in flight")
    @argument("--dry-run", action="store_true", help="show what would be added; nothing is added")
    @argument(
        "-y",
        "--yes",
        action="store_true",
        help="restore a snapshot taken on another host or profile without asking",
    )
    @argument(
        "snapshot",
        nargs="?",
        metavar="SNAPSHOT",
        help="a snapshot file (default: the latest one of this profile and host; "
        "%%dict_snapshots lists them)",
    )
    @_expands
    def dict_restore(self, line: str = "") -> RestoreResult:
        """Put back what a snapshot holds and the dictionary lacks; returns a RestoreResult.

        Lists the dictionary first and adds only entries whose four terms are missing, so
        running it twice adds nothing the second time. An addition whose answer was lost is
        settled by a listing, never sent again blindly. A snapshot of another host or
        profile is restored only once you confirm (or with -y). After kept = %dict_snapshots,
        "{kept[0].path}" names the newest (in quotes: a path may hold spaces).
        """
        from ..operations.restore import restore
        from .progress import BarSink

        args = _parse(self.dict_restore, line)
        settings = self._settings(args.profile, args.workers)
        with _user_errors():
            return restore(
                settings,
                _unquoted(args.snapshot),
                prompter=_Keyboard(),
                progress=BarSink(shell=self.shell),
                dry_run=args.dry_run,
                yes=args.yes,
                warn=_warn,
            )

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_add en Friday de Freitag",
        "%dict_add ja 金曜日 en Friday --dry-run",
        'added = %dict_add en "purchase order" de Bestellung',
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument("--dry-run", action="store_true", help="show what would be added; send nothing")
    @argument("from_lang", metavar="FROM_LANG", help="source language code (e.g. en, zh-CN)")
    @argument("from_text", metavar="FROM_TEXT", help="source term (quote it if it has spaces)")
    @argument("to_lang", metavar="TO_LANG", help="target language code")
    @argument("to_text", metavar="TO_TEXT", help="target term (quote it if it has spaces)")
    def dict_add(self, line: str = "") -> AddResult | ChangePreview | NoChange:
        """Add one entry; returns an AddResult naming the new id.

        The terms are checked first (at most 255 characters, no control characters, language
        codes the service takes: zh-CN or zh-TW for Chinese); nothing is sent otherwise. The
        service does not return the new id: one listing afterwards finds it, and settles an
        answer that was lost (the request is never sent twice). When an entry with the same
        four terms is already there, nothing is sent: a NoChange names it (a second copy would
        be a duplicate), so running the cell again is harmless.
        """
        from ..operations.add import add

        args, settings = self._read(self.dict_add, line)
        with _user_errors():
            return add(
                settings,
                _unquoted(args.from_lang),
                _unquoted(args.from_text),
                _unquoted(args.to_lang),
                _unquoted(args.to_text),
                dry_run=args.dry_run,
                warn=_warn,
            )

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_update 17 --to-text Freitag",
        '%dict_update 17 --from-text "purchase order" --dry-run',
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument("--from-text", metavar="T", help="new source term")
    @argument("--to-text", metavar="T", help="new target term")
    @argument("--from-lang", metavar="L", help="new source language")
    @argument("--to-lang", metavar="L", help="new target language")
    @argument("--dry-run", action="store_true", help="show old and new terms; send nothing")
    @argument("id", metavar="ID", help="the entry to change")
    def dict_update(self, line: str = "") -> UpdateResult | ChangePreview | NoChange:
        """Change one entry in place (PUT, same id); returns an UpdateResult (old and new).

        Only the fields given change. The entry's old terms are kept in a snapshot first, so
        %dict_restore puts them back under the same id. The new terms are checked before
        anything is sent. When the entry already reads as asked, nothing is sent and no snapshot
        taken: a NoChange says so.
        """
        from ..operations.update import update

        args, settings = self._read(self.dict_update, line)
        with _user_errors():
            return update(
                settings,
                _unquoted(args.id),
                from_lang=_unquoted(args.from_lang),
                from_text=_unquoted(args.from_text),
                to_lang=_unquoted(args.to_lang),
                to_text=_unquoted(args.to_text),
                dry_run=args.dry_run,
                warn=_warn,
            )

    @line_magic
    @magic_arguments()
    @_examples(
        "plan = %dict_sync glossary.csv",
        "%dict_sync glossary.csv --apply",
        "%dict_sync terms.xlsx --pair en:de --delete-missing --apply",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument(
        "--apply",
        action="store_true",
        help="make the changes (a snapshot first; %%dict_restore undoes them); without it, "
        "only the plan is shown",
    )
    @argument(
        "--delete-missing",
        action="store_true",
        help="also delete entries of the file's language pairs that the file lacks",
    )
    @argument("--pair", metavar="FROM:TO", help="languages of a two-column (source, target) file")
    @argument("--format", metavar="F", help="csv, tsv, xlsx or tbx (default: from the name)")
    @argument("--skip-invalid", action="store_true", help="apply the valid rows, skip invalid ones")
    @argument("-y", "--yes", action="store_true", help="delete without asking (with --apply)")
    @_workers_argument("requests in flight")
    @argument("file", metavar="FILE", help="the glossary file (.csv, .tsv, .xlsx, .tbx)")
    def dict_sync(self, line: str = "") -> SyncPlan | SyncResult:
        """Make the dictionary match a glossary file; without --apply, only show the plan.

        A row matches the entry with the same fromLang, fromText and toLang: the same toText
        is unchanged, another an update (PUT); no match is an add (bulk). Entries of the
        file's pairs that it lacks are deleted only with --delete-missing (you are asked
        first, unless -y). Several entries with one source term are a conflict, left alone;
        invalid rows are listed by row number and refused unless --skip-invalid. Applying
        keeps a snapshot first and ends with one listing that verifies every change.
        """
        from ..operations.sync import sync
        from .progress import BarSink

        args = _parse(self.dict_sync, line)
        settings = self._settings(args.profile, args.workers)
        keyboard = _Keyboard()
        with _user_errors():
            return _in_magic_words(
                sync(
                    settings,
                    _unquoted(args.file),
                    apply=args.apply,
                    delete_missing=args.delete_missing,
                    pair=args.pair,
                    format=args.format,
                    skip_invalid=args.skip_invalid,
                    yes=args.yes,
                    prompter=keyboard,
                    progress=BarSink(shell=self.shell),
                    warn=_warn,
                )
            )

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_export glossary.csv",
        "%dict_export terms.xlsx --force",
        "%dict_export backup.tbx -p work",
    )
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument("--format", metavar="F", help="csv, tsv, xlsx or tbx (default: from the name)")
    @argument("--force", action="store_true", help="replace FILE if it exists (else: refused)")
    @argument("file", metavar="FILE", help="where to write (a new file, unless --force)")
    def dict_export(self, line: str = "") -> ExportResult:
        """Write the dictionary to a glossary file (id, fromLang, fromText, toLang, toText).

        A .csv opens right in Excel (UTF-8 with a BOM) and no cell is read as a formula (a
        term starting with = + - @ gets a leading ', which reading strips again); %dict_sync
        of the same file, unedited, plans no change. .xlsx needs pip install
        'dict-magics[xlsx]'. An existing FILE is refused (nothing written) unless --force.
        """
        from ..operations.export import export

        args, settings = self._read(self.dict_export, line)
        with _user_errors(), _listing_errors():
            return export(settings, _unquoted(args.file), format=args.format, overwrite=args.force)

    @line_magic
    @magic_arguments()
    @_examples(
        "%dict_snapshots",
        "%dict_snapshots -p work",
        "kept = %dict_snapshots",
    )
    @argument("-p", "--profile", help="only the snapshots of this profile (default: all)")
    @argument(
        "-n",
        "--limit",
        type=int,
        default=SNAPSHOTS_SHOWN,
        help=f"at most this many, newest first (default {SNAPSHOTS_SHOWN}; 0: all)",
    )
    @_expands
    def dict_snapshots(self, line: str = "") -> SnapshotList:
        """List the snapshots on disk, newest first; sends nothing.

        A snapshot is taken before every delete, purge, update and sync; hand its path to
        %dict_restore, e.g. %dict_restore "{kept[0].path}" after kept = %dict_snapshots.
        """
        from ..operations.history import snapshots

        args = _parse(self.dict_snapshots, line)
        if args.limit < 0:
            raise UsageError(f"-n must be 0 (all) or more, not {args.limit}.")
        with _user_errors():
            found = snapshots(profile=args.profile)
        if args.limit and len(found) > args.limit:
            _say(
                f"the {args.limit} newest of {len(found)} snapshots "
                "(%dict_snapshots -n 0 lists them all)"
            )
            return type(found)(found[: args.limit])
        return found

    @line_magic
    @magic_arguments()
    @_examples("%dict_log", "%dict_log -n 100")
    @argument("-n", type=int, default=20, help="how many of the last requests (default 20)")
    @_expands
    def dict_log(self, line: str = "") -> AuditTable:
        """Show the last requests that could change the dictionary (the audit log); sends
        nothing. Each line: when, profile, host, operation, outcome, and the entry's terms.
        """
        from ..operations.history import audit

        args = _parse(self.dict_log, line)
        with _user_errors():
            return audit(args.n)

    @line_magic
    @magic_arguments()
    @_examples("%dict_panel", "%dict_panel -p work")
    @argument("-p", "--profile", help="profile whose credentials to use")
    @_expands
    def dict_panel(self, line: str = "") -> Any:
        """Show the confirm-then-delete widget panel and return it.

        Delete and Delete all only arm a confirmation that names what goes and where; a purge
        also needs delete-all (or the host name) typed. Requests run in the background.
        """
        from .panel import DictPanel

        _, settings = self._read(self.dict_panel, line)
        with _user_errors():
            panel = DictPanel.from_settings(settings)
        if not _shows_widgets(self.shell):
            _say(
                "the panel is a widget: it shows in Jupyter (JupyterLab, Notebook, VS Code), not "
                "in a plain terminal; here use %dict_list, %dict_delete and %dict_purge"
            )
        return panel
