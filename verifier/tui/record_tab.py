"""F3, the record tab: a form generated from the signed schema, or a record file; her record stays in memory."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Select, Static

from verifier.data.tables import number_label
from verifier.data.schema import Attribute, Schema
from verifier.errors import VerifierError
from verifier.releases.record import parse_number, parse_record, read_record
from verifier.text import literal, plural

__all__ = ["RecordTab"]


class RecordTab(VerticalScroll):
    """Numbers checked as she types, categories from a list; posts :class:`RecordTab.Checked` with her record."""

    class Checked(Message):
        """A complete, valid record (rank keys in schema order) to check."""

        def __init__(self, keys: np.ndarray) -> None:
            super().__init__()
            self.keys = keys

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._schema: Schema | None = None

    def compose(self) -> ComposeResult:
        yield Static("Type your own values; they stay in this window.", markup=False)
        yield Vertical(id="fields")
        with Horizontal(classes="row"):
            yield Static("Or a record file", classes="name", markup=False)
            yield Input(id="record-file", compact=True, placeholder="my_record.json or .csv")
        with Horizontal(classes="buttons"):
            yield Button("Load file", id="load", compact=True)
            yield Button("Check my record", id="check", compact=True)
        yield Static("", id="record-status", markup=False)

    def clear(self) -> None:
        """Forget the form and anything she typed."""
        self._schema = None
        self.query_one("#fields", Vertical).remove_children()
        self.query_one("#record-file", Input).value = ""
        self.status("")

    async def build_form(self, schema: Schema) -> None:
        self._schema = schema
        fields = self.query_one("#fields", Vertical)
        await fields.remove_children()
        rows = []
        for j, attr in enumerate(schema.attributes):
            role = {"quasi_identifier": " (QI)", "sensitive": " (sensitive)"}.get(attr.role or "", "")
            label = literal(attr.name) + role
            if attr.kind == "numeric":
                field: Input | Select = Input(id=f"field-{j}", compact=True, placeholder="a number")
            else:
                options = [(Text(literal(c)), k) for k, c in enumerate(attr.categories or ())]
                field = Select(options, id=f"field-{j}", compact=True, prompt="choose ...")
            rows.append(Horizontal(Static(label, classes="name", markup=False), field, classes="row"))
            rows.append(Static("", id=f"error-{j}", classes="error -empty", markup=False))
        await fields.mount_all(rows)

    def status(self, message: str) -> None:
        self.query_one("#record-status", Static).update(literal(message))

    def _field_error(self, j: int, message: str) -> None:
        error = self.query_one(f"#error-{j}", Static)
        error.update(message)
        error.set_class(not message, "-empty")
        self.query_one(f"#field-{j}").set_class(bool(message), "-invalid")

    @on(Input.Changed, ".row > Input")
    def _typed(self, event: Input.Changed) -> None:
        wid = event.input.id or ""
        if wid.startswith("field-"):
            value = event.value
            why = parse_number(value)[1] if value.strip() else None
            self._field_error(int(wid.split("-")[1]), f"this value {why}" if why else "")

    @on(Input.Submitted, "#record-file")
    @on(Button.Pressed, "#load")
    def _load_pressed(self) -> None:
        self.load_file()

    def load_file(self, path: str | None = None) -> None:
        """Fill the form from a record file (``path``, else the file field) and check it."""
        assert self._schema is not None
        if path is not None:
            self.query_one("#record-file", Input).value = path
        path = self.query_one("#record-file", Input).value.strip()
        if not path:
            self.status("Type the path of your record file first.")
            return
        try:
            keys = read_record(path, self._schema)
        except VerifierError as exc:
            self.status(exc.diagnostic())
            return
        for j, attr in enumerate(self._schema.attributes):
            widget = self.query_one(f"#field-{j}")
            if isinstance(widget, Input):
                widget.value = number_label(float(keys[j]))
            else:
                widget.value = int(keys[j])
        self.status(f"Loaded {literal(path)}.")
        self.post_message(self.Checked(keys))

    @on(Button.Pressed, "#check")
    @on(Input.Submitted, ".row > Input")
    def _check_pressed(self, event: Input.Submitted | Button.Pressed) -> None:
        if isinstance(event, Input.Submitted) and not (event.input.id or "").startswith("field-"):
            return
        keys = self._form_record()
        if keys is not None:
            self.post_message(self.Checked(keys))

    def _form_record(self) -> np.ndarray | None:
        """Her record from the form, or None with every field's problem shown beside it."""
        assert self._schema is not None
        fields: dict[str, Any] = {}
        problems = 0
        for j, attr in enumerate(self._schema.attributes):
            widget = self.query_one(f"#field-{j}")
            if isinstance(widget, Input):
                value = widget.value
                why = "is required" if not value.strip() else parse_number(value)[1]
                self._field_error(j, f"this value {why}" if why else "")
                problems += why is not None
                fields[attr.name] = value
            else:
                chosen = widget.value
                if isinstance(chosen, bool) or not isinstance(chosen, int):  # Select.NULL: nothing chosen
                    self._field_error(j, "choose one of the categories")
                    problems += 1
                    continue
                self._field_error(j, "")
                fields[attr.name] = _category(attr, chosen)
        if problems:
            self.status(f"{plural(problems, 'field')} {'needs' if problems == 1 else 'need'} your attention.")
            return None
        try:
            return parse_record(fields, self._schema, source="the form")
        except VerifierError as exc:  # every field was checked above; kept for a schema the form cannot express
            self.status(exc.diagnostic())
            return None


def _category(attr: Attribute, index: int) -> str:
    assert attr.categories is not None
    return attr.categories[index]
