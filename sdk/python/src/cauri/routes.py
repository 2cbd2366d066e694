"""Every route of openapi.yaml the library calls, as (method, path template).

The client refuses to call a route that is not here, and the tests check
this table against the service's own /v1/openapi.json, so the two cannot
drift.
"""

from typing import FrozenSet, Tuple

Route = Tuple[str, str]

ROUTES: FrozenSet[Route] = frozenset(
    {
        # Checkout sessions
        ("POST", "/v1/checkout/sessions"),
        ("GET", "/v1/checkout/sessions/{id}/status"),
        ("GET", "/v1/checkout/sessions/{id}/methods"),
        # Webhook configuration and deliveries
        ("GET", "/v1/config/webhook"),
        ("PATCH", "/v1/config/webhook"),
        ("GET", "/v1/webhooks/deliveries"),
        ("GET", "/v1/webhooks/deliveries/{id}"),
        ("POST", "/v1/webhooks/deliveries/{id}/resend"),
        # Payment links
        ("POST", "/v1/payment-links"),
        ("GET", "/v1/payment-links"),
        ("GET", "/v1/payment-links/{id}"),
        ("PATCH", "/v1/payment-links/{id}"),
        ("GET", "/v1/payment-links/{id}/qr"),
        ("GET", "/v1/payment-links/{id}/check"),
        # Transactions export (dashboard session cookie)
        ("GET", "/v1/transactions/export"),
        # Routing
        ("POST", "/v1/route"),
        ("GET", "/v1/route"),
        # Transfers
        ("POST", "/v1/transfers"),
        ("GET", "/v1/transfers"),
        ("POST", "/v1/transfers/batch"),
        ("POST", "/v1/transfers/recipient"),
        ("GET", "/v1/transfers/{id}"),
        # Refunds
        ("POST", "/v1/refunds"),
        ("GET", "/v1/refunds"),
        ("GET", "/v1/refunds/{id}"),
        # Sandbox (test sessions)
        ("POST", "/checkout/sandbox"),
    }
)

# POST routes on which the client sends a generated Idempotency-Key when the
# caller gives none (UUID v4 from the OS's CSPRNG), reused on every retry.
GENERATED_KEY_ROUTES: FrozenSet[str] = frozenset({"/v1/transfers", "/v1/transfers/batch", "/v1/refunds"})
