"""Verify a Cauri webhook request in one call.

    event = cauri.verify_webhook(raw_body, request_headers, secret_key)

The scheme is webhook/webhook.go's Verify: X-Service-Signature is
``t=<unix>,v1=<hex>[,v1=<hex>...]``; each v1 is the HMAC-SHA256, keyed with
the workspace's secret key of the event's mode, of ``"<t>.<raw body>"``.
Any matching v1 verifies (a key roll signs with both keys); the comparison
is of the decoded bytes, in constant time (hmac.compare_digest); the
timestamp must be within 5 minutes of the receiver's clock.
"""

import datetime
import hashlib
import hmac
import json
import re
import time
from decimal import Decimal
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, Union

from .errors import WebhookVerificationError

__all__ = ["verify_webhook", "verify_signature", "sign", "TOLERANCE", "SIGNATURE_HEADER"]

TOLERANCE = 300  # seconds
SIGNATURE_HEADER = "X-Service-Signature"

NO_SIGNATURE = "no_signature"
BAD_SIGNATURE = "bad_signature"
TOO_OLD = "too_old"

_INT = re.compile(r"^[+-]?[0-9]+$")
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})*$")

Headers = Union[Mapping[str, Any], Iterable[Tuple[str, Any]], Any]
Clock = Union[int, float, datetime.datetime, None]


def _header(headers: Headers, name: str) -> Optional[str]:
    """The first value of a header, its name in any case. headers is a
    mapping (a dict, Django's request.headers, http.client's message, a WSGI
    environ / Django's request.META with HTTP_X_SERVICE_SIGNATURE), or an
    iterable of (name, value) pairs (ASGI's, as bytes or text)."""
    want = name.lower()
    items: Iterable[Tuple[Any, Any]]
    if hasattr(headers, "items"):
        items = headers.items()
    else:
        items = headers
    for k, v in items:
        if isinstance(k, bytes):
            k = k.decode("latin-1")
        key = str(k).lower().replace("_", "-")
        if key.startswith("http-"):  # WSGI environ, request.META
            key = key[5:]
        if key != want:
            continue
        if isinstance(v, (list, tuple)):
            if not v:
                continue
            v = v[0]
        if isinstance(v, bytes):
            v = v.decode("latin-1")
        return str(v)
    return None


def _now(now: Clock) -> float:
    if now is None:
        return time.time()
    if isinstance(now, datetime.datetime):
        if now.tzinfo is None:
            raise ValueError("cauri: now must be an aware datetime (or unix seconds)")
        return now.timestamp()
    return float(now)


def _as_bytes(body: Union[bytes, bytearray, memoryview, str]) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body)


def verify_signature(
    body: Union[bytes, str],
    headers: Headers,
    secret: Union[str, Sequence[str]],
    *,
    now: Clock = None,
    tolerance: int = TOLERANCE,
) -> None:
    """Checks a request's signature, as webhook.Verify does; raises
    WebhookVerificationError (reason no_signature, bad_signature or too_old)
    when it does not verify. secret may be a list of keys (the old and the
    new one during a key roll): any verifies."""
    raw = _as_bytes(body)
    ts = -1
    sigs = []
    for part in (_header(headers, SIGNATURE_HEADER) or "").split(","):
        k, sep, v = part.strip().partition("=")
        if not sep:
            continue
        if k == "t":
            if _INT.match(v) and -(2**63) <= int(v) < 2**63:  # Go's ParseInt
                ts = int(v)
        elif k == "v1":
            if _HEX.match(v):
                sigs.append(bytes.fromhex(v))
    if ts < 0 or not sigs:
        raise WebhookVerificationError(NO_SIGNATURE, "webhook: no valid X-Service-Signature header")
    secrets = [secret] if isinstance(secret, str) else list(secret)
    if not secrets or not all(secrets):
        raise ValueError("cauri: the webhook secret key is empty")
    matched = False
    for s in secrets:
        want = hmac.new(s.encode("utf-8"), str(ts).encode("ascii") + b"." + raw, hashlib.sha256).digest()
        for got in sigs:
            if hmac.compare_digest(got, want):
                matched = True
    if not matched:
        raise WebhookVerificationError(BAD_SIGNATURE, "webhook: signature does not match the body")
    if abs(_now(now) - ts) > tolerance:
        raise WebhookVerificationError(TOO_OLD, "webhook: timestamp is more than 5 minutes from now")


def verify_webhook(
    body: Union[bytes, str],
    headers: Headers,
    secret: Union[str, Sequence[str]],
    *,
    now: Clock = None,
    tolerance: int = TOLERANCE,
) -> Any:
    """Verifies a webhook request (see verify_signature) and returns its
    event, the body decoded from JSON (amounts as int or Decimal, never
    float); None for an empty body. Pass the raw body exactly as received
    (bytes, or the text it decodes to) and the headers as the framework gives
    them."""
    verify_signature(body, headers, secret, now=now, tolerance=tolerance)
    raw = _as_bytes(body)
    if not raw.strip():
        return None
    return json.loads(raw.decode("utf-8"), parse_float=Decimal)


def sign(body: Union[bytes, str], secret: str, timestamp: Optional[int] = None) -> str:
    """The X-Service-Signature value Cauri would send for body at timestamp
    (now by default): for tests of your own webhook endpoint."""
    ts = int(time.time()) if timestamp is None else int(timestamp)
    mac = hmac.new(secret.encode("utf-8"), str(ts).encode("ascii") + b"." + _as_bytes(body), hashlib.sha256)
    return "t=%d,v1=%s" % (ts, mac.hexdigest())
