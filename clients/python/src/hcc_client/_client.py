"""The HTTP client: the standard library's urllib, the service's retry and idempotency rules."""

from __future__ import annotations

import email.utils
import json
import os
import random
import socket
import time
import urllib.error
import urllib.request
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from . import __version__
from ._answer import Answer
from ._errors import HccConnectionError, HccTimeoutError, error_for
from ._generated import Endpoints

#: Statuses retried as Retry-After says (a burst limit, a service starting or a lock held).
RETRIED = (429, 503)


def retry_after_seconds(header: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds a Retry-After header asks for (delta-seconds or an HTTP date), or None."""
    if header is None:
        return None
    text = header.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class RateLimit:
    """The limits after a call, from its RateLimit and RateLimit-Policy headers (IETF httpapi
    RateLimit fields): per limit name (``burst``, ``daily``), what is left (`remaining`), the
    seconds until capacity frees (`reset`) and the quota (`limit`)."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self.items: Dict[str, Dict[str, int]] = {}
        for name, params in _structured_list(headers.get("ratelimit-policy", "")):
            self.items.setdefault(name, {})["limit"] = params.get("q", 0)
        for name, params in _structured_list(headers.get("ratelimit", "")):
            item = self.items.setdefault(name, {})
            if "r" in params:
                item["remaining"] = params["r"]
            if "t" in params:
                item["reset"] = params["t"]

    def remaining(self, name: str = "burst") -> Optional[int]:
        return self.items.get(name, {}).get("remaining")

    def reset(self, name: str = "burst") -> Optional[int]:
        return self.items.get(name, {}).get("reset")

    def limit(self, name: str = "burst") -> Optional[int]:
        return self.items.get(name, {}).get("limit")

    def __repr__(self) -> str:
        return f"RateLimit({self.items!r})"


def _structured_list(text: str) -> List[Tuple[str, Dict[str, int]]]:
    """`"burst";r=49;t=60, "daily";r=990` → [("burst", {"r": 49, "t": 60}), ("daily", {"r": 990})]."""
    out: List[Tuple[str, Dict[str, int]]] = []
    for member in (m.strip() for m in text.split(",")):
        if member == "":
            continue
        name, *params = [p.strip() for p in member.split(";")]
        values: Dict[str, int] = {}
        for param in params:
            key, _, value = param.partition("=")
            if value.lstrip("-").isdigit():
                values[key] = int(value)
        out.append((name.strip('"'), values))
    return out


class Response:
    """What the last call's answer said besides its body: status, headers (lower-case names),
    request id and limits."""

    def __init__(self, status: int, headers: Mapping[str, str]) -> None:
        self.status = status
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.request_id = self.headers.get("x-request-id")
        self.rate_limit = RateLimit(self.headers)


class Client(Endpoints):
    """A client of the HCC medical-intelligence service.

    `base_url` defaults to $HCC_BASE_URL and `token` to $HCC_TOKEN. Every POST carries an
    Idempotency-Key (yours, or a new UUID) kept across its retries, so a retried call is charged
    once. A 429 or 503 is retried up to `retries` times after the wait its Retry-After asks for
    (else `backoff` seconds, doubled each time, with jitter) — unless that wait is longer than
    `max_retry_wait` (a daily limit): then it is raised at once. Problems are raised as HccError
    subclasses; `last_response` holds the last answer's status, headers and rate limits."""

    def __init__(
        self,
        base_url: Optional[str] = None,
        token: Optional[str] = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        backoff: float = 0.25,
        sleep: Callable[[float], None] = time.sleep,
        charts: bool = True,
    ) -> None:
        url = base_url if base_url is not None else os.environ.get("HCC_BASE_URL")
        if not url:
            raise ValueError("no base_url: pass one, or set HCC_BASE_URL (e.g. http://localhost:8080)")
        self.base_url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("HCC_TOKEN")
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.backoff = backoff
        self._sleep = sleep
        self.last_response: Optional[Response] = None
        self._views: Optional[Dict[str, Any]] = None
        self._disclosure: Optional[Dict[str, Any]] = None
        self.charts = charts

    def call(self, path: str, body: Optional[Mapping[str, Any]] = None, *, idempotency_key: Optional[str] = None, timeout: Optional[float] = None) -> Answer:
        """POST `body` to any endpoint (a third-party plugin's, say) and return its answer."""
        request = dict(body or {})
        return Answer(self._request("POST", path, request, idempotency_key=idempotency_key, timeout=timeout))._asked(self, path, request)

    def _view_of(self, path: str) -> Optional[Dict[str, Any]]:
        """The view an endpoint declares (`x-hcc-view` in /v1/openapi.json), read once per client."""
        if self._views is None:
            document = self._request("GET", "/v1/openapi.json", None)
            self._views = {
                p: ops["post"]["x-hcc-view"]
                for p, ops in document.get("paths", {}).items()
                if isinstance(ops, dict) and isinstance(ops.get("post"), dict) and "x-hcc-view" in ops["post"]
            }
        return self._views.get(path)

    def _min_cell_size(self) -> Optional[int]:
        """The threshold of the small-cell rule in force (the catalog's `disclosure.min_cell_size`),
        read once per client; None when the catalog does not say."""
        if self._disclosure is None:
            self._disclosure = self._request("GET", "/v1/catalog", None).get("disclosure") or {}
        size = self._disclosure.get("min_cell_size")
        return size if isinstance(size, int) else None

    def _request(
        self,
        method: str,
        path: str,
        body: Optional[Dict[str, Any]],
        *,
        idempotency_key: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        headers = {"Accept": "application/json", "User-Agent": f"hcc-client-python/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if method == "POST":
            headers["Content-Type"] = "application/json"
            if self.charts:
                # The view representation where the endpoint has one: the answer and the data its
                # chart draws beyond it (`view_data`, kept beside the answer by Answer._asked).
                headers["Accept"] = "application/vnd.hcc.view+json, application/json;q=0.9"
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
            data = json.dumps(body if body is not None else {}).encode("utf-8")
        attempt = 0
        while True:
            status, answer_headers, text = self._send(method, self.base_url + path, data, headers, timeout)
            self.last_response = Response(status, answer_headers)
            if 200 <= status < 300:
                parsed = json.loads(text) if text else {}
                return parsed if isinstance(parsed, dict) else {"value": parsed}
            asked = retry_after_seconds(self.last_response.headers.get("retry-after"))
            if status in RETRIED and attempt < self.retries:
                wait = asked if asked is not None else self.backoff * 2 ** attempt * (0.5 + random.random())
                if wait <= self.max_retry_wait:
                    self._sleep(wait)
                    attempt += 1
                    continue
            raise error_for(status, _problem(status, text), asked)

    def _send(self, method: str, url: str, data: Optional[bytes], headers: Dict[str, str], timeout: Optional[float]) -> Tuple[int, Dict[str, str], str]:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout if timeout is None else timeout) as res:
                return res.status, dict(res.headers.items()), res.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            with e:
                return e.code, dict(e.headers.items()), e.read().decode("utf-8", errors="replace")
        except (socket.timeout, TimeoutError) as e:
            raise HccTimeoutError(0, {"code": "timeout", "detail": f"{method} {url}: no answer within the timeout"}) from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, (socket.timeout, TimeoutError)):
                raise HccTimeoutError(0, {"code": "timeout", "detail": f"{method} {url}: no answer within the timeout"}) from e
            raise HccConnectionError(0, {"code": "connection_failed", "detail": f"{method} {url}: {e.reason}"}) from e


def _problem(status: int, text: str) -> Dict[str, Any]:
    """The problem body of an error answer (one that is not JSON kept as its detail)."""
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict):
            return parsed
    except ValueError:
        pass
    return {"code": f"http_{status}", "detail": text[:500]}


__all__ = ["Client", "RateLimit", "Response", "retry_after_seconds"]
