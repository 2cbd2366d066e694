// Package mpesa is the connector to Safaricom's M-Pesa Daraja API in Kenya:
// collections by Lipa na M-Pesa Online (M-Pesa Express, the "STK push" to
// the customer's phone, who approves it with their M-Pesa PIN) and its
// status query, payouts by B2C (b2c.go), refunds by the Reversal API
// (reversal.go), and a simulator of those parts of the API. Facts from
// Safaricom's developer portal (developer.safaricom.co.ke: Authorization,
// M-Pesa Express Simulate and Query, as stored copies of those pages show
// them), Safaricom's own Node library (safaricom/mpesa-node-library), an
// issue of its Android sample (safaricom/LNMOnlineAndroidSample), and
// public Daraja SDKs; testdata/SOURCES.md says which fact comes from
// where, and which remain unconfirmed.
//
// Every call carries a bearer token the OAuth endpoint gives for the app's
// consumer key and secret; the token is kept until shortly before it
// expires. Every request is signed by its Password, base64 of the
// shortcode, the passkey and the request's Timestamp. Daraja takes no id of
// ours and no idempotency key: a push sent twice is pushed twice, so this
// is not a gateway.IdempotentCollector. Safaricom's own id of the push, its
// CheckoutRequestID, is handed to Collection.Created as soon as Daraja
// accepts the push (before the customer can confirm it), and the status
// query and the callback name the payment by it. Callbacks are unsigned:
// only a signal, which a status query confirms.
//
// It imports the domain and the gateway package.
package mpesa

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// The API's hosts.
const (
	SandboxURL = "https://sandbox.safaricom.co.ke"
	LiveURL    = "https://api.safaricom.co.ke"
)

// The API's paths.
const (
	tokenPath = "/oauth/v1/generate?grant_type=client_credentials"
	pushPath  = "/mpesa/stkpush/v1/processrequest"
	queryPath = "/mpesa/stkpushquery/v1/query"
)

// The transaction types of an STK push: to a paybill (the default), or to
// a till (buy goods).
const (
	PayBill  = "CustomerPayBillOnline"
	BuyGoods = "CustomerBuyGoodsOnline"
)

// Client is a Daraja app with the Lipa na M-Pesa Online product, and the
// paybill or till it collects to.
type Client struct {
	BaseURL        string // LiveURL, SandboxURL, or a simulator's
	ConsumerKey    string // the app's consumer key: credential "consumer_key"
	ConsumerSecret string // its consumer secret: credential "consumer_secret"
	// ShortCode is the BusinessShortCode that signs every request
	// (credential "shortcode"): the paybill number, or the store number
	// (head office) of a till.
	ShortCode string
	PassKey   string // Lipa na M-Pesa Online passkey: credential "passkey"
	// TillNumber, when set (credential "till_number", optional), makes the
	// pushes buy goods (CustomerBuyGoodsOnline) paid to that till (PartyB);
	// without it they pay the paybill ShortCode (CustomerPayBillOnline).
	TillNumber string
	HTTP       *http.Client
	Now        func() time.Time // the tokens' and the Timestamps' clock; time.Now when nil

	// B2C payouts (b2c.go): the initiator (credential "initiator_name")
	// and its password ("initiator_password"), which the connector
	// encrypts with the environment's certificate, or the security
	// credential ready-made ("security_credential"); the B2C shortcode
	// ("b2c_shortcode", ShortCode when empty); the command id
	// ("command_id": BusinessPayment when empty, SalaryPayment,
	// PromotionPayment); the environment ("environment": sandbox or
	// production, by default the gateway's). Certificate, when set,
	// replaces the environment's (tests).
	InitiatorName, InitiatorPassword, SecurityCredential string
	B2CShortCode, CommandID, Environment                 string
	Certificate                                          []byte
	// Reversals (reversal.go) and their status queries use their own
	// initiator when the gateway has one ("reversal_initiator_name", with
	// "reversal_initiator_password" or a ready
	// "reversal_security_credential"): Safaricom gives the "Org Reversals
	// Initiator" role to API users apart from "ORG B2C API Initiator";
	// without one, the B2C initiator above.
	ReversalInitiatorName, ReversalInitiatorPassword, ReversalSecurityCredential string

	tokens       gateway.Tokens
	b2cCred      credential
	reversalCred credential
	// Trusted outcomes of B2C payments and reversals, by our reference,
	// for the status check their callback triggers.
	results kept
}

var (
	_ gateway.Connector = (*Client)(nil)
	_ gateway.Payer     = (*Client)(nil)
	_ gateway.Refunder  = (*Client)(nil)
)

// TokenMargin is how long before its expiry a token is renewed.
const TokenMargin = gateway.TokenMargin

// eat is Kenya's time (East Africa Time, UTC+3, no daylight saving), in
// which Safaricom's samples write a Timestamp.
var eat = time.FixedZone("EAT", 3*60*60)

// timestampLayout is a Timestamp's YYYYMMDDHHmmss.
const timestampLayout = "20060102150405"

// Limits of the push's fields (the portal: AccountReference "Maximum of 12
// characters", TransactionDesc "between 1 and 13 characters").
const (
	accountReferenceMax = 12
	transactionDescMax  = 13
)

// stkPush is POST /mpesa/stkpush/v1/processrequest. Its numbers are
// written as strings, as in the portal's example: the shortcode, the
// amount in whole shillings, the phone numbers.
type stkPush struct {
	BusinessShortCode string `json:"BusinessShortCode"`
	Password          string `json:"Password"`
	Timestamp         string `json:"Timestamp"`
	TransactionType   string `json:"TransactionType"`
	Amount            string `json:"Amount"`
	PartyA            string `json:"PartyA"`
	PartyB            string `json:"PartyB"`
	PhoneNumber       string `json:"PhoneNumber"`
	CallBackURL       string `json:"CallBackURL"`
	AccountReference  string `json:"AccountReference"`
	TransactionDesc   string `json:"TransactionDesc"`
}

// stkQuery is POST /mpesa/stkpushquery/v1/query.
type stkQuery struct {
	BusinessShortCode string `json:"BusinessShortCode"`
	Password          string `json:"Password"`
	Timestamp         string `json:"Timestamp"`
	CheckoutRequestID string `json:"CheckoutRequestID"`
}

// pushAnswer is Daraja's acknowledgement of a push.
type pushAnswer struct {
	MerchantRequestID   string `json:"MerchantRequestID"`
	CheckoutRequestID   string `json:"CheckoutRequestID"`
	ResponseCode        text   `json:"ResponseCode"`
	ResponseDescription string `json:"ResponseDescription"`
	CustomerMessage     string `json:"CustomerMessage"`
}

// queryAnswer is the status query's answer once the push has a result:
// ResultCode "0" is a payment, any other code a failure.
type queryAnswer struct {
	ResponseCode        text   `json:"ResponseCode"`
	ResponseDescription string `json:"ResponseDescription"`
	MerchantRequestID   string `json:"MerchantRequestID"`
	CheckoutRequestID   string `json:"CheckoutRequestID"`
	ResultCode          text   `json:"ResultCode"`
	ResultDesc          string `json:"ResultDesc"`
}

// text is a JSON string, or a number taken as its text: the query writes
// ResultCode as a string, the callback as a number.
type text = gateway.Text

// darajaError is Daraja's refusal: {requestId, errorCode, errorMessage}.
type darajaError struct {
	RequestID    text `json:"requestId"`
	ErrorCode    text `json:"errorCode"`
	ErrorMessage text `json:"errorMessage"`
}

func errorOf(raw []byte) darajaError {
	var e darajaError
	json.Unmarshal(raw, &e)
	return e
}

// words is a refusal in Daraja's words: "errorCode: errorMessage", "" when
// it has none.
func (e darajaError) words() string {
	return truncate(strings.Trim(string(e.ErrorCode)+": "+string(e.ErrorMessage), ": "), 200)
}

// refusal is an answer's HTTP status and Daraja's words.
func refusal(code int, raw []byte) string {
	if w := errorOf(raw).words(); w != "" {
		return fmt.Sprintf("%d %s", code, w)
	}
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

// Daraja's error codes the connector reads.
const (
	// invalidToken is "Invalid Access Token", which Daraja answers with a
	// 404; tokenRefusedToo is the same words under another code, seen in
	// integrations.
	invalidToken    = "404.001.03"
	tokenRefusedToo = "400.003.01"
	// processing is the status query's "The transaction is being
	// processed": the customer has not answered the push yet. Daraja uses
	// the same code for other server errors, hence the words are read too.
	processing = "500.001.1001"
)

// tokenRefused reports whether an answer refuses the bearer token (expired
// or revoked): Daraja refuses it before doing anything.
func tokenRefused(code int, raw []byte) bool {
	if code == http.StatusUnauthorized {
		return true
	}
	c := string(errorOf(raw).ErrorCode)
	return c == invalidToken || c == tokenRefusedToo
}

// stillProcessing reports whether a status query's answer is Daraja's
// "The transaction is being processed": the push waits for the customer.
func stillProcessing(raw []byte) bool {
	e := errorOf(raw)
	return string(e.ErrorCode) == processing && strings.Contains(strings.ToLower(string(e.ErrorMessage)), "being processed")
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n]))
	}
	return s
}

// kenyanRE is a Kenyan mobile number as Daraja wants PartyA and
// PhoneNumber: 254 then 7XXXXXXXX or 1XXXXXXXX (Safaricom's 07 and 011
// prefixes), an optional "+" before.
var kenyanRE = regexp.MustCompile(`^\+?254([17][0-9]{8})$`)

// msisdn is an E.164 Kenyan mobile number as Daraja wants it, 2547XXXXXXXX
// without the "+"; ok is false when phone is not one.
func msisdn(phone string) (digits string, ok bool) {
	m := kenyanRE.FindStringSubmatch(strings.TrimSpace(phone))
	if m == nil {
		return "", false
	}
	return "254" + m[1], true
}

// shillings is an amount in minor units of KES (cents) as Daraja's Amount,
// whole shillings; ok is false when it has cents or is not positive: M-Pesa
// only moves whole shillings.
func shillings(amount int64, currency cauri.Currency) (whole int64, ok bool) {
	unit := int64(1)
	for range currency.Exponent() {
		unit *= 10
	}
	return amount / unit, amount > 0 && amount%unit == 0
}

// webURL reports whether s is an absolute http(s) address, as CallBackURL
// must be.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// invalid is a collection refused before anything is sent: not a
// collection M-Pesa can make (a card, another currency, cents, a number
// that is not Kenyan) or without the callback address Daraja requires. It
// answers the failed Status and true, or false when all is well.
func invalid(col gateway.Collection) (gateway.Status, bool) {
	why := ""
	_, phoneOK := msisdn(col.Phone)
	_, amountOK := shillings(col.Amount, col.Currency)
	switch {
	case col.Card:
		why = "it takes no cards"
	case col.Currency != "KES":
		why = "M-Pesa collects Kenyan shillings (KES) only, not " + string(col.Currency)
	case col.Amount <= 0:
		why = "the amount is not positive"
	case !amountOK:
		why = "M-Pesa takes whole shillings; the amount " + cauri.FormatAmount(col.Amount, col.Currency) + " KES has cents"
	case !phoneOK:
		why = "the phone number is not a Kenyan mobile number (+2547XXXXXXXX or +2541XXXXXXXX)"
	case strings.TrimSpace(col.NotifyURL) == "":
		why = "Daraja requires a callback address (CallBackURL), and the collection has none"
	case !webURL(col.NotifyURL):
		why = "the callback address is not an absolute http(s) URL"
	default:
		return gateway.Status{}, false
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to M-Pesa: " + why}, true
}

// alphanumerics is s's ASCII letters and digits (and spaces, when spaces
// is true, collapsed), at most n of them: what M-Pesa shows the customer
// in the push's prompt and statement.
func alphanumerics(s string, n int, spaces bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case spaces && (r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			b.WriteRune(' ')
		}
	}
	return truncate(strings.Join(strings.Fields(b.String()), " "), n)
}

// accountReference is the push's AccountReference: the first 12 letters
// and digits of our reference (a UUID's first 12 hex digits), which the
// customer sees in the prompt and which names the payment in the
// merchant's M-Pesa statement. Our reference's own, never the description,
// so that a statement line can be traced back to its attempt.
func accountReference(reference string) string {
	if s := alphanumerics(reference, accountReferenceMax, false); s != "" {
		return s
	}
	return "Cauri"
}

// transactionDesc is the push's TransactionDesc: the description's letters,
// digits and spaces, at most 13; "Payment" when it has none.
func transactionDesc(description string) string {
	if s := alphanumerics(description, transactionDescMax, true); s != "" {
		return s
	}
	return "Payment"
}

// password is the Password of a request made at timestamp: base64 of the
// shortcode, the passkey and the same timestamp.
func (c *Client) password(timestamp string) string {
	return base64.StdEncoding.EncodeToString([]byte(c.ShortCode + c.PassKey + timestamp))
}

// timestamp is a request's Timestamp, now in Kenya's time.
func (c *Client) timestamp() string { return c.now().In(eat).Format(timestampLayout) }

// encodePush is the push of a valid collection, signed now. Its
// CallBackURL is the gateway's callback address with the collection's
// reference, amount and their token (resultURL, kind pushKind): the
// callback that comes back to it is Safaricom's, and only such a callback
// gives the payment its receipt (PaidReference).
func (c *Client) encodePush(col gateway.Collection) (stkPush, error) {
	phone, _ := msisdn(col.Phone)
	whole, _ := shillings(col.Amount, col.Currency)
	kind, partyB := PayBill, c.ShortCode
	if till := strings.TrimSpace(c.TillNumber); till != "" {
		kind, partyB = BuyGoods, till
	}
	amount := strconv.FormatInt(whole, 10)
	callback, err := c.resultURL(col.NotifyURL, pushKind, col.Reference, amount)
	if err != nil {
		return stkPush{}, err
	}
	ts := c.timestamp()
	return stkPush{BusinessShortCode: c.ShortCode, Password: c.password(ts), Timestamp: ts, TransactionType: kind,
		Amount: amount, PartyA: phone, PartyB: partyB, PhoneNumber: phone,
		CallBackURL: callback, AccountReference: accountReference(col.Reference),
		TransactionDesc: transactionDesc(col.Description)}, nil
}

// encodeQuery is the status query of a push, signed now.
func (c *Client) encodeQuery(checkoutRequestID string) stkQuery {
	ts := c.timestamp()
	return stkQuery{BusinessShortCode: c.ShortCode, Password: c.password(ts), Timestamp: ts, CheckoutRequestID: checkoutRequestID}
}

// Collect implements gateway.Connector: an STK push to the customer's
// phone. Daraja answers ResponseCode "0" and its CheckoutRequestID once it
// has sent the push: the id goes to col.Created, and the payment is
// pending until the customer enters their PIN. A refusal (another
// ResponseCode, a 4xx with Daraja's words) is a failed collection. A 5xx
// concludes nothing (transient); so does no answer.
func (c *Client) Collect(ctx context.Context, col gateway.Collection) (gateway.Status, error) {
	if st, bad := invalid(col); bad {
		return st, nil
	}
	if err := c.configured(); err != nil {
		return gateway.Status{}, err
	}
	push, err := c.encodePush(col)
	if err != nil {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to M-Pesa: " + err.Error()}, nil
	}
	code, raw, err := c.api(ctx, pushPath, push)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code == http.StatusOK:
		return accepted(raw, col.Created)
	case code < 400:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: fmt.Sprintf("M-Pesa answered the push %d, not 200", code)}
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		// No such endpoint here: the gateway's address is wrong, not the payment.
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa answered the push " + refusal(code, raw) + " (check the gateway's address)"}
	}
	return gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw)}, nil
}

// accepted reads Daraja's 200 to a push: ResponseCode "0" with a
// CheckoutRequestID is a push sent, recorded through created, pending;
// another ResponseCode is a refusal.
func accepted(raw []byte, created func(string) error) (gateway.Status, error) {
	var a pushAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered the push with unreadable JSON"}
	}
	id := strings.TrimSpace(a.CheckoutRequestID)
	switch {
	case a.ResponseCode != "0" && a.ResponseCode != "":
		why := truncate(strings.Trim(string(a.ResponseCode)+": "+a.ResponseDescription, ": "), 200)
		return gateway.Status{Outcome: gateway.Failed, Reason: "200 " + why}, nil
	case a.ResponseCode == "" || id == "":
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered the push without a ResponseCode or a CheckoutRequestID"}
	}
	if created != nil {
		if err := created(id); err != nil {
			// The push is on the customer's phone already: its outcome is
			// unknown, as after a timeout, never a reason to try elsewhere.
			return gateway.Status{}, &gateway.Error{Transient: true, Message: "M-Pesa push " + id + " sent but not recorded: " + err.Error()}
		}
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: id}, nil
}

// CollectionStatus implements gateway.Connector: the STK push query, by
// Safaricom's CheckoutRequestID (ref.ProviderRef). A paid push's
// ProviderRef becomes its M-Pesa receipt number when its callback gives one
// (PaidReference): what a reversal names the payment by, and what the
// customer's SMS shows. A ProviderRef that is a receipt is a collected
// payment: succeeded, without a call. Daraja cannot be asked
// by our reference: without a CheckoutRequestID, Daraja never accepted a
// push as far as we know (it refused it, failed, or never answered), so
// there is nothing at Safaricom to ask about, and nothing that can be
// paid: not found.
//
// ResultCode "0" is a payment; any other ResultCode is the push's failure
// (1032 cancelled by the customer, 1 insufficient balance, 2001 wrong PIN,
// 1037 the phone unreachable, 1019 expired, ...), final: a new push is
// another payment. "The transaction is being processed" is pending. Any
// other refusal, including an unknown CheckoutRequestID (Daraja's generic
// 400.002.02), concludes nothing: an error.
func (c *Client) CollectionStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	id := strings.TrimSpace(ref.ProviderRef)
	if id == "" {
		return gateway.Status{Outcome: gateway.NotFound}, nil
	}
	if isReceipt(id) {
		// Only a collected payment's id is ever its receipt (see below).
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}, nil
	}
	if err := c.configured(); err != nil {
		return gateway.Status{}, err
	}
	code, raw, err := c.api(ctx, queryPath, c.encodeQuery(id))
	switch {
	case stillProcessing(raw):
		return gateway.Status{Outcome: gateway.Pending, ProviderRef: id}, nil
	case err != nil:
		return gateway.Status{}, err
	case code != http.StatusOK:
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa answered the status query " + refusal(code, raw)}
	}
	var a queryAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered an unreadable status"}
	}
	return resultStatus(a, id)
}

// resultStatus reads a status query's answer about push id.
func resultStatus(a queryAnswer, id string) (gateway.Status, error) {
	switch {
	case a.ResponseCode != "" && a.ResponseCode != "0":
		why := truncate(strings.Trim(string(a.ResponseCode)+": "+a.ResponseDescription, ": "), 200)
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa refused the status query: " + why}
	case a.CheckoutRequestID != "" && strings.TrimSpace(a.CheckoutRequestID) != id:
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa answered about push " + truncate(a.CheckoutRequestID, 60) + ", not " + id}
	case a.ResultCode == "":
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered a status without a ResultCode"}
	case a.ResultCode == "0":
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: id}, nil
	}
	why := truncate(strings.Trim(string(a.ResultCode)+": "+strings.TrimSpace(a.ResultDesc), ": "), 200)
	return gateway.Status{Outcome: gateway.Failed, ProviderRef: id, Reason: why}, nil
}

// callbackBody is what Daraja POSTs to a push's CallBackURL once it has a
// result: {"Body": {"stkCallback": {...}}}.
type callbackBody struct {
	Body struct {
		STKCallback stkCallback `json:"stkCallback"`
	} `json:"Body"`
}

// stkCallback is a push's result: its ids, ResultCode (a number here, not
// a string as in the query) and ResultDesc, and, for a payment,
// CallbackMetadata's items (Amount, MpesaReceiptNumber, TransactionDate,
// PhoneNumber; sometimes a Balance without a value). The receipt number is
// only there: the query does not give it (CallbackReference keeps it).
type stkCallback struct {
	MerchantRequestID string            `json:"MerchantRequestID"`
	CheckoutRequestID string            `json:"CheckoutRequestID"`
	ResultCode        json.Number       `json:"ResultCode"`
	ResultDesc        string            `json:"ResultDesc"`
	CallbackMetadata  *callbackMetadata `json:"CallbackMetadata,omitempty"`
}

type callbackMetadata struct {
	Item []callbackItem `json:"Item"`
}

type callbackItem struct {
	Name  string `json:"Name"`
	Value any    `json:"Value,omitempty"`
}

// CallbackReference implements gateway.Connector. Daraja signs no
// callback. A push's callback to the CallBackURL the push gave
// (encodePush) carries our reference and its token in the address: it is
// Safaricom's, and it names the payment by our reference. Any other
// stkCallback (a push sent before CallBackURLs carried a token, or a
// forgery) carries only Safaricom's CheckoutRequestID: that is what it
// returns, and the caller looks the attempt up by the aggregator's id (the
// one Collection.Created recorded). Either is only a signal, which a
// status query confirms; only the first kind can give the payment its
// receipt (PaidReference).
//
// A B2C, reversal or status-query result (b2c.go) is known by its
// address's path segment too: its reference, once its token is checked,
// and its outcome kept for PayoutStatus or RefundStatus.
func (c *Client) CallbackReference(h http.Header, body []byte) (string, error) {
	if q, ok, err := resultParams(h); err != nil {
		return "", err
	} else if ok {
		if ref, ok, err := c.b2cCallback(q, body); ok {
			return ref, err
		}
	}
	stk, err := readCallback(body)
	if err != nil {
		return "", err
	}
	return stk.CheckoutRequestID, nil
}

// pushCallback is what is read of a push's callback: its id, ResultCode
// (as text: a number in Daraja's, anything in a forgery) and items.
type pushCallback struct {
	CheckoutRequestID string
	ResultCode        string
	Items             []callbackItem
}

// readCallback reads a push's callback; an error when it is not one.
func readCallback(body []byte) (pushCallback, error) {
	var cb struct {
		Body struct {
			STKCallback struct {
				CheckoutRequestID string `json:"CheckoutRequestID"`
				ResultCode        any    `json:"ResultCode"`
				CallbackMetadata  struct {
					Item []callbackItem `json:"Item"`
				} `json:"CallbackMetadata"`
			} `json:"stkCallback"`
		} `json:"Body"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&cb); err != nil {
		return pushCallback{}, errors.New("M-Pesa callback is not an stkCallback")
	}
	stk := cb.Body.STKCallback
	id := strings.TrimSpace(stk.CheckoutRequestID)
	if id == "" {
		return pushCallback{}, errors.New("M-Pesa callback without a CheckoutRequestID")
	}
	return pushCallback{CheckoutRequestID: id, ResultCode: fmt.Sprint(stk.ResultCode), Items: stk.CallbackMetadata.Item}, nil
}

// pushKind is the kind (kindKey) of a push's CallBackURL.
const pushKind = "stk"

// PaidReference implements gateway.PaidReference: a paid push's
// CheckoutRequestID and its M-Pesa receipt number, from its callback to
// the CallBackURL the push gave, token checked: ResultCode 0, the Amount
// the address was made for, a receipt number. The attempt known by that
// CheckoutRequestID takes the receipt as its ProviderRef once a status
// query confirms it was paid (what a reversal names the payment by; the
// query never gives it). Nothing for any other callback: an unsigned
// receipt is never believed, since refunding by it could reverse another
// payment.
func (c *Client) PaidReference(h http.Header, body []byte) (checkoutRequestID, receipt string) {
	q, ok, err := resultParams(h)
	if err != nil || !ok || q.Get(kindKey) != pushKind {
		return "", ""
	}
	_, amount, _, trusted := c.trusted(q)
	stk, err := readCallback(body)
	if !trusted || err != nil || stk.ResultCode != "0" {
		return "", ""
	}
	var paid string
	for _, it := range stk.Items {
		switch it.Name {
		case "Amount":
			paid = fmt.Sprint(it.Value)
		case "MpesaReceiptNumber":
			receipt = strings.TrimSpace(fmt.Sprint(it.Value))
		}
	}
	if amount == "" || paid == "" || !sameAmount(paid, amount) || !isReceipt(receipt) || isReceipt(stk.CheckoutRequestID) {
		return "", "" // (a receipt is never a push's id: the final id is replaced once)
	}
	return stk.CheckoutRequestID, receipt
}

// receiptRE is an M-Pesa receipt number (a transaction id): ten capital
// letters and digits (the portal's NLJ7RT61SV, PDU91HIVIT, SKC82PACB8).
// A CheckoutRequestID (ws_CO_...) never is one.
var receiptRE = regexp.MustCompile(`^[A-Z0-9]{10}$`)

func isReceipt(s string) bool { return receiptRE.MatchString(s) }

// configured refuses, before anything is sent, a client without the
// credentials every request needs.
func (c *Client) configured() error {
	for _, f := range []struct{ value, credential string }{
		{c.ConsumerKey, "consumer_key"}, {c.ConsumerSecret, "consumer_secret"}, {c.ShortCode, "shortcode"}, {c.PassKey, "passkey"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return &gateway.Error{NotSent: true, Message: fmt.Sprintf("M-Pesa needs the credential %q", f.credential)}
		}
	}
	return nil
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// api POSTs one request to Daraja with a token (gateway.Tokens.Call: a
// refused token, a 401 or Daraja's "Invalid Access Token" as a 404, is
// renewed once; Daraja refuses it before doing anything).
func (c *Client) api(ctx context.Context, path string, in any) (int, []byte, error) {
	return c.tokens.Call(ctx, "", c.now(), gateway.TokenCall{
		Name: "M-Pesa", Fetch: c.newToken, Refused: tokenRefused, Refusal: refusal,
		Words: func(raw []byte) string { return errorOf(raw).words() },
		Send: func(ctx context.Context, tok string) (int, []byte, error) {
			return c.send(ctx, http.MethodPost, path, http.Header{"Authorization": {"Bearer " + tok}}, in)
		},
	})
}

// newToken is GET /oauth/v1/generate?grant_type=client_credentials with the
// consumer key and secret (Basic): {access_token, expires_in}, expires_in
// a string of seconds ("3599").
func (c *Client) newToken(ctx context.Context) (string, int64, error) {
	basic := base64.StdEncoding.EncodeToString([]byte(c.ConsumerKey + ":" + c.ConsumerSecret))
	code, raw, err := c.send(ctx, http.MethodGet, tokenPath, http.Header{"Authorization": {"Basic " + basic}}, nil)
	switch {
	case err != nil:
		return "", 0, err
	case code >= 400 && code < 500:
		return "", 0, &gateway.Error{Credentials: true, Message: "M-Pesa refused the gateway's consumer key or secret (" + refusal(code, raw) + ")"}
	case code != http.StatusOK:
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered the token request " + refusal(code, raw)}
	}
	var a struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   text   `json:"expires_in"`
	}
	if json.Unmarshal(raw, &a) != nil || a.AccessToken == "" {
		return "", 0, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa gave no token"}
	}
	secs, _ := strconv.ParseInt(string(a.ExpiresIn), 10, 64)
	return a.AccessToken, secs, nil
}

// send makes one request and answers its status and body (gateway.Send:
// Daraja's refusals must be read, and some of its 5xx and 404 only mean a
// push still waits or a token expired).
func (c *Client) send(ctx context.Context, method, path string, header http.Header, in any) (int, []byte, error) {
	u := gateway.URL(c.BaseURL, path)
	if parsed, err := url.Parse(u); err != nil || parsed.Host == "" {
		return 0, nil, &gateway.Error{Message: "M-Pesa address: no host in " + truncate(c.BaseURL, 100)}
	}
	return gateway.Send(ctx, c.HTTP, "M-Pesa", method, u, header, in)
}
