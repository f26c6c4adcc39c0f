"""A real keyring backend kept in a JSON file, so a test and its child processes share it.

Child processes select it with ``PYTHON_KEYRING_BACKEND=file_keyring.FileKeyring`` (this folder on
``PYTHONPATH``) and ``DICT_MAGICS_TEST_KEYRING=<file>``. Priority -1: keyring never picks it alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

ENV_FILE = "DICT_MAGICS_TEST_KEYRING"


class FileKeyring(KeyringBackend):
    """Items in ``$DICT_MAGICS_TEST_KEYRING`` as ``{"service\\x00username": password}``."""

    priority = -1

    @property
    def path(self) -> Path:
        return Path(os.environ[ENV_FILE])

    def _load(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def _save(self, items: dict[str, str]) -> None:
        self.path.write_text(json.dumps(items), encoding="utf-8")

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\x00{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        items = self._load()
        items[f"{service}\x00{username}"] = password
        self._save(items)

    def delete_password(self, service: str, username: str) -> None:
        items = self._load()
        if items.pop(f"{service}\x00{username}", None) is None:
            raise PasswordDeleteError(username)
        self._save(items)


def read_items(path: Path) -> dict[tuple[str, str], str]:
    """The file's items as ``{(service, username): password}``, for assertions."""
    if not path.exists():
        return {}
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {tuple(key.split("\x00", 1)): value for key, value in raw.items()}
