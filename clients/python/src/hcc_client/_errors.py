"""The service's problem answers (RFC 9457 application/problem+json) as exceptions."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Type


class HccError(Exception):
    """A problem the service answered with, or a call that got no answer.

    `status` (0 when no answer came), the stable `code` (e.g. ``unknown_drug``), `detail`,
    `errors` (for a 400: each wrong request value as ``{"path": json_pointer, "message": ...}``),
    `suggestions`, `context`, `request_id` (quote it when reporting a problem), `retry_after`
    (seconds, when the service said) and the whole `problem` body."""

    def __init__(self, status: int, problem: Mapping[str, Any], retry_after: Optional[float] = None) -> None:
        self.status = status
        self.problem: Dict[str, Any] = dict(problem)
        self.code: str = str(problem.get("code", "unknown"))
        self.detail: str = str(problem.get("detail", ""))
        self.errors: List[Dict[str, str]] = list(problem.get("errors") or [])
        self.suggestions: List[str] = list(problem.get("suggestions") or [])
        self.context: Dict[str, Any] = dict(problem.get("context") or {})
        self.request_id: Optional[str] = problem.get("request_id")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.code}: {self.detail}" if status else f"{self.code}: {self.detail}")


class BadRequestError(HccError):
    """400: the body does not match the endpoint's schema (see `errors`), or is not JSON."""


class AuthenticationError(HccError):
    """401: no token, or a token that is unknown, revoked or expired."""


class NotFoundError(HccError):
    """404: no endpoint has this path."""


class ConflictError(HccError):
    """409: a request with this Idempotency-Key is still being answered."""


class PayloadTooLargeError(HccError):
    """413: the body is larger than 1 MiB."""


class UnprocessableError(HccError):
    """422: well-formed but unanswerable (an unknown drug, a cohort under the minimum cell size, ...)."""


class RateLimitError(HccError):
    """429: a burst or daily limit is used up (`limit` says which, `retry_after` when it frees)."""

    @property
    def limit(self) -> Optional[str]:
        """``burst`` or ``daily``."""
        value = self.problem.get("limit")
        return value if isinstance(value, str) else None


class InternalServerError(HccError):
    """500: a defect in the service or a plugin; report the `request_id`."""


class ServiceUnavailableError(HccError):
    """503: starting, loading data, or a dependency not ready; retry after `retry_after` seconds."""


class HccConnectionError(HccError):
    """No answer: the service could not be reached."""


class HccTimeoutError(HccError, TimeoutError):
    """No answer within the timeout."""


_BY_STATUS: Dict[int, Type[HccError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    422: UnprocessableError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}


def error_for(status: int, problem: Mapping[str, Any], retry_after: Optional[float]) -> HccError:
    """The exception of a problem answer: the class of its status, else HccError."""
    return _BY_STATUS.get(status, HccError)(status, problem, retry_after)
