"""The panel's forms (edit, add, sync, problems, check): widgets only; the panel reads them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath

import ipywidgets as widgets

from ..models import Entry
from ..models.terms import LANGUAGE_CODES, MAX_TERM_CHARS
from .panel_html import escape, pair

GLOSSARY_SUFFIXES = (".csv", ".tsv", ".xlsx", ".tbx")
COMMON_LANGUAGES = ["ja", "en", "zh-CN", "zh-TW", "ko", "de", "fr", "es"]


def text_input(description: str, placeholder: str, width: str = "26em") -> widgets.Text:
    return widgets.Text(
        description=description, placeholder=placeholder, layout=widgets.Layout(width=width)
    )


def _button(description: str, tooltip: str = "") -> widgets.Button:
    return widgets.Button(description=description, tooltip=tooltip)


class EditForm(widgets.VBox):
    """The two terms of ``entry`` (its id and languages stay)."""

    def __init__(self) -> None:
        self.entry: Entry | None = None
        self.title = widgets.HTML()
        self.source_text = text_input("Source", f"source term (at most {MAX_TERM_CHARS})")
        self.target_text = text_input("Target", f"target term (at most {MAX_TERM_CHARS})")
        self.review_button = _button(
            "Review change\u2026", "Show the old and new terms before anything is sent"
        )
        self.close_button = _button("Close", "Leave the entry as it is")
        buttons = widgets.HBox([self.review_button, self.close_button])
        super().__init__(
            [self.title, self.source_text, self.target_text, buttons],
            layout=widgets.Layout(border="1px solid #d0d7de", padding="0.3em 0.6em"),
        )
        self.add_class("dict-magics-edit")

    def load(self, entry: Entry) -> None:
        self.entry, langs = entry, escape(pair(entry.from_lang, entry.to_lang))
        edit = f"<b>Edit entry <code>{escape(entry.id)}</code></b>"
        self.title.value = f"{edit} ({langs}; the languages stay)"
        self.source_text.value, self.target_text.value = entry.from_text, entry.to_text

    def typed(self) -> Entry | None:
        """The entry with the terms as typed (``None``: no entry loaded)."""
        if self.entry is None:
            return None
        return replace(self.entry, from_text=self.source_text.value, to_text=self.target_text.value)


class AddForm(widgets.VBox):
    """Two language pickers (every code the service takes, common ones first) and two terms."""

    def __init__(self) -> None:
        codes = COMMON_LANGUAGES + sorted(LANGUAGE_CODES - set(COMMON_LANGUAGES))
        self.from_lang = widgets.Dropdown(options=codes, value="ja", description="From")
        self.to_lang = widgets.Dropdown(options=codes, value="en", description="To")
        self.from_lang.layout.width = self.to_lang.layout.width = "12em"
        self.from_text = text_input("Source", "source term")
        self.to_text = text_input("Target", "target term")
        self.add_button = _button("Add\u2026", "Check the entry, then confirm before it is sent")
        rows = [widgets.HBox([self.from_lang, self.from_text])]
        super().__init__([*rows, widgets.HBox([self.to_lang, self.to_text]), self.add_button])
        self.add_class("dict-magics-add")

    def typed(self) -> Entry:
        """The entry as typed (no id yet)."""
        source, target = self.from_text.value, self.to_text.value
        return Entry("", self.from_lang.value, source, self.to_lang.value, target)


class SyncForm(widgets.VBox):
    """A glossary file to upload, the sync's options, and its plan once made."""

    def __init__(self) -> None:
        self.upload = widgets.FileUpload(
            accept=",".join(GLOSSARY_SUFFIXES), multiple=False, description="Glossary file"
        )
        self.pair_text = text_input("Pair", "en:de (only for source, target columns)", "24em")
        missing = "also delete entries of the file's language pairs that it lacks"
        self.delete_missing = widgets.Checkbox(description=missing, indent=False)
        self.skip_invalid = widgets.Checkbox(description="skip invalid rows", indent=False)
        self.delete_missing.layout.width = self.skip_invalid.layout.width = "auto"
        self.plan_button = _button("Plan\u2026", "Read the file and compare: nothing is sent")
        self.plan_html = widgets.HTML()
        rows = [widgets.HBox([self.upload, self.pair_text]), self.delete_missing]
        rows += [self.skip_invalid, self.plan_button, self.plan_html]
        super().__init__(rows)
        self.add_class("dict-magics-sync")

    def uploaded(self) -> tuple[str, bytes] | None:
        """The uploaded file's name (no folders; a glossary suffix) and content, if any."""
        if not self.upload.value:
            return None
        found = self.upload.value[0]
        name = PurePath(str(found["name"]).replace("\\", "/")).name or "glossary.csv"
        if not name.lower().endswith(GLOSSARY_SUFFIXES):
            name += ".csv"
        return name, bytes(found["content"])


class ProblemsView(widgets.VBox):
    """The lint findings of the listing, and a "Select …" button per kind found."""

    def __init__(self) -> None:
        looks = "Duplicates, conflicts, stray spaces, ... in the entries listed (nothing is sent)"
        self.find_button = _button("Find problems", looks)
        self.report_html = widgets.HTML()
        self.select_box = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap"))
        self.select_buttons: dict[str, widgets.Button] = {}  # the panel sets them
        super().__init__([self.find_button, self.select_box, self.report_html])
        self.add_class("dict-magics-problems")


class CheckForm(widgets.VBox):
    """A text to check against the entries (which apply to each line, 3 at most)."""

    def __init__(self) -> None:
        self.text = widgets.Textarea(
            placeholder="Paste a text: each line shows the entries that apply to it",
            layout=widgets.Layout(width="100%", height="6em"),
        )
        self.check_button = _button("Check", "Nothing is sent: the entries listed are used")
        self.report_html = widgets.HTML()
        super().__init__([self.text, self.check_button, self.report_html])
        self.add_class("dict-magics-check")
