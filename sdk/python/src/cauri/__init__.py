"""Cauri's Python client: the merchant API and webhook verification.

    import cauri
    client = cauri.Client(os.environ["CAURI_SECRET_KEY"])
    session = client.sessions.create(amount=15000, currency="XOF", idempotency_key="order-1042")
    # redirect to session["url"]; fulfil on the webhook:
    event = cauri.verify_webhook(raw_body, headers, os.environ["CAURI_SECRET_KEY"])

Standard library only.
"""

from ._transport import __version__
from .client import DEFAULT_BASE_URL, Client, ResponseInfo, response_info
from .errors import CauriConnectionError, CauriError, WebhookVerificationError
from .routes import ROUTES
from .webhook import sign as sign_webhook
from .webhook import verify_signature, verify_webhook

__all__ = [
    "Client",
    "DEFAULT_BASE_URL",
    "CauriError",
    "CauriConnectionError",
    "WebhookVerificationError",
    "ResponseInfo",
    "response_info",
    "verify_webhook",
    "verify_signature",
    "sign_webhook",
    "ROUTES",
    "__version__",
]
