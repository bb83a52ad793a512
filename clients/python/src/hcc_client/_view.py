"""How an answer is drawn: the endpoint's view (the service publishes it on the operation as
`x-hcc-view` in /v1/openapi.json) made into a self-contained Vega-Lite specification — its tables
filled from the request and the answer by JSON pointer. The same rules as the service's
src/plugin/view.ts (docs/explore.md), kept equal by a test that runs both on every built-in view:

- `items`: an array of objects -> one row per object;
- `entries`: an object -> one row per member: `key`, and the member's fields or `value`;
- `series`: an object of arrays -> one row per number: `key`, `index`, `value`, `length`;
- `values`: an array of scalars -> one row per value: `index`, `value`;
- `object`: an object -> one row of its scalar fields.

Every table is also a parameter of its name (an `object` table its row, another its rows)."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

#: The Vega-Lite version the service's views are written for.
SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"

_MISSING = object()


def _at_pointer(document: Any, pointer: str) -> Any:
    """The value a JSON pointer (RFC 6901) reaches in a document, or _MISSING."""
    if pointer == "":
        return document
    here = document
    for raw in pointer[1:].split("/"):
        segment = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(here, dict):
            here = here.get(segment, _MISSING)
        elif isinstance(here, list) and segment.isdigit() and int(segment) < len(here):
            here = here[int(segment)]
        else:
            return _MISSING
    return here


def _scalars(value: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in value.items() if not isinstance(v, (dict, list))}


def table_rows(table: Mapping[str, Any], request: Any, answer: Any) -> List[Dict[str, Any]]:
    """The rows of one table of a view; none where its pointer reaches nothing of its kind."""
    value = _at_pointer({"request": request, "answer": answer}, table["from"])
    kind = table["rows"]
    if kind == "items":
        return [dict(o) for o in value if isinstance(o, dict)] if isinstance(value, list) else []
    if kind == "entries":
        if not isinstance(value, dict):
            return []
        return [{"key": k, **_scalars(v)} if isinstance(v, dict) else {"key": k, "value": v} for k, v in value.items()]
    if kind == "series":
        if not isinstance(value, dict):
            return []
        return [
            {"key": k, "index": i, "value": x, "length": len(xs)}
            for k, xs in value.items()
            if isinstance(xs, list)
            for i, x in enumerate(xs)
        ]
    if kind == "values":
        return [{"index": i, "value": x} for i, x in enumerate(value)] if isinstance(value, list) else []
    if kind == "object":
        return [_scalars(value)] if isinstance(value, dict) else []
    return []


def view_spec(view: Mapping[str, Any], request: Any, answer: Any) -> Dict[str, Any]:
    """The self-contained Vega-Lite specification of an answer: the view's specification with its
    tables inlined (`datasets`) and each table also a parameter of its name."""
    tables = [(name, table, table_rows(table, request, answer)) for name, table in view["data"].items()]
    params: List[Any] = [
        {"name": name, "value": (rows[0] if rows else {}) if table["rows"] == "object" else rows} for name, table, rows in tables
    ]
    spec: Dict[str, Any] = {"$schema": SCHEMA, **view["spec"]}
    own = spec.get("params")
    params += own if isinstance(own, list) else []
    if params:
        spec["params"] = params
    spec["datasets"] = {name: rows for name, _, rows in tables}
    return spec


__all__ = ["SCHEMA", "table_rows", "view_spec"]
