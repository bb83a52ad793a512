"""Answers as the client returns them: the JSON object itself (a dict) with typed properties."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

from ._view import view_spec, withheld_line

A = TypeVar("A", bound="Answer")

#: The media type JupyterLab draws a Vega-Lite specification from (its renderer is Vega-Lite 5;
#: the service's views use nothing Vega-Lite 6 added, so they draw the same there).
VEGALITE_MIME = "application/vnd.vegalite.v5+json"
VEGALITE_5_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

#: The members of an answer that are tables, in the order they are looked for.
TABLES = ("periods", "predicted_trajectory", "axis_breakdown", "contributing_factors")


class Answer(Dict[str, Any]):
    """A JSON object from the service. It is the mapping as it came (index it, iterate it, dump it
    with json.dumps); the generated subclasses add a typed property per documented field."""

    _asked_as: Optional[Tuple[Any, str, Any]] = None
    _view_data: Any = None

    def _asked(self: A, client: Any, path: str, request: Any) -> A:
        """Notes the call this answer answers (the client, the path, the request), for `chart`,
        and keeps the view representation's `view_data` beside the answer, not in it: the mapping
        stays exactly the answer."""
        self._asked_as = (client, path, request)
        self._view_data = self.pop("view_data", None)
        return self

    def chart(self) -> Optional[Dict[str, Any]]:
        """The answer's chart: the self-contained Vega-Lite specification its endpoint's view draws
        from the request and this answer — with its view data, which the client asks for unless
        made with charts=False (docs/explore.md) — or None when the endpoint declares no view or the
        answer was not returned by a client call. The view is read once per client from the
        service's OpenAPI document."""
        if self._asked_as is None:
            return None
        client, path, request = self._asked_as
        view = client._view_of(path)
        if view is None:
            return None
        answer = dict(self) if self._view_data is None else {**self, "view_data": self._view_data}
        # The threshold is named only where a value was withheld (in the answer or its view data):
        # the catalog is read for that alone.
        min_cell_size = client._min_cell_size() if withheld_line(answer) is not None else None
        return view_spec(view, request, answer, min_cell_size)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Dict[str, Any]:
        """How Jupyter shows the answer: its chart (JupyterLab's Vega-Lite renderer) and, for
        every other frontend, its text. Showing never raises: without a chart, the text alone."""
        bundle: Dict[str, Any] = {"text/plain": repr(self)}
        try:
            spec = self.chart()
        except Exception:  # noqa: BLE001 - the service unreachable while displaying: text only
            spec = None
        if spec is not None:
            bundle[VEGALITE_MIME] = {**spec, "$schema": VEGALITE_5_SCHEMA}
        return bundle

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


