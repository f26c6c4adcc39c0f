"""The panel's two small forms: edit the terms of one entry, and add an entry.

Each form only collects and checks what the user typed (with the vendor's rules in
``models/terms.py``, so nothing the service would refuse is ever sent) and proposes an
``Entry``; the panel arms the confirmation and sends. No widget here sends anything.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import ipywidgets as widgets

from ..models import Entry
from ..models.terms import LANGUAGE_CODES, MAX_TERM_CHARS, Problem, entry_problems

__all__ = [
    "GLOSSARY_SUFFIXES",
    "AddForm",
    "CheckForm",
    "EditForm",
    "ProblemsView",
    "SyncForm",
    "language_options",
]

GLOSSARY_SUFFIXES = (".csv", ".tsv", ".xlsx", ".tbx")
"""The glossary files a sync reads."""


def language_options() -> list[str]:
    """Every code the service takes, the common ones first (then the rest alphabetically)."""
    common = ["ja", "en", "zh-CN", "zh-TW", "ko", "de", "fr", "es"]
    return common + sorted(LANGUAGE_CODES - set(common))


def _term_text(description: str, placeholder: str) -> widgets.Text:
    return widgets.Text(
        description=description,
        placeholder=placeholder,
        continuous_update=True,
        layout=widgets.Layout(width="26em"),
    )


class EditForm(widgets.VBox):
    """The source and target terms of one entry (``entry``), to change in place.

    ``proposal()`` is the entry with the typed terms and the problems that keep it from being
    sent (empty when it can be sent); languages and id stay.
    """

    def __init__(self, **kwargs: Any) -> None:
        self.entry: Entry | None = None
        self.title = widgets.HTML()
        self.source_text = _term_text("Source", f"source term (at most {MAX_TERM_CHARS})")
        self.target_text = _term_text("Target", f"target term (at most {MAX_TERM_CHARS})")
        self.review_button = widgets.Button(
            description="Review change\u2026",
            tooltip="Show the old and new terms before anything is sent",
        )
        self.close_button = widgets.Button(description="Close", tooltip="Leave the entry as it is")
        super().__init__(
            [
                self.title,
                self.source_text,
                self.target_text,
                widgets.HBox([self.review_button, self.close_button]),
            ],
            **kwargs,
        )
        self.add_class("dict-magics-edit")

    def load(self, entry: Entry, title_html: str) -> None:
        """Fill the form with ``entry``'s terms."""
        self.entry = entry
        self.title.value = title_html
        self.source_text.value = entry.from_text
        self.target_text.value = entry.to_text

    def proposal(self) -> tuple[Entry | None, list[Problem]]:
        """The entry as typed (``None`` if no entry is loaded), and what is wrong with it."""
        old = self.entry
        if old is None:
            return None, []
        new = Entry(
            old.id, old.from_lang, self.source_text.value, old.to_lang, self.target_text.value
        )
        return new, entry_problems(*new.terms)

    def set_disabled(self, disabled: bool) -> None:
        for widget in (self.source_text, self.target_text, self.review_button, self.close_button):
            widget.disabled = disabled


class AddForm(widgets.VBox):
    """Two language pickers (every code the service takes) and two terms."""

    def __init__(self, **kwargs: Any) -> None:
        options = language_options()
        self.from_lang = widgets.Dropdown(
            options=options, value="ja", description="From", layout=widgets.Layout(width="12em")
        )
        self.to_lang = widgets.Dropdown(
            options=options, value="en", description="To", layout=widgets.Layout(width="12em")
        )
        self.from_text = _term_text("Source", "source term")
        self.to_text = _term_text("Target", "target term")
        self.add_button = widgets.Button(
            description="Add\u2026", tooltip="Check the entry, then confirm before it is sent"
        )
        super().__init__(
            [
                widgets.HBox([self.from_lang, self.from_text]),
                widgets.HBox([self.to_lang, self.to_text]),
                self.add_button,
            ],
            **kwargs,
        )
        self.add_class("dict-magics-add")

    def proposal(self) -> tuple[Entry, list[Problem]]:
        """The entry as typed (no id yet), and what is wrong with it."""
        new = Entry(
            "", self.from_lang.value, self.from_text.value, self.to_lang.value, self.to_text.value
        )
        return new, entry_problems(*new.terms)

    def clear(self) -> None:
        """Empty the terms (the languages stay: the next entry is likely of the same pair)."""
        self.from_text.value = ""
        self.to_text.value = ""

    def set_disabled(self, disabled: bool) -> None:
        for widget in (self.from_lang, self.to_lang, self.from_text, self.to_text):
            widget.disabled = disabled
        self.add_button.disabled = disabled


class SyncForm(widgets.VBox):
    """A glossary file to upload, the sync's options, and the plan (HTML) once made."""

    def __init__(self, **kwargs: Any) -> None:
        self.upload = widgets.FileUpload(
            accept=",".join(GLOSSARY_SUFFIXES), multiple=False, description="Glossary file"
        )
        self.pair_text = widgets.Text(
            description="Pair",
            placeholder="en:de (only for source, target columns)",
            layout=widgets.Layout(width="24em"),
        )
        self.delete_missing = widgets.Checkbox(
            description="also delete entries of the file's language pairs that it lacks",
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
        self.skip_invalid = widgets.Checkbox(
            description="skip invalid rows", indent=False, layout=widgets.Layout(width="auto")
        )
        self.plan_button = widgets.Button(
            description="Plan\u2026", tooltip="Read the file and compare: nothing is sent"
        )
        self.plan_html = widgets.HTML()
        super().__init__(
            [
                widgets.HBox([self.upload, self.pair_text]),
                self.delete_missing,
                self.skip_invalid,
                self.plan_button,
                self.plan_html,
            ],
            **kwargs,
        )
        self.add_class("dict-magics-sync")

    def uploaded(self) -> tuple[str, bytes] | None:
        """The uploaded file's name (no folders; a glossary suffix) and content, if any."""
        files = self.upload.value
        if not files:
            return None
        found = files[0]
        name = PurePath(str(found["name"]).replace("\\", "/")).name or "glossary.csv"
        if not name.lower().endswith(GLOSSARY_SUFFIXES):
            name += ".csv"
        return name, bytes(found["content"])

    def set_disabled(self, disabled: bool) -> None:
        for widget in (
            self.upload,
            self.pair_text,
            self.delete_missing,
            self.skip_invalid,
            self.plan_button,
        ):
            widget.disabled = disabled


class ProblemsView(widgets.VBox):
    """The lint findings of the listing, and one "Select …" button per kind found."""

    def __init__(self, **kwargs: Any) -> None:
        self.find_button = widgets.Button(
            description="Find problems",
            tooltip="Look for duplicates, conflicts, stray spaces, ... in the entries listed "
            "(nothing is sent)",
        )
        self.report_html = widgets.HTML()
        self.select_box = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self.select_buttons: dict[str, widgets.Button] = {}
        super().__init__([self.find_button, self.select_box, self.report_html], **kwargs)
        self.add_class("dict-magics-problems")

    def set_buttons(self, buttons: dict[str, widgets.Button]) -> None:
        """Replace the "Select …" buttons (the old ones are closed)."""
        old = self.select_buttons
        self.select_buttons = buttons
        self.select_box.children = tuple(buttons.values())
        for button in old.values():
            button.close()

    def set_disabled(self, disabled: bool) -> None:
        self.find_button.disabled = disabled
        for button in self.select_buttons.values():
            button.disabled = disabled


class CheckForm(widgets.VBox):
    """A text to check against the entries (which apply to each sentence, 3 at most)."""

    def __init__(self, **kwargs: Any) -> None:
        self.text = widgets.Textarea(
            placeholder="Paste a text: each sentence shows the entries that apply to it",
            layout=widgets.Layout(width="100%", height="6em"),
        )
        self.check_button = widgets.Button(
            description="Check", tooltip="Nothing is sent: the entries listed are used"
        )
        self.report_html = widgets.HTML()
        super().__init__([self.text, self.check_button, self.report_html], **kwargs)
        self.add_class("dict-magics-check")

    def set_disabled(self, disabled: bool) -> None:
        self.text.disabled = disabled
        self.check_button.disabled = disabled
