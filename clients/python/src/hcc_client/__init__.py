"""Python client of the HCC medical-intelligence query service (standard library only).

    from hcc_client import Client
    client = Client()                      # HCC_BASE_URL and HCC_TOKEN from the environment
    answer = client.population(analysis_type="trend", cohort_definition={"conditions": ["type_2_diabetes"]})
    answer.cohort_size, answer["periods"], answer.to_pandas()

See docs/client-python.md.
"""

__version__ = "1.1.0"

from ._answer import Answer  # noqa: E402
from ._client import Client, RateLimit, Response, retry_after_seconds  # noqa: E402
from ._errors import (  # noqa: E402
    AuthenticationError,
    BadRequestError,
    ConflictError,
    HccConnectionError,
    HccError,
    HccTimeoutError,
    InternalServerError,
    NotFoundError,
    PayloadTooLargeError,
    RateLimitError,
    ServiceUnavailableError,
    UnprocessableError,
)
from ._generated import *  # noqa: E402,F401,F403

__all__ = [
    "Answer",
    "AuthenticationError",
    "BadRequestError",
    "Client",
    "ConflictError",
    "HccConnectionError",
    "HccError",
    "HccTimeoutError",
    "InternalServerError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimit",
    "RateLimitError",
    "Response",
    "ServiceUnavailableError",
    "UnprocessableError",
    "retry_after_seconds",
]
