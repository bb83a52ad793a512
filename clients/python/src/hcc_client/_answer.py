"""Answers as the client returns them: the JSON object itself (a dict) with typed properties."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Type, TypeVar

A = TypeVar("A", bound="Answer")

#: The members of an answer that are tables, in the order they are looked for.
TABLES = ("periods", "predicted_trajectory", "axis_breakdown", "contributing_factors")


class Answer(Dict[str, Any]):
    """A JSON object from the service. It is the mapping as it came (index it, iterate it, dump it
    with json.dumps); the generated subclasses add a typed property per documented field."""

    def rows(self, member: Optional[str] = None) -> List[Dict[str, Any]]:
        """The answer's table as a list of flat rows: a population's `periods`, a temporal answer's
        `predicted_trajectory` (one row per step ahead), a drug answer's `axis_breakdown` (one row
        per axis) or a risk answer's `contributing_factors`. `member` picks one by name."""
        name = member if member is not None else next((t for t in TABLES if t in self), None)
        if name is None or name not in self:
            raise KeyError(f"this answer has no table (looked for {member or ', '.join(TABLES)})")
        value = self[name]
        if isinstance(value, list):
            return [dict(row) for row in value]
        if name == "predicted_trajectory":
            steps = max((len(v) for v in value.values()), default=0)
            return [{"step": i + 1, **{axis: v[i] for axis, v in value.items() if i < len(v)}} for i in range(steps)]
        return [{"axis": key, **dict(row)} for key, row in value.items()]

    def to_pandas(self, member: Optional[str] = None) -> Any:
        """The answer's table (see `rows`) as a pandas DataFrame. pandas is optional: installed
        only if you want this (`pip install pandas`)."""
        try:
            import pandas
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e
        rows = self.rows(member)
        frame = pandas.DataFrame(rows)
        index = "step" if rows and "step" in rows[0] else "axis" if rows and "axis" in rows[0] else None
        return frame.set_index(index) if index is not None else frame


def _one(cls: Type[A], value: Any) -> Any:
    return None if value is None else cls(value)


def _many(cls: Type[A], value: Any) -> Any:
    return None if value is None else [cls(v) for v in value]


def _values(cls: Type[A], value: Any) -> Any:
    return None if value is None else {k: cls(v) for k, v in value.items()}


