"""The client: one key, resources grouped as the API groups them.

    client = cauri.Client("svc_test_sec_...")
    session = client.sessions.create(amount=15000, currency="XOF",
                                      metadata={"order_id": "1042"},
                                      idempotency_key="order-1042")

Bodies and query parameters are keyword arguments named exactly as on the
wire (openapi.yaml): ``success_url``, but ``webhookUrl`` and
``availableProviders``. A dict of them may be passed first instead.
"""

from typing import Any, Dict, Iterator, List, Mapping, Optional, Union, cast

from . import models as m
from ._transport import ApiResult, Transport

DEFAULT_BASE_URL = "http://localhost:8080"


def _body(params: Optional[Mapping[str, Any]], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    body: Dict[str, Any] = dict(params or {})
    body.update(kwargs)
    return body


class Client:
    """A client of one Cauri service with one workspace key.

    key: the workspace's secret key (``svc_test_sec_...``/``svc_live_sec_...``),
        or a public key for the calls that allow it (sessions).
    base_url: the service (default http://localhost:8080).
    timeout: seconds for each attempt (connect and each read).
    max_retries: retries of an attempt that failed with 429, 5xx or no
        answer (default 2), on the calls that may be retried (GET, PATCH,
        and POST with an Idempotency-Key).
    max_retry_wait: the longest Retry-After the client waits for (default
        60 s); a longer one raises the error at once.
    retry_base_delay: the first backoff (doubled at each retry, with jitter)
        when the answer has no Retry-After.
    """

    def __init__(
        self,
        key: Optional[str],
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 60.0,
        retry_base_delay: float = 0.5,
    ) -> None:
        if max_retries < 0:
            raise ValueError("cauri: max_retries must be >= 0")
        self._t = Transport(key, base_url, timeout, max_retries, max_retry_wait, retry_base_delay)
        self.sessions = Sessions(self._t)
        self.sandbox = Sandbox(self._t)
        self.webhook_config = WebhookConfig(self._t)
        self.webhook_deliveries = WebhookDeliveries(self._t)
        self.payment_links = PaymentLinks(self._t)
        self.transactions = Transactions(self._t)
        self.routing = Routing(self._t)
        self.transfers = Transfers(self._t)
        self.refunds = Refunds(self._t)

    @property
    def base_url(self) -> str:
        return self._t.base_url


class _Resource:
    def __init__(self, t: Transport) -> None:
        self._t = t


class Sessions(_Resource):
    def create(
        self,
        params: Optional[m.CreateSessionRequest] = None,
        *,
        idempotency_key: Optional[str] = None,
        **kwargs: Any,
    ) -> m.Session:
        """POST /v1/checkout/sessions. With an idempotency_key (one per
        order), a repeated call answers the session the first one created
        (cauri.response_info(session).replayed); the call is then retried
        on 429/5xx too. Without one it is never retried."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.Session, self._t.request("POST", "/v1/checkout/sessions", body=body, idempotency_key=idempotency_key))

    def status(self, id: str) -> m.Session:
        """GET /v1/checkout/sessions/{id}/status: the whole session."""
        return cast(m.Session, self._t.request("GET", "/v1/checkout/sessions/{id}/status", {"id": id}))

    retrieve = status

    def methods(self, id: str, *, country: Optional[str] = None) -> m.MethodList:
        """GET /v1/checkout/sessions/{id}/methods: the ways to pay it."""
        return cast(
            m.MethodList,
            self._t.request("GET", "/v1/checkout/sessions/{id}/methods", {"id": id}, query={"country": country}),
        )


class Sandbox(_Resource):
    def settle(self, session_id: str, issue: str = "succes") -> m.SandboxResponse:
        """POST /checkout/sandbox: settles a test session as the hosted
        page's buttons do (issue "succes" or "echec"). No key is sent (the
        route takes none). Not retried (no Idempotency-Key)."""
        body = {"transactionId": session_id, "issue": issue}
        return cast(m.SandboxResponse, self._t.request("POST", "/checkout/sandbox", body=body, auth=False))


class WebhookConfig(_Resource):
    def get(self) -> m.WebhookConfig:
        """GET /v1/config/webhook."""
        return cast(m.WebhookConfig, self._t.request("GET", "/v1/config/webhook"))

    def update(self, params: Optional[m.WebhookConfigUpdate] = None, **kwargs: Any) -> m.WebhookConfig:
        """PATCH /v1/config/webhook: webhookUrl, mode ("live"/"test"), events."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.WebhookConfig, self._t.request("PATCH", "/v1/config/webhook", body=body))


class WebhookDeliveries(_Resource):
    def list(
        self,
        *,
        transaction_id: Optional[str] = None,
        status: Optional[str] = None,
        event: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> m.DeliveryList:
        """GET /v1/webhooks/deliveries, newest first."""
        q = {"transaction_id": transaction_id, "status": status, "event": event, "limit": limit}
        return cast(m.DeliveryList, self._t.request("GET", "/v1/webhooks/deliveries", query=q))

    def get(self, id: str) -> m.Delivery:
        """GET /v1/webhooks/deliveries/{id}."""
        return cast(m.Delivery, self._t.request("GET", "/v1/webhooks/deliveries/{id}", {"id": id}))

    def resend(self, id: str) -> m.Delivery:
        """POST /v1/webhooks/deliveries/{id}/resend: one attempt now; the
        delivery after it. Not retried (each call is another attempt)."""
        return cast(m.Delivery, self._t.request("POST", "/v1/webhooks/deliveries/{id}/resend", {"id": id}))


class PaymentLinks(_Resource):
    def create(self, params: Optional[m.PaymentLinkCreate] = None, **kwargs: Any) -> m.PaymentLink:
        """POST /v1/payment-links (title, amount, currency, expires_at,
        max_payments, phone, metadata). Production keys only. The route
        takes no Idempotency-Key, so it is never retried: a retry could make
        a second link."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.PaymentLink, self._t.request("POST", "/v1/payment-links", body=body))

    def list(self, *, limit: Optional[int] = None, starting_after: Optional[str] = None) -> m.PaymentLinkList:
        """GET /v1/payment-links, a page at a time."""
        q = {"limit": limit, "starting_after": starting_after}
        return cast(m.PaymentLinkList, self._t.request("GET", "/v1/payment-links", query=q))

    def list_all(self, *, limit: Optional[int] = None) -> Iterator[m.PaymentLink]:
        """Every link, following has_more/starting_after."""
        after: Optional[str] = None
        while True:
            page = self.list(limit=limit, starting_after=after)
            for link in page["data"]:
                yield link
            if not page.get("has_more") or not page["data"]:
                return
            after = page["data"][-1]["id"]

    def get(self, id: str) -> m.PaymentLink:
        """GET /v1/payment-links/{id}."""
        return cast(m.PaymentLink, self._t.request("GET", "/v1/payment-links/{id}", {"id": id}))

    def update(self, id: str, params: Optional[m.PaymentLinkUpdate] = None, **kwargs: Any) -> m.PaymentLink:
        """PATCH /v1/payment-links/{id}: active, expires_at (None removes it)."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.PaymentLink, self._t.request("PATCH", "/v1/payment-links/{id}", {"id": id}, body=body))

    def qr(self, id: str, *, format: Optional[str] = None) -> bytes:
        """GET /v1/payment-links/{id}/qr: the image's bytes (SVG, or PNG with
        format="png")."""
        return cast(bytes, self._t.request("GET", "/v1/payment-links/{id}/qr", {"id": id}, query={"format": format}, raw=True))

    def check(self, id: str) -> m.PaymentLinkCheck:
        """GET /v1/payment-links/{id}/check: whether it was paid."""
        return cast(m.PaymentLinkCheck, self._t.request("GET", "/v1/payment-links/{id}/check", {"id": id}))


class Transactions(_Resource):
    def export(
        self,
        *,
        dashboard_session: Optional[str] = None,
        format: Optional[str] = None,
        status: Optional[str] = None,
        from_: Optional[str] = None,
        to: Optional[str] = None,
        search: Optional[str] = None,
        stream: bool = False,
    ) -> Union[str, m.TransactionExport, Iterator[bytes]]:
        """GET /v1/transactions/export. The route takes the dashboard's
        session cookie only (``cauri_session``; an API key gets 401): pass
        its value as dashboard_session. Returns the CSV as text (format
        "csv", the default), the decoded JSON (format "json"), or with
        stream=True an iterator of the body's chunks (up to 10 000 rows)."""
        q = {"format": format, "status": status, "from": from_, "to": to, "search": search}
        headers = {"Cookie": "cauri_session=" + dashboard_session} if dashboard_session else {}
        if stream:
            return cast(Iterator[bytes], self._t.request("GET", "/v1/transactions/export", query=q, headers=headers, stream=True))
        raw = cast(bytes, self._t.request("GET", "/v1/transactions/export", query=q, headers=headers, raw=True))
        if format == "json":
            from . import _json

            return cast(m.TransactionExport, _json.loads(raw))
        return raw.decode("utf-8")


class Routing(_Resource):
    def route(self, params: Optional[m.RouteRequest] = None, **kwargs: Any) -> m.RouteResponse:
        """POST /v1/route: the best provider (country, amount,
        availableProviders, currency, paymentMethod, phone). Secret key.
        Not retried (a POST without Idempotency-Key)."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.RouteResponse, self._t.request("POST", "/v1/route", body=body))

    def overview(self, country: str, *, providers: Optional[Union[str, List[str]]] = None, currency: Optional[str] = None) -> m.RouteOverview:
        """GET /v1/route: a country's methods and ranked providers (no key)."""
        q = {"country": country, "providers": providers, "currency": currency}
        return cast(m.RouteOverview, self._t.request("GET", "/v1/route", query=q, auth=False))


class Transfers(_Resource):
    def create(self, params: Optional[m.TransferCreateRequest] = None, *, idempotency_key: Optional[str] = None, **kwargs: Any) -> m.Transfer:
        """POST /v1/transfers (amount, country, operator, phone, currency,
        recipient_name, description, recipient_name_check). Without an
        idempotency_key one is generated (UUID v4) and reused on every retry
        of this call: the money moves once. Give your own (one per payout)
        to be safe across your process's restarts too."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.Transfer, self._t.request("POST", "/v1/transfers", body=body, idempotency_key=idempotency_key))

    def list(self, *, status: Optional[str] = None, limit: Optional[int] = None) -> m.TransferList:
        """GET /v1/transfers, newest first."""
        return cast(m.TransferList, self._t.request("GET", "/v1/transfers", query={"status": status, "limit": limit}))

    def options(self) -> m.TransferOptions:
        """GET /v1/transfers?options=1: where the workspace can send money."""
        return cast(m.TransferOptions, self._t.request("GET", "/v1/transfers", query={"options": "1"}))

    def batch(self, transfers: List[m.TransferCreateRequest], *, idempotency_key: Optional[str] = None) -> m.TransferBatch:
        """POST /v1/transfers/batch: up to 500 at once, each answered on its
        own. The batch's Idempotency-Key is generated when not given; items
        without their own are keyed "<key>:<index>"."""
        body = {"transfers": list(transfers)}
        return cast(m.TransferBatch, self._t.request("POST", "/v1/transfers/batch", body=body, idempotency_key=idempotency_key))

    def recipient(self, params: Optional[m.TransferRecipientRequest] = None, **kwargs: Any) -> m.TransferRecipient:
        """POST /v1/transfers/recipient: the account holder's name, when an
        aggregator tells it. Not retried."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.TransferRecipient, self._t.request("POST", "/v1/transfers/recipient", body=body))

    def get(self, id: str) -> m.Transfer:
        """GET /v1/transfers/{id}."""
        return cast(m.Transfer, self._t.request("GET", "/v1/transfers/{id}", {"id": id}))


class Refunds(_Resource):
    def create(self, params: Optional[m.RefundCreateRequest] = None, *, idempotency_key: Optional[str] = None, **kwargs: Any) -> m.Refund:
        """POST /v1/refunds (transaction_id, amount, method, reason). Without
        an idempotency_key one is generated (UUID v4) and reused on every
        retry of this call."""
        body = _body(cast(Optional[Mapping[str, Any]], params), kwargs)
        return cast(m.Refund, self._t.request("POST", "/v1/refunds", body=body, idempotency_key=idempotency_key))

    def list(
        self,
        *,
        transaction_id: Optional[str] = None,
        status: Optional[str] = None,
        limit: Optional[int] = None,
        starting_after: Optional[str] = None,
    ) -> m.RefundList:
        """GET /v1/refunds, newest first, a page at a time."""
        q = {"transaction_id": transaction_id, "status": status, "limit": limit, "starting_after": starting_after}
        return cast(m.RefundList, self._t.request("GET", "/v1/refunds", query=q))

    def get(self, id: str) -> m.Refund:
        """GET /v1/refunds/{id}."""
        return cast(m.Refund, self._t.request("GET", "/v1/refunds/{id}", {"id": id}))


class ResponseInfo:
    """What an answer's status and headers said about an object."""

    def __init__(self, status_code: int, request_id: Optional[str], replayed: bool, idempotency_key: Optional[str]) -> None:
        self.status_code = status_code
        self.request_id = request_id
        self.replayed = replayed
        self.idempotency_key = idempotency_key

    def __repr__(self) -> str:
        return "ResponseInfo(status_code=%r, request_id=%r, replayed=%r)" % (self.status_code, self.request_id, self.replayed)


def response_info(obj: Any) -> ResponseInfo:
    """The HTTP status, X-Request-Id, whether it was an idempotent replay
    (Idempotent-Replayed: true) and the Idempotency-Key sent, for an object
    a call returned."""
    if not isinstance(obj, ApiResult):
        raise TypeError("cauri: response_info takes an object a call returned")
    return ResponseInfo(obj.status_code, obj.request_id, obj.replayed, obj.idempotency_key)
