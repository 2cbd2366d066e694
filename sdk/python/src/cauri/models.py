"""The API's objects as typed dicts, kept by hand from openapi.yaml.

Each class is named as its schema in openapi.yaml (components/schemas), or,
for an object defined inline there, as the docstring of MODELS says; the
tests check every class's fields (and which are required) against the
service's /v1/openapi.json. Answers are plain dicts at run time (ApiResult),
so these are for type checkers and readers.

Money (``Amount``) is an int, or a decimal.Decimal when the currency has
minor units (15.5 GHS): answers are decoded so, never as floats. Other
non-integer numbers (a route's ``confidence``, a provider's ``score``) are
Decimals too.
"""

from decimal import Decimal
from typing import Dict, List, Literal, Optional, TypedDict, Union

Amount = Union[int, Decimal]
"""Money in major units of the currency, as the API takes it (15000 XOF,
Decimal("15.5") GHS). Requests also take a string of digits ("15000")."""

# The document's enums (components/schemas), checked by the tests.
SessionStatus = Literal["PENDING", "SUCCESS", "FAILED", "CANCELLED", "REFUNDED"]
TransferStatus = Literal["processing", "succeeded", "failed"]
RefundStatus = Literal["pending", "succeeded", "failed"]
DeliveryStatus = Literal["pending", "delivered", "failed"]
EventName = Literal["payment.completed", "payment.failed", "payment.cancelled", "payment.updated", "transfer.succeeded", "transfer.failed"]
SandboxIssue = Literal["succes", "echec"]

ENUMS = {
    "SessionStatus": SessionStatus,
    "TransferStatus": TransferStatus,
    "RefundStatus": RefundStatus,
    "DeliveryStatus": DeliveryStatus,
    "EventName": EventName,
    "SandboxIssue": SandboxIssue,
}


class _SessionRequired(TypedDict):
    id: str
    object: str
    url: str
    livemode: bool
    status: SessionStatus
    paid: bool
    amount: Amount
    currency: str
    order_id: Optional[str]
    customer_name: Optional[str]
    customer_email: Optional[str]
    customer_phone: Optional[str]
    description: Optional[str]
    success_url: Optional[str]
    cancel_url: Optional[str]
    merchant_name: Optional[str]
    merchant_logo: Optional[str]
    metadata: Dict[str, str]
    provider: Optional[str]
    created_at: str
    updated_at: str
    completed_at: Optional[str]
    expires_at: str


class Session(_SessionRequired, total=False):
    amount_refunded: Amount
    refund: "Refund"


class MethodList(TypedDict):
    id: str
    currency: str
    methods: List["Method"]


class Method(TypedDict):
    code: str
    gatewayId: str
    name: str
    provider: str
    country: str
    type: str
    flag: str
    logo: str


class SandboxResponse(TypedDict):
    success: bool
    sandbox: bool
    status: str
    message: str


class WebhookConfig(TypedDict):
    success: bool
    webhookUrl: Optional[str]
    testWebhookUrl: Optional[str]
    events: List[EventName]
    available_events: List[EventName]


class Delivery(TypedDict):
    id: str
    object: str
    event: EventName
    url: str
    status: DeliveryStatus
    attempts: int
    max_attempts: int
    next_attempt_at: Optional[str]
    last_status_code: Optional[int]
    last_error: Optional[str]
    response_ms: int
    transaction_id: Optional[str]
    transfer_id: Optional[str]
    livemode: bool
    created_at: str
    delivered_at: Optional[str]


class DeliveryList(TypedDict):
    object: str
    data: List["Delivery"]
    count: int


class PaymentEvent(TypedDict):
    id: str
    event: str
    livemode: bool
    data: "Session"
    timestamp: str


class PaymentLink(TypedDict):
    success: bool
    id: str
    url: str
    slug: str
    amount: Amount
    currency: str
    title: str
    active: bool
    expires_at: Optional[str]
    max_payments: Optional[int]
    phone: Optional[str]
    metadata: Dict[str, str]
    completed_payments: int
    created_at: str


class PaymentLinkList(TypedDict):
    object: str
    data: List["PaymentLink"]
    count: int
    has_more: bool


class _PaymentLinkCheckRequired(TypedDict):
    success: bool
    paid: bool
    status: str


class PaymentLinkCheck(_PaymentLinkCheckRequired, total=False):
    transaction: "PaymentLinkTransaction"


class RouteResponse(TypedDict):
    routing: "Routing"
    detectedOperator: Optional[str]
    availableMethods: List["AvailableMethod"]
    rankedProviders: List["RankedProvider"]


class AvailableMethod(TypedDict):
    method: str
    providers: List[str]


class RankedProvider(TypedDict):
    provider: str
    score: Decimal


class Transfer(TypedDict):
    id: str
    object: str
    reference: str
    status: TransferStatus
    amount: Amount
    currency: str
    fee: Amount
    country: str
    operator: str
    provider_operator: str
    phone: str
    recipient_name: Optional[str]
    description: Optional[str]
    provider: str
    failure_code: Optional[str]
    failure_message: Optional[str]
    livemode: bool
    created_at: str
    updated_at: str
    completed_at: Optional[str]
    recipient_name_checked: Optional[bool]
    recipient_name_reported: Optional[str]


class TransferRecipient(TypedDict):
    object: str
    country: str
    operator: str
    phone: str
    name: Optional[str]
    name_available: bool
    unavailable_reason: Optional[str]
    provider: Optional[str]


class TransferBatch(TypedDict):
    object: str
    count: int
    created: int
    replayed: int
    refused: int
    data: List["TransferBatchItem"]


class Refund(TypedDict):
    id: str
    object: str
    transaction_id: str
    amount: Amount
    currency: str
    status: RefundStatus
    failure_code: Optional[str]
    failure_message: Optional[str]
    method: str
    reason: Optional[str]
    provider: str
    transfer_id: Optional[str]
    livemode: bool
    created_at: str
    updated_at: str
    completed_at: Optional[str]


class RefundList(TypedDict):
    object: str
    data: List["Refund"]
    count: int


class TransferList(TypedDict):
    object: str
    data: List["Transfer"]
    count: int


class TransferOptions(TypedDict):
    object: str
    countries: List["TransferOptionsCountry"]
    currencies: List[str]


class TransferEvent(TypedDict):
    id: str
    event: str
    livemode: bool
    data: "Transfer"
    timestamp: str


class _CreateSessionRequestRequired(TypedDict):
    amount: Amount


class CreateSessionRequest(_CreateSessionRequestRequired, total=False):
    currency: str
    customer_name: str
    customer_email: str
    customer_phone: str
    description: str
    success_url: str
    cancel_url: str
    metadata: Dict[str, str]
    merchant_name: str
    merchant_logo: str
    expires_at: str


class WebhookConfigUpdate(TypedDict, total=False):
    webhookUrl: str
    mode: str
    events: List[str]


class _PaymentLinkCreateRequired(TypedDict):
    title: str
    amount: Amount


class PaymentLinkCreate(_PaymentLinkCreateRequired, total=False):
    currency: str
    expires_at: str
    max_payments: int
    phone: str
    metadata: Dict[str, str]


class _RouteRequestRequired(TypedDict):
    country: str
    amount: Amount
    availableProviders: List[str]


class RouteRequest(_RouteRequestRequired, total=False):
    currency: str
    paymentMethod: str
    phone: str


class _TransferCreateRequestRequired(TypedDict):
    amount: Amount
    country: str
    operator: str
    phone: str


class TransferCreateRequest(_TransferCreateRequestRequired, total=False):
    currency: str
    recipient_name: str
    description: str
    idempotency_key: str
    recipient_name_check: bool


class TransferRecipientRequest(TypedDict):
    country: str
    operator: str
    phone: str


class _RefundCreateRequestRequired(TypedDict):
    transaction_id: str


class RefundCreateRequest(_RefundCreateRequestRequired, total=False):
    amount: Amount
    method: str
    reason: str


class SandboxRequest(TypedDict):
    transactionId: str
    issue: SandboxIssue


class PaymentLinkTransaction(TypedDict):
    """PaymentLinkCheck.transaction."""

    id: str
    amount: Amount
    currency: str
    customerName: str
    customerEmail: str
    paidAt: Optional[str]


class Routing(TypedDict):
    """RouteResponse.routing."""

    provider: str
    reason: str
    alternates: List[str]
    confidence: Decimal


class RouteOverview(TypedDict):
    """The answer of GET /v1/route (inline in openapi.yaml)."""

    country: str
    currency: str
    availableMethods: List["AvailableMethod"]
    rankedProviders: List["RankedProvider"]


class TransferBatchItem(TypedDict):
    """TransferBatch.data[]."""

    index: int
    status: int
    replayed: bool
    transfer: Optional["Transfer"]
    error: Optional[str]
    code: Optional[str]


class TransferOptionsOperator(TypedDict):
    """TransferOptions.countries[].operators[]."""

    operator: str
    name: str


class TransferOptionsCountry(TypedDict):
    """TransferOptions.countries[]."""

    country: str
    name: str
    currency: str
    operators: List[TransferOptionsOperator]


# Where each class is defined in openapi.yaml: a JSON pointer into the
# document (read by the tests).
MODELS: Dict[str, str] = {
    "Session": "/components/schemas/Session",
    "MethodList": "/components/schemas/MethodList",
    "Method": "/components/schemas/Method",
    "SandboxResponse": "/components/schemas/SandboxResponse",
    "WebhookConfig": "/components/schemas/WebhookConfig",
    "Delivery": "/components/schemas/Delivery",
    "DeliveryList": "/components/schemas/DeliveryList",
    "PaymentEvent": "/components/schemas/PaymentEvent",
    "PaymentLink": "/components/schemas/PaymentLink",
    "PaymentLinkList": "/components/schemas/PaymentLinkList",
    "PaymentLinkCheck": "/components/schemas/PaymentLinkCheck",
    "RouteResponse": "/components/schemas/RouteResponse",
    "AvailableMethod": "/components/schemas/AvailableMethod",
    "RankedProvider": "/components/schemas/RankedProvider",
    "Transfer": "/components/schemas/Transfer",
    "TransferRecipient": "/components/schemas/TransferRecipient",
    "TransferBatch": "/components/schemas/TransferBatch",
    "Refund": "/components/schemas/Refund",
    "RefundList": "/components/schemas/RefundList",
    "TransferList": "/components/schemas/TransferList",
    "TransferOptions": "/components/schemas/TransferOptions",
    "TransferEvent": "/components/schemas/TransferEvent",
    "CreateSessionRequest": "/components/schemas/CreateSessionRequest",
    "WebhookConfigUpdate": "/components/schemas/WebhookConfigUpdate",
    "PaymentLinkCreate": "/components/schemas/PaymentLinkCreate",
    "RouteRequest": "/components/schemas/RouteRequest",
    "TransferCreateRequest": "/components/schemas/TransferCreateRequest",
    "TransferRecipientRequest": "/components/schemas/TransferRecipientRequest",
    "RefundCreateRequest": "/components/schemas/RefundCreateRequest",
    "SandboxRequest": "/components/schemas/SandboxRequest",
    "PaymentLinkTransaction": "/components/schemas/PaymentLinkCheck/properties/transaction",
    "Routing": "/components/schemas/RouteResponse/properties/routing",
    "RouteOverview": "/paths/~1v1~1route/get/responses/200/content/application~1json/schema",
    "TransferBatchItem": "/components/schemas/TransferBatch/properties/data/items",
    "TransferOptionsOperator": "/components/schemas/TransferOptions/properties/countries/items/properties/operators/items",
    "TransferOptionsCountry": "/components/schemas/TransferOptions/properties/countries/items",
    "TransactionExport": "/paths/~1v1~1transactions~1export/get/responses/200/content/application~1json/schema",
    "TransactionExportRow": "/paths/~1v1~1transactions~1export/get/responses/200/content/application~1json/schema/properties/data/items",
    "PaymentLinkUpdate": "/paths/~1v1~1payment-links~1{id}/patch/requestBody/content/application~1json/schema",
}


class PaymentLinkUpdate(TypedDict, total=False):
    """The body of PATCH /v1/payment-links/{id} (inline in openapi.yaml)."""

    active: bool
    expires_at: Optional[str]


class TransactionExportRow(TypedDict):
    """A row of GET /v1/transactions/export?format=json (inline)."""

    id: str
    orderId: str
    status: str
    amount: Amount
    currency: str
    provider: str
    paymentType: str
    customerName: str
    customerEmail: str
    customerPhone: str
    providerRef: str
    createdAt: str
    completedAt: str


class TransactionExport(TypedDict):
    """GET /v1/transactions/export?format=json (inline)."""

    object: str
    data: List[TransactionExportRow]
    count: int
