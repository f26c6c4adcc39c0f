"""The IPython magics: argument parsing, prompts and display only.

Every request goes through ``session.make_client`` and the client; every user mistake (a bad
id, missing credentials, an unusable keyring, an unanswerable prompt) becomes one ``UsageError``
line before anything is sent. This module loads with ``%load_ext`` and therefore imports
nothing heavy: requests, urllib3, ipywidgets and keyring load on first use.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic import Magics, line_magic, magics_class, needs_local_scope, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.utils.text import DollarFormatter
from traitlets import Bool, Float, Int, TraitError, Unicode, validate

from ..errors import DeletionFailedError, DictMagicsError
from ..operations.user_input import (
    MAX_RETRIES,
    MAX_WORKERS,
    purge_confirmed,
    purge_question,
    split_ids,
)
from ..profiles.secret import Secret
from ..service.paths import check_id, host_of, normalize_base_url

if TYPE_CHECKING:
    from ..profiles.credentials import Credentials
    from ..profiles.status import ProfileStatus
    from ..service.client import DictionaryClient
    from ..service.models import BatchResult, DeleteResult

__all__ = ["DeletionFailedError", "DictMagics"]

_NO_STDIN = "this front end cannot answer prompts (no stdin, e.g. nbclient or papermill)"


class _IdFormatter(DollarFormatter):
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
            self.held[token] = check_id(item)
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


def _parse(magic: Any, line: str) -> Any:
    """``parse_argstring``, with an unbalanced quote reported as a one-line UsageError."""
    try:
        return parse_argstring(magic, line)
    except ValueError as exc:
        raise UsageError(f"cannot read the line ({exc}); nothing was sent.") from None


@contextmanager
def _user_errors() -> Iterator[None]:
    """Every mistake the user can fix is reported as IPython's one-line ``UsageError``."""
    try:
        yield
    except DictMagicsError as exc:
        raise UsageError(str(exc)) from None


def _ask(prompt: str, *, secret: bool, no_stdin: str) -> str:
    """Ask the user at the keyboard; a front end without stdin gets ``no_stdin`` as a UsageError."""
    import getpass

    try:
        return getpass.getpass(prompt) if secret else input(prompt)
    except (StdinNotImplementedError, EOFError):
        raise UsageError(no_stdin) from None


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
    timeout = Float(15.0, help="Seconds to wait to connect, and for each answer (> 0).").tag(
        config=True
    )
    max_retries = Int(
        3, help=f"Times a request that certainly was not acted on is sent again (0..{MAX_RETRIES})."
    ).tag(config=True)
    workers = Int(
        4, help=f"Requests in flight for several ids (1..{MAX_WORKERS}; -w overrides)."
    ).tag(config=True)
    raise_on_failure = Bool(
        False,
        help="Raise DeletionFailedError when a deletion fails, so a pipeline run stops.",
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

    # -- validation of %config values ------------------------------------------------------

    @validate("profile")
    def _valid_profile(self, proposal: Any) -> str:
        from ..profiles import credentials

        value = proposal["value"]
        if not value.strip():
            return ""
        try:
            return credentials.check_profile(value)
        except DictMagicsError as exc:
            raise TraitError(str(exc)) from None

    @validate("base_url")
    def _valid_base_url(self, proposal: Any) -> str:
        value = proposal["value"]
        if not value.strip():
            return ""
        try:
            return normalize_base_url(value)
        except DictMagicsError as exc:
            raise TraitError(str(exc)) from None

    @validate("timeout")
    def _valid_timeout(self, proposal: Any) -> float:
        if not (math.isfinite(proposal["value"]) and proposal["value"] > 0):
            raise TraitError(f"DictMagics.timeout must be > 0 seconds, not {proposal['value']!r}.")
        return proposal["value"]

    @validate("max_retries")
    def _valid_max_retries(self, proposal: Any) -> int:
        if not 0 <= proposal["value"] <= MAX_RETRIES:
            raise TraitError(
                f"DictMagics.max_retries must be 0..{MAX_RETRIES}, not {proposal['value']!r}."
            )
        return proposal["value"]

    @validate("workers")
    def _valid_workers(self, proposal: Any) -> int:
        if not 1 <= proposal["value"] <= MAX_WORKERS:
            raise TraitError(
                f"DictMagics.workers must be 1..{MAX_WORKERS}, not {proposal['value']!r}."
            )
        return proposal["value"]

    # -- shared steps ------------------------------------------------------------------------

    def _profile(self, given: str | None) -> str:
        from ..profiles import credentials

        with _user_errors():
            return credentials.check_profile(given or self.profile or credentials.default_profile())

    def _client(
        self, given_profile: str | None, workers: int | None = None
    ) -> tuple[DictionaryClient, Credentials]:
        """Credentials + settings -> (client, credentials); a UsageError if that cannot be."""
        from ..operations import session

        profile = self._profile(given_profile)
        with _user_errors():
            return session.make_client(
                profile,
                base_url=self.base_url or None,
                timeout=self.timeout,
                max_retries=self.max_retries,
                workers=workers or self.workers,
            )

    def _finish(self, result: DeleteResult | BatchResult) -> DeleteResult | BatchResult:
        """Return the result to be displayed, or raise it for a pipeline run."""
        if not result.ok and self.raise_on_failure:
            raise DeletionFailedError(result)
        return result

    def _expand(self, line: str, local_ns: Mapping[str, Any] | None) -> tuple[str, _IdFormatter]:
        """The line with ``{expr}``/``$name`` expanded, and the formatter holding the ids it
        took out of collections."""
        namespace = dict(self.shell.user_ns) if self.shell is not None else {}
        namespace.update(local_ns or {})
        formatter = _IdFormatter()
        try:
            return formatter.vformat(line, args=[], kwargs=namespace), formatter
        except UsageError:
            raise
        except DictMagicsError as exc:
            raise UsageError(str(exc)) from None
        except Exception as exc:
            raise UsageError(
                f"cannot expand the ids ({type(exc).__name__}: {exc}); nothing was sent. "
                "Write {{ and $$ for a literal brace or dollar sign."
            ) from None

    # -- the magics --------------------------------------------------------------------------

    @line_magic
    @magic_arguments()
    @argument("-p", "--profile", help="profile to store (default: the current profile)")
    @argument("--base-url", help="service base URL, e.g. https://api.example.com")
    @argument("--access-key", help="access key (asked for when not given)")
    def dict_login(self, line: str = "") -> None:
        """Store a profile's base URL, access key and secret key in the OS keyring.

        What is not given is asked for; the secret key is only ever typed at a hidden prompt,
        never on the command line, and is never shown afterwards.
        """
        from ..profiles import credentials

        args = _parse(self.dict_login, line)
        profile = self._profile(args.profile)
        no_stdin = (
            f"cannot ask for the keys: {_NO_STDIN}. Run %dict_login in an interactive "
            f"notebook or terminal, or set {credentials.ENV_BASE_URL}, "
            f"{credentials.ENV_ACCESS_KEY} and {credentials.ENV_SECRET_KEY} instead."
        )
        with _user_errors():
            credentials.check_backend(profile, "store")
            base_url = args.base_url or self._ask_base_url(profile, no_stdin)
            base_url = normalize_base_url(base_url)
            access_key = args.access_key or _ask(
                f"Access key for {host_of(base_url)}: ", secret=True, no_stdin=no_stdin
            )
            if not access_key.strip():
                raise UsageError("no access key given; nothing was stored.")
            secret_key = Secret(
                _ask(
                    f"Secret key for {host_of(base_url)} (hidden): ", secret=True, no_stdin=no_stdin
                )
            )
            if not secret_key:
                raise UsageError("no secret key given; nothing was stored.")
            saved = credentials.store(profile, base_url, access_key, secret_key)
            backend = credentials.backend_info()
        print(
            f"Stored profile {saved.profile!r} in the keyring ({backend.name}): "
            f"base URL {saved.base_url}, access key {saved.masked_access_key}, "
            "secret key saved (not shown)."
        )
        if backend.warning:
            print(f"Warning: {backend.warning}.")
        overridden = credentials.env_items(profile)
        if overridden:
            print(
                f"Note: {', '.join(sorted(overridden.values()))} set in the environment "
                f"override the stored values for profile {profile!r}."
            )

    def _ask_base_url(self, profile: str, no_stdin: str) -> str:
        from ..profiles import credentials

        default = self.base_url or credentials.stored_base_url(profile) or ""
        shown = f" [{default}]" if default else ""
        answer = _ask(f"Base URL{shown}: ", secret=False, no_stdin=no_stdin).strip()
        if not (answer or default):
            raise UsageError("no base URL given; nothing was stored.")
        return answer or default

    @line_magic
    @magic_arguments()
    @argument("-p", "--profile", help="profile to remove (default: the current profile)")
    def dict_logout(self, line: str = "") -> None:
        """Remove a profile's items (base URL, access key, secret key) from the OS keyring."""
        from ..profiles import credentials

        args = _parse(self.dict_logout, line)
        profile = self._profile(args.profile)
        with _user_errors():
            removed = credentials.delete_profile(profile)
            overridden = credentials.env_items(profile)
        if removed:
            print(f"Removed profile {profile!r} from the keyring ({', '.join(removed)}).")
        else:
            print(f"Profile {profile!r} had nothing stored in the keyring.")
        if overridden:
            print(
                f"Note: {', '.join(sorted(overridden.values()))} still set in the environment "
                f"for profile {profile!r}."
            )

    @line_magic
    @magic_arguments()
    @argument("-p", "--profile", help="profile to describe (default: the current profile)")
    def dict_status(self, line: str = "") -> ProfileStatus:
        """Show where a profile's settings come from; sends nothing.

        Lists the base URL, the masked access key and which keyring backend (or environment
        variable) holds the secret key, never the secret itself, and warns about a plaintext
        or missing keyring backend.
        """
        from ..profiles.status import profile_status

        args = _parse(self.dict_status, line)
        profile = self._profile(args.profile)
        with _user_errors():
            return profile_status(profile, base_url=self.base_url or None)

    @line_magic
    @no_var_expand
    @needs_local_scope
    @magic_arguments()
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument(
        "-w",
        "--workers",
        type=int,
        help=f"requests in flight for several ids (1..{MAX_WORKERS}; default: DictMagics.workers)",
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
    ) -> DeleteResult | BatchResult:
        """Delete one entry (returns a DeleteResult) or several (returns a BatchResult).

        Every id is checked before the first request. Several ids run in parallel with a
        progress bar; the summary lists every failure with its reason.
        """
        expanded, formatter = self._expand(line, local_ns)
        try:
            args = _parse(self.dict_delete, expanded)
        except UsageError as exc:
            if formatter.marker in str(exc):
                raise UsageError(_NOT_ALONE) from None
            if "required: ID" not in str(exc):
                raise
            raise UsageError("no entry id given (an empty list?); nothing was sent.") from None
        if formatter.marker in (args.profile or ""):
            raise UsageError(_NOT_ALONE)
        with _user_errors():
            ids = formatter.restore(split_ids(" ".join(args.ids)))
        if not ids:
            raise UsageError("no entry id given; nothing was sent.")
        workers = self.workers if args.workers is None else args.workers
        if not 1 <= workers <= MAX_WORKERS:
            raise UsageError(f"-w/--workers must be 1..{MAX_WORKERS}, not {workers}.")
        client, _ = self._client(args.profile, workers)
        try:
            if len(ids) == 1:
                result = client.delete_entry(ids[0])
            else:
                result = self._delete_many(client, ids, workers)
        finally:
            client.close()
        return self._finish(result)

    def _delete_many(self, client: DictionaryClient, ids: list[str], workers: int) -> BatchResult:
        from .progress import delete_with_progress

        with _user_errors():
            return delete_with_progress(client, ids, workers, shell=self.shell)

    @line_magic
    @magic_arguments()
    @argument("-p", "--profile", help="profile whose credentials to use")
    @argument(
        "-y",
        "--yes",
        action="store_true",
        help="delete at once without asking (for scripts and pipelines)",
    )
    def dict_purge(self, line: str = "") -> DeleteResult | BatchResult:
        """Delete EVERY entry of the user dictionary; returns a DeleteResult.

        Asks you to type delete-all (or the host name) first, naming the profile and host at
        stake; anything else cancels with nothing sent. --yes skips the question.
        """
        args = _parse(self.dict_purge, line)
        client, creds = self._client(args.profile)
        try:
            if not args.yes and not self._confirm_purge(creds.profile, client.host):
                raise UsageError(
                    f"purge not confirmed: nothing was deleted (profile {creds.profile!r}, "
                    f"{client.host})."
                )
            result = client.delete_all()
        finally:
            client.close()
        return self._finish(result)

    def _confirm_purge(self, profile: str, host: str) -> bool:
        print(
            f"This deletes EVERY entry of the user dictionary of profile {profile!r} at {host} "
            "(how many is unknown: the service cannot count them). It cannot be undone."
        )
        answer = _ask(
            purge_question(host),
            secret=False,
            no_stdin=f"%dict_purge needs a typed confirmation, but {_NO_STDIN}. "
            "Nothing was sent. Use %dict_purge --yes to purge without asking.",
        )
        return purge_confirmed(answer, host)

    @line_magic
    @magic_arguments()
    @argument("-p", "--profile", help="profile whose credentials to use")
    def dict_panel(self, line: str = "") -> Any:
        """Show the confirm-then-delete widget panel and return it."""
        args = _parse(self.dict_panel, line)
        client, creds = self._client(args.profile)
        try:
            from .panel import DictPanel

            with _user_errors():
                return DictPanel(client, profile=creds.profile, workers=self.workers)
        except BaseException:
            client.close()
            raise
