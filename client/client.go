// Package client is the Go client of the Cauri API. Its models are
// generated from openapi.yaml (models.gen.go, by go generate); this file adds
// a thin client over them: keys, idempotency keys, typed errors and retries
// of 429 answers after their Retry-After. Amounts are json.Number, never
// floats.
//
// It imports only the standard library.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Client calls one Cauri service with one workspace key.
type Client struct {
	baseURL    string
	key        string
	header     http.Header // sent with every call (the partner's secret)
	http       *http.Client
	maxRetries int
	maxWait    time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces http.DefaultClient.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a 429 answer is retried (default 2) and
// the longest Retry-After the client waits for (default 60 s); a longer
// wait returns the error instead.
func WithRetries(n int, maxWait time.Duration) Option {
	return func(c *Client) { c.maxRetries, c.maxWait = n, maxWait }
}

// New returns a client of the service at baseURL (for example
// "http://localhost:8080") using key (svc_test_sec_..., or a public key
// for the calls that allow it).
func New(baseURL, key string, opts ...Option) *Client {
	c := &Client{baseURL: baseURL, key: key, http: http.DefaultClient, maxRetries: 2, maxWait: time.Minute}
	for _, o := range opts {
		o(c)
	}
	return c
}

// APIError is an answer of the service other than 2xx.
type APIError struct {
	Status     int
	Message    string            // the service's "error" or "message"
	Code       TransferErrorCode // set on the routes that send a code
	RetryAfter time.Duration     // from Retry-After, on 429
	RequestID  string            // X-Request-Id, for support
}

func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("cauri: %d %s: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("cauri: %d: %s", e.Status, e.Message)
}

// CreateSession creates a checkout session. With an idempotencyKey (one per
// order), a repeated call returns the session the first one created, and
// replayed is true.
func (c *Client) CreateSession(ctx context.Context, req CreateSessionRequest, idempotencyKey string) (sess *Session, replayed bool, err error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := c.do(ctx, "POST", "/v1/checkout/sessions", req, h, &sess)
	if err != nil {
		return nil, false, err
	}
	return sess, res.Header.Get("Idempotent-Replayed") == "true", nil
}

// SessionStatus reads a session.
func (c *Client) SessionStatus(ctx context.Context, id string) (*Session, error) {
	var sess *Session
	_, err := c.do(ctx, "GET", "/v1/checkout/sessions/"+url.PathEscape(id)+"/status", nil, nil, &sess)
	return sess, err
}

// SessionMethods lists the ways to pay a session; country ("ci", "Senegal")
// may be empty.
func (c *Client) SessionMethods(ctx context.Context, id, country string) (*MethodList, error) {
	path := "/v1/checkout/sessions/" + url.PathEscape(id) + "/methods"
	if country != "" {
		path += "?country=" + url.QueryEscape(country)
	}
	var list *MethodList
	_, err := c.do(ctx, "GET", path, nil, nil, &list)
	return list, err
}

// SettleSandbox settles a test session, as the hosted page's simulate
// buttons do.
func (c *Client) SettleSandbox(ctx context.Context, sessionID string, issue SandboxIssue) (*SandboxResponse, error) {
	var out *SandboxResponse
	_, err := c.do(ctx, "POST", "/checkout/sandbox", SandboxRequest{TransactionId: sessionID, Issue: issue}, nil, &out)
	return out, err
}

// WebhookConfig reads where the workspace's events are sent.
func (c *Client) WebhookConfig(ctx context.Context) (*WebhookConfig, error) {
	var out *WebhookConfig
	_, err := c.do(ctx, "GET", "/v1/config/webhook", nil, nil, &out)
	return out, err
}

// UpdateWebhookConfig sets the address of one mode and the event selection.
func (c *Client) UpdateWebhookConfig(ctx context.Context, u WebhookConfigUpdate) (*WebhookConfig, error) {
	var out *WebhookConfig
	_, err := c.do(ctx, "PATCH", "/v1/config/webhook", u, nil, &out)
	return out, err
}

// DeliveryFilter narrows ListDeliveries; zero fields do not filter.
type DeliveryFilter struct {
	TransactionID string
	Status        DeliveryStatus
	Event         EventName
	Limit         int // 1 to 200; 0 means the service's default, 50
}

// ListDeliveries lists webhook deliveries of the key's mode, newest first.
func (c *Client) ListDeliveries(ctx context.Context, f DeliveryFilter) (*DeliveryList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"transaction_id": f.TransactionID, "status": string(f.Status), "event": string(f.Event)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	path := "/v1/webhooks/deliveries"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out *DeliveryList
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out, err
}

// Delivery reads one webhook delivery.
func (c *Client) Delivery(ctx context.Context, id string) (*Delivery, error) {
	var out *Delivery
	_, err := c.do(ctx, "GET", "/v1/webhooks/deliveries/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// ResendDelivery sends a delivery again now and returns it after the attempt.
func (c *Client) ResendDelivery(ctx context.Context, id string) (*Delivery, error) {
	var out *Delivery
	_, err := c.do(ctx, "POST", "/v1/webhooks/deliveries/"+url.PathEscape(id)+"/resend", nil, nil, &out)
	return out, err
}

// CreateTransfer sends money to a Mobile Money account. Always give an
// idempotencyKey (one per transfer): a repeated call returns the transfer
// the first one created, and replayed is true; the money moves once.
func (c *Client) CreateTransfer(ctx context.Context, req TransferCreateRequest, idempotencyKey string) (tr *Transfer, replayed bool, err error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := c.do(ctx, "POST", "/v1/transfers", req, h, &tr)
	if err != nil {
		return nil, false, err
	}
	return tr, res.Header.Get("Idempotent-Replayed") == "true", nil
}

// CreateTransferBatch sends up to 500 transfers in one call (beyond the
// SPEC): each item is answered on its own. The idempotencyKey is required:
// items without their own key are keyed "<idempotencyKey>:<index>", so
// sending the same batch again pays each item once.
func (c *Client) CreateTransferBatch(ctx context.Context, items []TransferCreateRequest, idempotencyKey string) (*TransferBatch, error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	var out *TransferBatch
	_, err := c.do(ctx, "POST", "/v1/transfers/batch", map[string]any{"transfers": items}, h, &out)
	return out, err
}

// TransferRecipient asks for the name of a Mobile Money account's holder
// before a payout (beyond the SPEC): NameAvailable false, with
// UnavailableReason, when no gateway of the workspace can tell it; that is
// an answer, not an error.
func (c *Client) TransferRecipient(ctx context.Context, req TransferRecipientRequest) (*TransferRecipient, error) {
	var out *TransferRecipient
	_, err := c.do(ctx, "POST", "/v1/transfers/recipient", req, nil, &out)
	return out, err
}

// Transfer reads one transfer.
func (c *Client) Transfer(ctx context.Context, id string) (*Transfer, error) {
	var out *Transfer
	_, err := c.do(ctx, "GET", "/v1/transfers/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// ListTransfers lists the latest transfers, newest first, of one status
// when status is not empty; limit 0 means the service's default, 50.
func (c *Client) ListTransfers(ctx context.Context, status TransferStatus, limit int) (*TransferList, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", string(status))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/transfers"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out *TransferList
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out, err
}

// TransferOptions lists the countries, currencies and operators the
// workspace can send money to.
func (c *Client) TransferOptions(ctx context.Context) (*TransferOptions, error) {
	var out *TransferOptions
	_, err := c.do(ctx, "GET", "/v1/transfers?options=1", nil, nil, &out)
	return out, err
}

// CreateRefund refunds a SUCCESS transaction, in whole (req.Amount empty:
// all that is left) or in part. Always give an idempotencyKey (one per
// refund): a repeated call returns the refund the first one created, and
// replayed is true; the money goes back once. A refusal's Error.Code is
// one of RefundErrorCode's values (APIError.Code holds it).
func (c *Client) CreateRefund(ctx context.Context, req RefundCreateRequest, idempotencyKey string) (r *Refund, replayed bool, err error) {
	h := http.Header{}
	if idempotencyKey != "" {
		h.Set("Idempotency-Key", idempotencyKey)
	}
	res, err := c.do(ctx, "POST", "/v1/refunds", req, h, &r)
	if err != nil {
		return nil, false, err
	}
	return r, res.Header.Get("Idempotent-Replayed") == "true", nil
}

// Refund reads one refund.
func (c *Client) Refund(ctx context.Context, id string) (*Refund, error) {
	var out *Refund
	_, err := c.do(ctx, "GET", "/v1/refunds/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// RefundQuery selects a page of refunds: of one transaction, of one
// status, after a refund (the last of the previous page); Limit 0 means
// the service's default, 50.
type RefundQuery struct {
	TransactionID string
	Status        RefundStatus
	StartingAfter string
	Limit         int
}

// ListRefunds lists refunds, newest first, a page at a time.
func (c *Client) ListRefunds(ctx context.Context, f RefundQuery) (*RefundList, error) {
	q := url.Values{}
	for k, v := range map[string]string{"transaction_id": f.TransactionID, "status": string(f.Status), "starting_after": f.StartingAfter} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	path := "/v1/refunds"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out *RefundList
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out, err
}

// CreatePaymentLink creates a payment link (production keys only).
func (c *Client) CreatePaymentLink(ctx context.Context, title string, amount json.Number, currency Currency) (*PaymentLink, error) {
	body := map[string]any{"title": title, "amount": amount}
	if currency != "" {
		body["currency"] = currency
	}
	var out *PaymentLink
	_, err := c.do(ctx, "POST", "/v1/payment-links", body, nil, &out)
	return out, err
}

// CreatePaymentLinkWith creates a payment link with its optional controls
// (expiry, limit of payments, payer's number, metadata).
func (c *Client) CreatePaymentLinkWith(ctx context.Context, req PaymentLinkCreate) (*PaymentLink, error) {
	var out *PaymentLink
	_, err := c.do(ctx, "POST", "/v1/payment-links", req, nil, &out)
	return out, err
}

// ListPaymentLinks lists a page of the workspace's payment links, newest
// first: limit of them (0 for the service's default, 50), after the link
// startingAfter (the last of the previous page) when it is not empty.
func (c *Client) ListPaymentLinks(ctx context.Context, limit int, startingAfter string) (*PaymentLinkList, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if startingAfter != "" {
		q.Set("starting_after", startingAfter)
	}
	path := "/v1/payment-links"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out *PaymentLinkList
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out, err
}

// PaymentLink reads one payment link.
func (c *Client) PaymentLink(ctx context.Context, id string) (*PaymentLink, error) {
	var out *PaymentLink
	_, err := c.do(ctx, "GET", "/v1/payment-links/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// PaymentLinkUpdate changes a payment link; nil fields stay as they are.
type PaymentLinkUpdate struct {
	Active       *bool
	ExpiresAt    *time.Time
	RemoveExpiry bool // the link never expires (ExpiresAt is then ignored)
}

// UpdatePaymentLink deactivates or reactivates a link, or changes its expiry.
func (c *Client) UpdatePaymentLink(ctx context.Context, id string, u PaymentLinkUpdate) (*PaymentLink, error) {
	body := map[string]any{}
	if u.Active != nil {
		body["active"] = *u.Active
	}
	switch {
	case u.RemoveExpiry:
		body["expires_at"] = nil
	case u.ExpiresAt != nil:
		body["expires_at"] = u.ExpiresAt.UTC().Format(time.RFC3339)
	}
	var out *PaymentLink
	_, err := c.do(ctx, "PATCH", "/v1/payment-links/"+url.PathEscape(id), body, nil, &out)
	return out, err
}

// PaymentLinkQR returns the QR code of a link's page address: format
// "svg" (or "") for SVG, "png" for a PNG of 512 pixels a side.
func (c *Client) PaymentLinkQR(ctx context.Context, id, format string) ([]byte, error) {
	path := "/v1/payment-links/" + url.PathEscape(id) + "/qr"
	if format != "" {
		path += "?format=" + url.QueryEscape(format)
	}
	var out []byte
	_, err := c.do(ctx, "GET", path, nil, nil, &out)
	return out, err
}

// CheckPaymentLink says whether a payment link was paid.
func (c *Client) CheckPaymentLink(ctx context.Context, id string) (*PaymentLinkCheck, error) {
	var out *PaymentLinkCheck
	_, err := c.do(ctx, "GET", "/v1/payment-links/"+url.PathEscape(id)+"/check", nil, nil, &out)
	return out, err
}

// Route asks which provider should carry a payment (secret key).
func (c *Client) Route(ctx context.Context, req RouteRequest) (*RouteResponse, error) {
	var out *RouteResponse
	_, err := c.do(ctx, "POST", "/v1/route", req, nil, &out)
	return out, err
}

// Partner calls the partner API (/v1/partner/*) of one Cauri service with
// a partner's secret.
type Partner struct{ c *Client }

// NewPartner returns a partner client of the service at baseURL with the
// partner's secret (CAURI_PARTNER_SECRET, or one issued by cauri partner
// create).
func NewPartner(baseURL, secret string, opts ...Option) *Partner {
	c := New(baseURL, "", opts...)
	c.header = http.Header{"X-Partner-Secret": {secret}}
	return &Partner{c: c}
}

// CreateMerchant creates a merchant; its keys (and its owner's invitation
// link, when no password was given) are in this answer only.
func (p *Partner) CreateMerchant(ctx context.Context, req MerchantCreate) (*Merchant, error) {
	var m Merchant
	_, err := p.c.do(ctx, http.MethodPost, "/v1/partner/merchants", req, nil, &m)
	return &m, err
}

// Merchants lists the partner's merchants, newest first (limit 1 to 200;
// 0 for the default 50).
func (p *Partner) Merchants(ctx context.Context, limit int) (*MerchantList, error) {
	path := "/v1/partner/merchants"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var l MerchantList
	_, err := p.c.do(ctx, http.MethodGet, path, nil, nil, &l)
	return &l, err
}

// Merchant reads one of the partner's merchants.
func (p *Partner) Merchant(ctx context.Context, id string) (*Merchant, error) {
	var m Merchant
	_, err := p.c.do(ctx, http.MethodGet, "/v1/partner/merchants/"+url.PathEscape(id), nil, nil, &m)
	return &m, err
}

// UpdateMerchant changes a merchant's name, webhook addresses or events.
func (p *Partner) UpdateMerchant(ctx context.Context, id string, u MerchantUpdate) (*Merchant, error) {
	var m Merchant
	_, err := p.c.do(ctx, http.MethodPatch, "/v1/partner/merchants/"+url.PathEscape(id), u, nil, &m)
	return &m, err
}

// AddGateway connects one of a merchant's aggregator accounts.
func (p *Partner) AddGateway(ctx context.Context, merchantID string, g GatewayCreate) (*Gateway, error) {
	var out Gateway
	_, err := p.c.do(ctx, http.MethodPost, "/v1/partner/merchants/"+url.PathEscape(merchantID)+"/gateways", g, nil, &out)
	return &out, err
}

// Verification reads whether the service has verified a merchant's identity.
func (p *Partner) Verification(ctx context.Context, merchantID string) (*Verification, error) {
	var v Verification
	_, err := p.c.do(ctx, http.MethodGet, "/v1/partner/merchants/"+url.PathEscape(merchantID)+"/verification", nil, nil, &v)
	return &v, err
}

// do sends one call, retrying a 429 after its Retry-After, and decodes a
// 2xx body into out (a *[]byte takes the body as it is).
func (c *Client) do(ctx context.Context, method, path string, in any, header http.Header, out any) (*http.Response, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		for k, v := range c.header {
			req.Header[k] = v
		}
		res, err := c.http.Do(req)
		if err != nil {
			return nil, err
		}
		raw, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
		res.Body.Close()
		if err != nil {
			return nil, err
		}
		if res.StatusCode >= 200 && res.StatusCode < 300 {
			if b, ok := out.(*[]byte); ok { // an image
				*b = raw
				return res, nil
			}
			return res, json.Unmarshal(raw, out)
		}
		apiErr := decodeError(res, raw)
		if res.StatusCode != http.StatusTooManyRequests || attempt >= c.maxRetries || apiErr.RetryAfter > c.maxWait {
			return nil, apiErr
		}
		wait := apiErr.RetryAfter
		if wait <= 0 {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// decodeError reads both error shapes: {"error", "code"} on /v1 and
// {"success": false, "message"} on the sandbox route.
func decodeError(res *http.Response, raw []byte) *APIError {
	var body struct {
		Error   string            `json:"error"`
		Message string            `json:"message"`
		Code    TransferErrorCode `json:"code"`
	}
	json.Unmarshal(raw, &body)
	e := &APIError{Status: res.StatusCode, Message: body.Error, Code: body.Code, RequestID: res.Header.Get("X-Request-Id")}
	if e.Message == "" {
		e.Message = body.Message
	}
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}
