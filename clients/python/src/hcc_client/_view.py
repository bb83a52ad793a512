"""How an answer is drawn: the endpoint's view (the service publishes it on the operation as
`x-hcc-view` in /v1/openapi.json) made into a self-contained Vega-Lite specification — its tables
filled from the request and the answer by JSON pointer. The same rules as the service's
src/plugin/view.ts (docs/explore.md), kept equal by a test that runs both on every built-in view:

- `items`: an array of objects -> one row per object;
- `entries`: an object -> one row per member: `key`, and the member's fields or `value`;
- `series`: an object of arrays -> one row per number: `key`, `index`, `value`, `length`;
- `values`: an array of scalars -> one row per value: `index`, `value`;
- `object`: an object -> one row of its scalar fields.

Every table is also a parameter of its name (an `object` table its row, another its rows). The
specification's `description` names values by pointer, `{/answer/probability|.1%}`, written in
here; an answer that withholds fields (the small-cell rule) gets a subtitle line saying how many
and why."""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Dict, List, Mapping, Optional

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


_PLACEHOLDER = re.compile(r"\{(/[^{}|?]*)(?:\?([^{}|]*))?(?:\|(,?)(?:\.(\d))?([f%]?))?\}")


def _format_number(x: float, grouped: bool, digits: int, percent: bool) -> str:
    """A number as a format asks, ties rounded away from zero (as JavaScript's toFixed does)."""
    value = x * 100 if percent else x
    fixed = Decimal(value if value != 0 else 0.0).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    text = format(fixed, ",f" if grouped else "f")
    return text + ("%" if percent else "")


def _js_number(x: float) -> str:
    """A number as JavaScript's String(x) writes it (ECMA-262 Number::toString): the shortest
    digits that read back as x, in positional notation from 1e-7 up to 1e21, else exponential."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(abs(x))).normalize().as_tuple()
    text = "".join(map(str, digits))
    k = len(text)
    n = int(exponent) + k
    if k <= n <= 21:
        body = text + "0" * (n - k)
    elif 0 < n <= 21:
        body = text[:n] + "." + text[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + text
    else:
        e = n - 1
        body = (text if k == 1 else text[0] + "." + text[1:]) + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return ("-" if x < 0 else "") + body


def _written(value: Any, absent: Optional[str], fmt: Optional[tuple]) -> str:
    """One value written into a description: null (withheld by the small-cell rule) as "withheld"."""
    if value is None:
        return "withheld"
    if value is _MISSING:
        return "not given" if absent is None else absent
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if fmt is not None:
            return _format_number(float(value), *fmt)
        return str(value) if isinstance(value, int) else _js_number(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def describe(template: str, request: Any, answer: Any) -> str:
    """A description or title with each `{pointer?absent|format}` written in from the request and the answer."""

    def one(m: "re.Match[str]") -> str:
        pointer, absent, grouped, digits, kind = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        fmt = None if grouped is None and kind is None else (grouped == ",", int(digits or 0), kind == "%")
        return _written(_at_pointer({"request": request, "answer": answer}, pointer), absent, fmt)

    return _PLACEHOLDER.sub(one, template)


def _written_in(node: Any, request: Any, answer: Any, text: bool = False) -> Any:
    """A specification with its description and every text title written in (never an expression)."""
    if isinstance(node, str):
        return describe(node, request, answer) if text else node
    if isinstance(node, list):
        return [_written_in(x, request, answer, text) for x in node]
    if not isinstance(node, dict):
        return node
    out: Dict[str, Any] = {}
    for k, v in node.items():
        if k == "title" and isinstance(v, dict):
            out[k] = {tk: _written_in(tv, request, answer, tk in ("text", "subtitle")) for tk, tv in v.items()}
        else:
            out[k] = _written_in(v, request, answer, k in ("title", "description"))
    return out


def withheld_line(answer: Any, min_cell_size: Optional[int] = None) -> Optional[str]:
    """The line a chart of an answer with withheld fields carries, or None when nothing was."""
    def listed(o: Any) -> int:
        value = o.get("suppressed") if isinstance(o, dict) else None
        return len(value) if isinstance(value, list) else 0

    # The answer's own fields are listed in its `suppressed`, its view data's in `view_data.suppressed`.
    count = listed(answer) + (listed(answer.get("view_data")) if isinstance(answer, dict) else 0)
    if count == 0:
        return None
    rule = "fewer patients than the minimum cell size" if min_cell_size is None else f"fewer than {min_cell_size} patients"
    return f"Withheld: {count} {'value rests' if count == 1 else 'values rest'} on {rule} (the small-cell rule)"


def _with_subtitle(title: Any, line: str) -> Dict[str, Any]:
    base = dict(title) if isinstance(title, dict) else {"text": ""} if title is None else {"text": title}
    before = base.get("subtitle")
    lines = [] if before is None else list(before) if isinstance(before, list) else [before]
    return {**base, "subtitle": [*lines, line]}


def view_spec(view: Mapping[str, Any], request: Any, answer: Any, min_cell_size: Optional[int] = None) -> Dict[str, Any]:
    """The self-contained Vega-Lite specification of an answer: the view's specification with its
    tables inlined (`datasets`), each table also a parameter of its name, its description written
    in, and a subtitle line where the answer withholds a value (`min_cell_size`: the threshold in
    force, the catalog's, when known)."""
    tables = [(name, table, table_rows(table, request, answer)) for name, table in view["data"].items()]
    params: List[Any] = [
        {"name": name, "value": (rows[0] if rows else {}) if table["rows"] == "object" else rows} for name, table, rows in tables
    ]
    spec: Dict[str, Any] = {"$schema": SCHEMA, **_written_in(view["spec"], request, answer)}
    withheld = withheld_line(answer, min_cell_size)
    if withheld is not None:
        spec["title"] = _with_subtitle(spec.get("title"), withheld)
    own = spec.get("params")
    params += own if isinstance(own, list) else []
    if params:
        spec["params"] = params
    spec["datasets"] = {name: rows for name, _, rows in tables}
    return spec


__all__ = ["SCHEMA", "describe", "table_rows", "view_spec", "withheld_line"]
