"""The official Python client for the settleflow API.

>>> from settleflow import Settleflow
>>> client = Settleflow(api_key="sk_test_…", base_url="https://127.0.0.1:8443",
...                     ca="settleflow-data/tls/cert.pem")
>>> wf = client.workflows.create(product="ticket-triage", customer_id="cus_123",
...                              payload={"ticketId": "T-42"})

Standard library only; Python 3.9 or newer.
"""

from __future__ import annotations

from ._client import DEFAULT_BASE_URL, OPERATIONS, Events, Products, Quotes, Settleflow, Workflows
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    Headers,
    IdempotencyError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SettleflowError,
    SignatureVerificationError,
)
from ._models import (
    EVENT_TYPES,
    WORKFLOW_STATUSES,
    Event,
    EventData,
    Failure,
    Margin,
    Money,
    Page,
    Product,
    Quote,
    QuoteMargin,
    Settlement,
    Workflow,
)
from ._version import __version__
from ._webhooks import DEFAULT_TOLERANCE, SIGNATURE_HEADER, Webhooks, webhooks

__all__ = [
    "Settleflow",
    "Workflows",
    "Quotes",
    "Products",
    "Events",
    "Webhooks",
    "webhooks",
    "OPERATIONS",
    "DEFAULT_BASE_URL",
    "DEFAULT_TOLERANCE",
    "SIGNATURE_HEADER",
    "SettleflowError",
    "APIError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "IdempotencyError",
    "RateLimitError",
    "APIConnectionError",
    "APITimeoutError",
    "SignatureVerificationError",
    "ConfigurationError",
    "Headers",
    "Workflow",
    "Money",
    "Margin",
    "QuoteMargin",
    "Settlement",
    "Failure",
    "Quote",
    "Product",
    "Event",
    "EventData",
    "Page",
    "WORKFLOW_STATUSES",
    "EVENT_TYPES",
    "__version__",
]
