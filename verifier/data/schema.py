"""Schemas: which columns a table has, of what kind, in what role (SPEC section 1).

A schema lists every released column with its ``kind`` (``numeric``,
``ordinal`` or ``nominal``) and ``role`` (``quasi_identifier``, ``sensitive``
or ``other``); ordinal and nominal columns carry the ordered list of their
``categories``, which is how they are ranked. The schema is public: it goes
into a release's manifest, so everyone ranks the same way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from verifier.text import has_layout, literal, same_name
from verifier.errors import InvalidInputError

__all__ = ["KINDS", "ROLES", "Attribute", "Schema", "nominal_order"]

KINDS = ("numeric", "ordinal", "nominal")
ROLES = ("quasi_identifier", "sensitive", "other")


@dataclass(frozen=True)
class Attribute:
    """One column of a table.

    ``categories`` is the rank order of an ordinal or nominal column (position 0
    ranks lowest); ``None`` for numeric columns, and for a nominal column whose
    order is still to be derived from the data (:func:`nominal_order`).
    """

    name: str
    kind: str = "numeric"
    role: str = "quasi_identifier"
    categories: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidInputError(f"attribute name must be a non-blank string, got {self.name!r}")
        if has_layout(self.name):
            raise InvalidInputError(f"attribute name '{literal(self.name)}' holds a control or direction-changing "
                                    "character (shown escaped); a column name is one line of plain text: rename it",
                                    reason="NAME_INVALID")
        if self.kind not in KINDS:
            raise InvalidInputError(f"attribute {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.role not in ROLES:
            raise InvalidInputError(f"attribute {self.name!r}: role must be one of {ROLES}, got {self.role!r}")
        if self.kind == "numeric" and self.categories is not None:
            raise InvalidInputError(f"attribute {self.name!r}: a numeric attribute has no categories")
        if self.kind == "ordinal" and not self.categories:
            raise InvalidInputError(f"attribute {self.name!r}: an ordinal attribute needs its ordered categories")
        if self.categories is not None:
            cats = tuple(self.categories)
            if not all(isinstance(c, str) for c in cats):
                raise InvalidInputError(f"attribute {self.name!r}: categories must be strings")
            dup = [c for c, k in Counter(cats).items() if k > 1]
            if dup:
                raise InvalidInputError(f"attribute {self.name!r}: category {dup[0]!r} is listed twice")
            object.__setattr__(self, "categories", cats)

    @property
    def is_categorical(self) -> bool:
        return self.kind != "numeric"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "role": self.role}
        if self.categories is not None:
            out["categories"] = list(self.categories)
        return out


@dataclass(frozen=True)
class Schema:
    """The ordered attributes of a table."""

    attributes: tuple[Attribute, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        attrs = tuple(self.attributes)
        if not attrs:
            raise InvalidInputError("a schema needs at least one attribute")
        dup = [n for n, k in Counter(same_name(a.name) for a in attrs).items() if k > 1]  # one name, two spellings
        if dup:
            raise InvalidInputError(f"attribute {dup[0]!r} is listed twice in the schema")
        object.__setattr__(self, "attributes", attrs)

    @classmethod
    def all_numeric(cls, names: Iterable[str]) -> "Schema":
        """The default of the paper-level tools: every column numeric and a quasi-identifier."""
        return cls(tuple(Attribute(name) for name in names))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Schema":
        if not isinstance(data, Mapping) or not isinstance(data.get("attributes"), list):
            raise InvalidInputError('a schema is an object {"attributes": [...]}')
        attrs = []
        for i, item in enumerate(data["attributes"], start=1):
            if not isinstance(item, Mapping):
                raise InvalidInputError(f"attribute {i} of the schema is not an object")
            unknown = set(item) - {"name", "kind", "role", "categories"}
            if unknown:
                raise InvalidInputError(f"attribute {i} of the schema has unknown field {sorted(unknown)[0]!r}")
            cats = item.get("categories")
            if cats is not None and not isinstance(cats, list):
                raise InvalidInputError(f"attribute {i} of the schema: categories must be a list")
            attrs.append(
                Attribute(
                    name=item.get("name"),  # type: ignore[arg-type]
                    kind=item.get("kind", "numeric"),
                    role=item.get("role", "quasi_identifier"),
                    categories=tuple(cats) if cats is not None else None,
                )
            )
        return cls(tuple(attrs))

    def to_dict(self) -> dict[str, Any]:
        return {"attributes": [a.to_dict() for a in self.attributes]}

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.attributes]

    @property
    def kinds(self) -> list[str]:
        """Each column's kind (``numeric``, ``ordinal``, ``nominal``), in order."""
        return [a.kind for a in self.attributes]

    def __len__(self) -> int:
        return len(self.attributes)

    def __getitem__(self, name: str) -> Attribute:
        for a in self.attributes:
            if a.name == name:
                return a
        raise KeyError(name)

    def with_categories(self, name: str, categories: Sequence[str]) -> "Schema":
        """A copy with ``categories`` filled in for attribute ``name``."""
        return Schema(
            tuple(
                Attribute(a.name, a.kind, a.role, tuple(categories)) if a.name == name else a
                for a in self.attributes
            )
        )


def nominal_order(values: Iterable[str]) -> tuple[str, ...]:
    """The default rank order of a nominal column (SPEC section 1).

    By decreasing frequency in the original data, ties by the category's text,
    so that everyone who has the same data ranks it the same way.

    >>> nominal_order(["b", "a", "c", "a", "b"])
    ('a', 'b', 'c')
    """
    counts = Counter(values)
    return tuple(sorted(counts, key=lambda c: (-counts[c], c)))
