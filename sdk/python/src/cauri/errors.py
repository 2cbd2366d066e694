"""The one error type of the library, and its two subclasses."""

from typing import Any, Mapping, Optional

__all__ = ["CauriError", "CauriConnectionError", "WebhookVerificationError"]

# The code the library gives an answer whose body carries none (the /v1
# routes send a "code" only on transfers, refunds, links' test_mode and
# resends; sessions, config and deliveries send {"error": "..."} alone).
# The names are the ones the API itself uses where it has one.
_CODE_OF_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    402: "payment_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    410: "gone",
    413: "too_large",
    415: "unsupported_media_type",
    422: "idempotency_key_reused",
    429: "rate_limited",
    500: "internal",
    502: "bad_gateway",
    503: "unavailable",
}


class CauriError(Exception):
    """An answer of the service other than 2xx, or no answer at all.

    status: the HTTP status (0 when no answer came: see CauriConnectionError).
    code: the API's ``code`` when the body has one; otherwise a code derived
        from the status (401 ``unauthorized``, 429 ``rate_limited``, 400
        ``invalid_request``, ...): see ``code_from_api``.
    code_from_api: whether ``code`` came from the body.
    message: the API's ``error`` (/v1 routes) or ``message`` (/checkout/*).
    param: the field named by the body's ``param`` when the service sends
        one (it does not today: a 400's message names the field).
    body: the raw body (text), for logs.
    request_id: the ``X-Request-Id`` header, to quote to support.
    retry_after: seconds from ``Retry-After``, when present.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: Optional[str] = None,
        code_from_api: bool = False,
        param: Optional[str] = None,
        body: str = "",
        request_id: Optional[str] = None,
        retry_after: Optional[int] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.code_from_api = code_from_api
        self.param = param
        self.body = body
        self.request_id = request_id
        self.retry_after = retry_after
        self.headers = dict(headers or {})

    def __str__(self) -> str:
        s = "cauri: %s" % (self.status,)
        if self.code:
            s += " " + self.code
        s += ": " + self.message
        if self.request_id:
            s += " (request %s)" % self.request_id
        return s

    @classmethod
    def _from_response(cls, status: int, raw: bytes, headers: Mapping[str, str]) -> "CauriError":
        import json

        text = raw.decode("utf-8", "replace")
        message, code, param = "", None, None
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict):  # {"error": {"code", "message", "param"}}
                message = str(err.get("message") or "")
                code = err.get("code")
                param = err.get("param")
            elif isinstance(err, str):  # /v1: {"error": "...", "code"?: "..."}
                message = err
            if not message and isinstance(data.get("message"), str):  # /checkout/*: {"success": false, "message"}
                message = data["message"]
            if code is None and isinstance(data.get("code"), str):
                code = data["code"]
            if param is None and isinstance(data.get("param"), str):
                param = data["param"]
        from_api = isinstance(code, str) and code != ""
        if not from_api:
            code = _CODE_OF_STATUS.get(status, "http_%d" % status)
        if not message:
            message = text.strip()[:200] or "HTTP %d" % status
        lower = {k.lower(): v for k, v in headers.items()}
        retry_after = None
        ra = lower.get("retry-after", "").strip()
        if ra.isdigit():
            retry_after = int(ra)
        return cls(
            message,
            status=status,
            code=code,
            code_from_api=from_api,
            param=param,
            body=text,
            request_id=lower.get("x-request-id"),
            retry_after=retry_after,
            headers=headers,
        )


class CauriConnectionError(CauriError):
    """No answer: the connection failed or timed out (status 0, code
    ``connection_error`` or ``timeout``). The request may have reached the
    service: retry a create only with the same Idempotency-Key."""


class WebhookVerificationError(CauriError):
    """A webhook request that does not verify. ``reason`` (also ``code``) is
    one of ``no_signature``, ``bad_signature``, ``too_old``; ``status`` is 0
    (no HTTP call was made). Answer the request with a 400."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, status=0, code=reason)
        self.reason = reason
