package mpesa

// B2C payouts (Daraja's "B2C Payment Request") and the transaction status
// query that confirms them. Sources: testdata/SOURCES.md, "B2C".
//
// Daraja answers both at once with an acknowledgement only; the outcome
// arrives later, POSTed to the ResultURL given in the request (or to the
// QueueTimeOutURL when the request timed out in Daraja's queue). Daraja
// signs none of it. So:
//
//   - every ResultURL and QueueTimeOutURL the connector gives Daraja is a
//     result address (resultURLFor): the gateway's callback address with a
//     path segment of the transfer's reference, amount and a token, an HMAC
//     keyed by the app's consumer secret (which only the merchant,
//     Safaricom and Cauri know): a callback without the right token is
//     ignored, so a forged one cannot end a transfer;
//   - a result with the right token is the connector's to read
//     (CallbackReference): it keeps it in memory for PayoutStatus, which the
//     transfer service calls right after, on the same node;
//   - PayoutStatus without such a result sends the transaction status
//     query (by OriginatorConversationID, our reference) and answers
//     pending: the query's own result comes back on the same kind of
//     address, and is read as above.
//
// Daraja takes no idempotency key: a request sent twice pays twice, so the
// connector is not idempotent (IdempotentPayout false): the transfer service
// never re-sends one whose answer was lost, and PayoutStatus never answers
// NotFound: nothing Safaricom publishes shows how Daraja answers a status
// query about an OriginatorConversationID it never received (its 2032, "The
// transaction receipt number does not exist.", was seen only for a query
// by receipt, and could be about the empty receipt field), so a transfer
// Daraja may have paid is never ended failed on such an answer: it stays
// processing, for a person to settle from the M-PESA portal
// (docs/gateways.md, "M-Pesa B2C").

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cauri-pay/cauri/internal/gateway"
)

// B2C's paths: the portal's v3 payment request, which takes our
// OriginatorConversationID (the library's v1 does not), and the status
// query.
const (
	b2cPath    = "/mpesa/b2c/v3/paymentrequest"
	statusPath = "/mpesa/transactionstatus/v1/query"
)

// The B2C command ids (credential "command_id"; BusinessPayment when none).
const (
	BusinessPayment  = "BusinessPayment"
	SalaryPayment    = "SalaryPayment"
	PromotionPayment = "PromotionPayment"
)

// The environments (credential "environment"), which pick the certificate
// the initiator's password is encrypted with.
const (
	Sandbox    = "sandbox"
	Production = "production"
)

// sandboxCert is Safaricom's sandbox public certificate, as shipped in
// safaricom/mpesa-node-library keys/sandbox-cert.cer (CN
// apicrypt.safaricom.co.ke). No production certificate is in that
// library: a production gateway gives its security credential ready-made
// (credential "security_credential", which the portal generates).
//
//go:embed certs/sandbox.cer
var sandboxCert []byte

// A result address (a push's CallBackURL, a ResultURL, a QueueTimeOutURL)
// is the gateway's callback address with one more path segment, which
// says what the result must be about: kind.reference.amount.subject.token
// (resultURLFor). In the path, not a query string: guides to Daraja use
// path tokens (testdata/SOURCES.md, "Result addresses"), and nothing says
// Daraja keeps a query string. The callback route gives that segment to
// the connector (gateway.CallbackPathHeader); it is read into these keys.
const (
	kindKey    = "kind"    // stk; result, timeout, status, status_timeout; reversal, reversal_timeout, reversal_status, reversed_status
	refKey     = "ref"     // the payment's, the transfer's or the refund's reference
	amountKey  = "amount"  // the amount in whole shillings, when known
	subjectKey = "subject" // what the result must be about (a receipt, Daraja's id), when any
	tokenKey   = "token"   // tokenFor(kind, reference, signed(amount, subject))
)

// blockedWords are what Daraja's filter refuses in a callback address, in
// any case (testdata/SOURCES.md, "Result addresses").
var blockedWords = []string{"mpesa", "m-pesa", "safaricom"}

// resultKeys are the segment's parts, in order.
var resultKeys = []string{kindKey, refKey, amountKey, subjectKey, tokenKey}

// segmentPart is what a part of the segment may hold: letters, digits, _
// and - (our UUIDs, amounts, receipts, Daraja's ids, base64url tokens).
var segmentPart = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

// resultParams reads the result address segment a callback came to; false
// when it came to the gateway's address itself. A segment that is not of
// resultURLFor's making (another number of parts, other characters) is an
// error.
func resultParams(h http.Header) (url.Values, bool, error) {
	seg := h.Get(gateway.CallbackPathHeader)
	if seg == "" {
		return nil, false, nil
	}
	parts := strings.Split(seg, ".")
	if len(parts) != len(resultKeys) {
		return nil, true, errors.New("M-Pesa callback to an address Cauri did not make: ignored")
	}
	q := url.Values{}
	for i, k := range resultKeys {
		if !segmentPart.MatchString(parts[i]) {
			return nil, true, errors.New("M-Pesa callback to an address Cauri did not make: ignored")
		}
		q.Set(k, parts[i])
	}
	return q, true, nil
}

// signed is what a result address's token covers besides its kind and
// reference: the amount, and the subject when there is one.
func signed(amount, subject string) string {
	if subject == "" {
		return amount
	}
	return amount + "\x00" + subject
}

// b2cRequest is POST /mpesa/b2c/v3/paymentrequest. Its numbers are JSON
// numbers, as in the portal's example (testdata/b2c_request.json).
type b2cRequest struct {
	OriginatorConversationID string      `json:"OriginatorConversationID"`
	InitiatorName            string      `json:"InitiatorName"`
	SecurityCredential       string      `json:"SecurityCredential"`
	CommandID                string      `json:"CommandID"`
	Amount                   json.Number `json:"Amount"`
	PartyA                   json.Number `json:"PartyA"`
	PartyB                   json.Number `json:"PartyB"`
	Remarks                  string      `json:"Remarks"`
	QueueTimeOutURL          string      `json:"QueueTimeOutURL"`
	ResultURL                string      `json:"ResultURL"`
	Occasion                 string      `json:"Occasion"`
}

// statusRequest is POST /mpesa/transactionstatus/v1/query, by
// OriginatorConversationID (the portal: "either an M-Pesa Receipt number or
// an Originator Conversation ID"); IdentifierType 4 is a shortcode.
type statusRequest struct {
	Initiator                string `json:"Initiator"`
	SecurityCredential       string `json:"SecurityCredential"`
	CommandID                string `json:"CommandID"`
	TransactionID            string `json:"TransactionID"`
	OriginatorConversationID string `json:"OriginatorConversationID"`
	PartyA                   string `json:"PartyA"`
	IdentifierType           string `json:"IdentifierType"`
	ResultURL                string `json:"ResultURL"`
	QueueTimeOutURL          string `json:"QueueTimeOutURL"`
	Remarks                  string `json:"Remarks"`
	Occasion                 string `json:"Occasion"`
}

// ack is Daraja's synchronous answer to both: ResponseCode "0" accepted.
type ack struct {
	ConversationID           string `json:"ConversationID"`
	OriginatorConversationID string `json:"OriginatorConversationID"`
	ResponseCode             text   `json:"ResponseCode"`
	ResponseDescription      string `json:"ResponseDescription"`
}

// resultBody is what Daraja POSTs to a ResultURL: {"Result": {...}}.
type resultBody struct {
	Result struct {
		ResultType               text   `json:"ResultType"`
		ResultCode               text   `json:"ResultCode"`
		ResultDesc               string `json:"ResultDesc"`
		OriginatorConversationID string `json:"OriginatorConversationID"`
		ConversationID           string `json:"ConversationID"`
		TransactionID            string `json:"TransactionID"`
		ResultParameters         struct {
			// ResultParameter is a list, or one object alone (a failed
			// result's BOCompletedTime): both are read.
			ResultParameter json.RawMessage `json:"ResultParameter"`
		} `json:"ResultParameters"`
	} `json:"Result"`
}

type resultParam struct {
	Key   string `json:"Key"`
	Value any    `json:"Value"`
}

// param is a ResultParameter's value as text, "" when absent.
func (b resultBody) param(key string) string {
	var list []resultParam
	if raw := b.Result.ResultParameters.ResultParameter; json.Unmarshal(raw, &list) != nil {
		var one resultParam
		json.Unmarshal(raw, &one)
		list = []resultParam{one}
	}
	for _, p := range list {
		if p.Key == key {
			switch v := p.Value.(type) {
			case string:
				return strings.TrimSpace(v)
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64)
			case nil:
				return ""
			default:
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// B2CResult is a payout's outcome read from a trusted result callback.
type B2CResult struct {
	// Status.RecipientName is ReceiverPartyPublicName's name ("2547... -
	// Name": the number is dropped), the wallet holder's registered name.
	Status gateway.Status
}

// b2cConfigured refuses, before anything is sent, a client without B2C
// credentials.
func (c *Client) b2cConfigured() error {
	for _, f := range []struct{ value, credential string }{
		{c.ConsumerKey, "consumer_key"}, {c.ConsumerSecret, "consumer_secret"}, {c.InitiatorName, "initiator_name"}, {c.b2cShortCode(), "b2c_shortcode"},
	} {
		if strings.TrimSpace(f.value) == "" {
			return &gateway.Error{NotSent: true, Message: fmt.Sprintf("M-Pesa B2C needs the credential %q", f.credential)}
		}
	}
	if strings.TrimSpace(c.SecurityCredential) == "" && c.InitiatorPassword == "" {
		return &gateway.Error{NotSent: true, Message: `M-Pesa B2C needs the credential "initiator_password" or "security_credential"`}
	}
	return nil
}

func (c *Client) b2cShortCode() string {
	if s := strings.TrimSpace(c.B2CShortCode); s != "" {
		return s
	}
	return strings.TrimSpace(c.ShortCode)
}

func (c *Client) commandID() string {
	if s := strings.TrimSpace(c.CommandID); s != "" {
		return s
	}
	return BusinessPayment
}

// environment is the credential's environment, else the gateway's
// (production when live).
func environment(env string, live bool) string {
	env = strings.ToLower(strings.TrimSpace(env))
	if env == "" {
		if live {
			return Production
		}
		return Sandbox
	}
	return env
}

// credential is an initiator's SecurityCredential once made.
type credential struct {
	once sync.Once
	cred string
	err  error
}

// securityCredential is the SecurityCredential of the B2C initiator's
// requests (securityCredentialOf).
func (c *Client) securityCredential() (string, error) {
	return c.securityCredentialOf(&c.b2cCred, c.SecurityCredential, c.InitiatorPassword, "security_credential")
}

// securityCredentialOf is an initiator's SecurityCredential: the ready one,
// else its password RSA-encrypted (PKCS #1 v1.5) with the environment's
// certificate, base64 (the library's src/helpers/security.js). The
// encryption is random: it is made once per client and initiator. field
// names the ready credential's field, for the error.
func (c *Client) securityCredentialOf(made *credential, ready, password, field string) (string, error) {
	if s := strings.TrimSpace(ready); s != "" {
		return s, nil
	}
	made.once.Do(func() {
		cert := c.Certificate
		if cert == nil {
			if environment(c.Environment, false) != Sandbox {
				made.err = &gateway.Error{NotSent: true, Message: "M-Pesa: no certificate for the production environment; give the gateway's " + field}
				return
			}
			cert = sandboxCert
		}
		made.cred, made.err = encryptPassword(cert, password)
	})
	return made.cred, made.err
}

// encryptPassword encrypts password with the certificate's RSA key (PEM or
// DER).
func encryptPassword(cert []byte, password string) (string, error) {
	der := cert
	if b, _ := pem.Decode(cert); b != nil {
		der = b.Bytes
	}
	x, err := x509.ParseCertificate(der)
	if err != nil {
		return "", &gateway.Error{NotSent: true, Message: "M-Pesa B2C: unreadable certificate: " + err.Error()}
	}
	key, ok := x.PublicKey.(*rsa.PublicKey)
	if !ok {
		return "", &gateway.Error{NotSent: true, Message: "M-Pesa B2C: the certificate's key is not RSA"}
	}
	out, err := rsa.EncryptPKCS1v15(rand.Reader, key, []byte(password))
	if err != nil {
		return "", &gateway.Error{NotSent: true, Message: "M-Pesa B2C: cannot encrypt the initiator's password: " + err.Error()}
	}
	return base64.StdEncoding.EncodeToString(out), nil
}

// tokenFor is the token of a result address: an HMAC, keyed by the app's
// consumer secret (which only the merchant, Safaricom and Cauri know), of
// its kind, its reference and what else it carries (signed).
func (c *Client) tokenFor(kind, reference, carried string) string {
	m := hmac.New(sha256.New, []byte("cauri mpesa result\x00"+c.ConsumerSecret))
	m.Write([]byte(kind + "\x00" + reference + "\x00" + carried))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// resultURL is notify with the kind, the reference, the amount (whole
// shillings, "" when unknown) and their token.
func (c *Client) resultURL(notify, kind, reference, amount string) (string, error) {
	return c.resultURLFor(notify, kind, reference, amount, "")
}

// resultURLFor is resultURL with a subject (a receipt, an id) the result
// must be about, covered by the token.
func (c *Client) resultURLFor(notify, kind, reference, amount, subject string) (string, error) {

	u, err := url.Parse(strings.TrimSpace(notify))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", errors.New("Daraja requires result addresses (ResultURL), and the gateway's callback address is not an absolute http(s) URL")
	}
	for _, w := range blockedWords {
		if strings.Contains(strings.ToLower(u.String()), w) {
			return "", fmt.Errorf("Daraja blocks callback addresses that contain %q, and the gateway's (%s) does: serve Cauri under another address", w, u.Redacted())
		}
	}
	parts := []string{kind, reference, amount, subject, c.tokenFor(kind, reference, signed(amount, subject))}
	for _, p := range parts[:4] {
		if !segmentPart.MatchString(p) {
			return "", fmt.Errorf("%q cannot be carried in a result address", truncate(p, 60))
		}
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + strings.Join(parts, ".")
	u.RawPath = ""
	return u.String(), nil
}

// Payout implements gateway.Payer: a B2C payment request from the B2C
// shortcode to the wallet, with OriginatorConversationID our reference.
// Daraja's acceptance (ResponseCode "0") is pending; a 4xx refusal, or
// another ResponseCode, is a failure in Daraja's words; a 5xx, an
// unreadable answer or none concludes nothing.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	why := ""
	phone, phoneOK := msisdn(p.Phone)
	whole, amountOK := shillings(p.Amount, p.Currency)
	switch {
	case p.Currency != "KES":
		why = "M-Pesa pays Kenyan shillings (KES) only, not " + string(p.Currency)
	case p.Amount <= 0:
		why = "the amount is not positive"
	case !amountOK:
		why = "M-Pesa takes whole shillings; the amount has cents"
	case !phoneOK:
		why = "the phone number is not a Kenyan mobile number (+2547XXXXXXXX or +2541XXXXXXXX)"
	case strings.TrimSpace(p.Reference) == "":
		why = "the transfer has no reference"
	}
	if why != "" {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to M-Pesa: " + why}, nil
	}
	if err := c.b2cConfigured(); err != nil {
		return gateway.Status{}, err
	}
	amount := strconv.FormatInt(whole, 10)
	result, err := c.resultURL(p.NotifyURL, "result", p.Reference, amount)
	if err != nil {
		return gateway.Status{Outcome: gateway.Failed, Reason: "not sent to M-Pesa: " + err.Error()}, nil
	}
	timeout, _ := c.resultURL(p.NotifyURL, "timeout", p.Reference, amount)
	cred, err := c.securityCredential()
	if err != nil {
		return gateway.Status{}, err
	}
	a, refused, err := c.acknowledged(ctx, b2cPath, "the B2C request", "check the gateway's address",
		c.encodeB2C(p.Reference, whole, phone, p.Description, cred, result, timeout))
	if err != nil || refused != nil {
		return refusedOr(refused), err
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: strings.TrimSpace(a.ConversationID)}, nil
}

// acknowledged sends an initiator's request (a B2C payment, a reversal)
// and reads Daraja's acknowledgement: the ack when it accepted it, a
// failed Status when it refused it (a 4xx, a non-zero ResponseCode), an
// error when the outcome is unknown (a 5xx, none, an unreadable answer)
// or the address is wrong (404, 405: nothing was done; hint says what to
// check).
func (c *Client) acknowledged(ctx context.Context, path, what, hint string, body any) (ack, *gateway.Status, error) {
	code, raw, err := c.api(ctx, path, body)
	switch {
	case err != nil:
		return ack{}, nil, err
	case code == http.StatusOK:
	case code == http.StatusNotFound || code == http.StatusMethodNotAllowed:
		return ack{}, nil, &gateway.Error{Message: "M-Pesa answered " + what + " " + refusal(code, raw) + " (" + hint + ")"}
	case code >= 400 && code < 500:
		return ack{}, &gateway.Status{Outcome: gateway.Failed, Reason: refusal(code, raw), CredentialsRefused: initiatorRefused(raw)}, nil
	default:
		return ack{}, nil, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered " + what + " " + refusal(code, raw)}
	}
	var a ack
	if json.Unmarshal(raw, &a) != nil || a.ResponseCode == "" {
		return ack{}, nil, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa answered " + what + " with unreadable JSON"}
	}
	if a.ResponseCode != "0" {
		return ack{}, &gateway.Status{Outcome: gateway.Failed, Reason: "200 " + truncate(strings.Trim(string(a.ResponseCode)+": "+a.ResponseDescription, ": "), 200)}, nil
	}
	return a, nil, nil
}

// refusedOr is the refusal's Status, or the zero Status.
func refusedOr(refused *gateway.Status) gateway.Status {
	if refused == nil {
		return gateway.Status{}
	}
	return *refused
}

// encodeB2C is the B2C request of a valid payout: whole shillings, the
// wallet as 2547XXXXXXXX, our reference as OriginatorConversationID (and
// its first 12 letters and digits as Occasion), the description's letters
// as Remarks.
func (c *Client) encodeB2C(reference string, whole int64, phone, description, cred, result, timeout string) b2cRequest {
	return b2cRequest{OriginatorConversationID: reference, InitiatorName: c.InitiatorName, SecurityCredential: cred,
		CommandID: c.commandID(), Amount: json.Number(strconv.FormatInt(whole, 10)), PartyA: json.Number(c.b2cShortCode()),
		PartyB: json.Number(phone), Remarks: transactionDesc(description), QueueTimeOutURL: timeout, ResultURL: result,
		Occasion: accountReference(reference)}
}

// IdempotentPayout implements gateway.Payer: Daraja takes no idempotency
// key; a B2C request sent twice pays twice.
func (c *Client) IdempotentPayout() bool { return false }

// PayoutStatus implements gateway.Payer: the outcome a trusted result
// callback brought (see CallbackReference), else the transaction status
// query is sent, by OriginatorConversationID, and the payout is pending
// until its result arrives. Never NotFound (see the top of this file).
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	if r, ok := c.results.take(ref.Reference); ok {
		return r.Status, nil
	}
	if err := c.b2cConfigured(); err != nil {
		return gateway.Status{}, err
	}
	amount := ""
	if whole, ok := shillings(ref.Amount, ref.Currency); ok && ref.Currency == "KES" {
		amount = strconv.FormatInt(whole, 10)
	}
	result, err := c.resultURL(ref.NotifyURL, "status", ref.Reference, amount)
	if err != nil {
		return gateway.Status{}, &gateway.Error{Message: "M-Pesa status query: " + err.Error()}
	}
	timeout, _ := c.resultURL(ref.NotifyURL, "status_timeout", ref.Reference, amount)
	cred, err := c.securityCredential()
	if err != nil {
		return gateway.Status{}, err
	}
	req := statusRequest{Initiator: c.InitiatorName, SecurityCredential: cred, CommandID: "TransactionStatusQuery",
		OriginatorConversationID: ref.Reference, PartyA: c.b2cShortCode(), IdentifierType: "4",
		ResultURL: result, QueueTimeOutURL: timeout, Remarks: "Status", Occasion: accountReference(ref.Reference)}
	return c.statusQuery(ctx, req, ref.ProviderRef)
}

// statusQuery sends a transaction status query, whose answer comes later
// on its ResultURL: Daraja's acknowledgement leaves the operation pending
// (providerRef kept); a refusal or no answer is an error (transient for a
// 5xx, none or an unreadable one).
func (c *Client) statusQuery(ctx context.Context, req statusRequest, providerRef string) (gateway.Status, error) {
	code, raw, err := c.api(ctx, statusPath, req)
	switch {
	case err != nil:
		return gateway.Status{}, err
	case code != http.StatusOK:
		return gateway.Status{}, &gateway.Error{Transient: code >= 500, Answered: true, Message: "M-Pesa answered the status query " + refusal(code, raw)}
	}
	var a ack
	if json.Unmarshal(raw, &a) != nil || a.ResponseCode != "0" {
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "M-Pesa did not accept the status query: " + truncate(string(a.ResponseCode)+" "+a.ResponseDescription, 200)}
	}
	return gateway.Status{Outcome: gateway.Pending, ProviderRef: strings.TrimSpace(providerRef)}, nil
}

// initiatorRefused reports whether a 4xx refusal of a B2C request names
// the initiator or its security credential ("Bad Request - Invalid
// SecurityCredential", the simulator's words for Daraja's 400.002.02).
func initiatorRefused(raw []byte) bool {
	w := strings.ToLower(errorOf(raw).words())
	return strings.Contains(w, "initiator") || strings.Contains(w, "securitycredential")
}

// Daraja's B2C ResultCodes the connector reads (SOURCES.md).
const (
	resultInsufficient = "1"    // "The balance is insufficient for the transaction."
	resultInitiator    = "2001" // "The initiator information is invalid.": the initiator's name or password
)

// trusted reads a result address's parts (resultParams): the reference,
// amount and subject it carries, and whether its token is theirs.
func (c *Client) trusted(q url.Values) (reference, amount, subject string, ok bool) {
	reference, amount, subject = q.Get(refKey), q.Get(amountKey), q.Get(subjectKey)
	want := c.tokenFor(q.Get(kindKey), reference, signed(amount, subject))
	ok = reference != "" && hmac.Equal([]byte(q.Get(tokenKey)), []byte(want))
	return reference, amount, subject, ok
}

// b2cCallback reads a callback to a result address whose parts are q: the
// reference, once the token is checked, and the outcome it carries, if
// final. ok is false when q is not a result address's. A status result
// that concludes nothing is an error (ignored, the reference not named):
// naming it would make the transfer service ask at once again, query
// after query, where the reconciler asks with its backoff.
func (c *Client) b2cCallback(q url.Values, body []byte) (reference string, ok bool, err error) {
	kind := q.Get(kindKey)
	if kind == "" {
		return "", false, nil
	}
	reference, amount, subject, trusted := c.trusted(q)
	if !trusted {
		return "", true, errors.New("M-Pesa callback without the right token: ignored")
	}
	if kind == pushKind {
		// A push's callback: a signal about the payment with this
		// reference (its receipt, when paid: PaidReference).
		return reference, true, nil
	}
	if strings.HasPrefix(kind, "revers") {
		if err := c.reversalCallback(kind, reference, amount, subject, body); err != nil {
			return "", true, err
		}
		return reference, true, nil
	}
	if kind == "status_timeout" {
		// A status query that timed out in Daraja's queue: asking again at
		// once could loop (each query timing out in turn); the reconciler
		// asks again with its backoff.
		return "", true, errors.New("M-Pesa status query timed out in Daraja's queue: the reconciler asks again")
	}
	var b resultBody
	if err := json.Unmarshal(body, &b); err != nil {
		return "", true, errors.New("M-Pesa B2C callback is not a Result")
	}
	switch kind {
	case "result":
		if id := strings.TrimSpace(b.Result.OriginatorConversationID); id != "" && id != reference {
			return "", true, errors.New("M-Pesa B2C result about " + truncate(id, 60) + ", not " + reference)
		}
		if !sameAmount(b.param("TransactionAmount"), amount) {
			return "", true, errors.New("M-Pesa B2C result of " + truncate(b.param("TransactionAmount"), 20) + " KES, not " + amount + ": ignored")
		}
		if r, final := b2cOutcome(b); final {
			c.results.put(reference, r)
		}
	case "status":
		if id := b.param("OriginatorConversationID"); id != "" && id != reference {
			return "", true, errors.New("M-Pesa status result about " + truncate(id, 60) + ", not " + reference)
		}
		if !sameAmount(b.param("Amount"), amount) {
			return "", true, errors.New("M-Pesa status result of " + truncate(b.param("Amount"), 20) + " KES, not " + amount + ": ignored")
		}
		r, final := statusOutcome(b)
		if !final {
			return "", true, errors.New("M-Pesa status result about " + reference + " concludes nothing (" +
				truncate(strings.Trim(string(b.Result.ResultCode)+": "+b.Result.ResultDesc, ": "), 100) + "): the reconciler asks again")
		}
		c.results.put(reference, r)
	} // a B2C timeout is only a signal: the status query decides
	return reference, true, nil
}

// sameAmount reports whether a result's amount (a number, maybe with
// decimals: "300", 10, 4510.00) is want, whole shillings; true when either
// is absent (a failed result carries none).
func sameAmount(got, want string) bool {
	if got == "" || want == "" {
		return true
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && g == w
}

// b2cOutcome reads a B2C result: ResultCode 0 paid, another code failed
// (Daraja's result is final either way).
func b2cOutcome(b resultBody) (B2CResult, bool) {
	r := b.Result
	switch r.ResultCode {
	case "":
		return B2CResult{}, false
	case "0":
		name := publicName(b.param("ReceiverPartyPublicName"))
		return B2CResult{Status: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: firstNonEmpty(r.TransactionID, b.param("TransactionReceipt")),
			RecipientName: name}}, true
	}
	return B2CResult{Status: gateway.Status{Outcome: gateway.Failed, ProviderRef: strings.TrimSpace(r.TransactionID),
		Reason: truncate(strings.Trim(string(r.ResultCode)+": "+strings.TrimSpace(r.ResultDesc), ": "), 200), LowBalance: r.ResultCode == resultInsufficient,
		CredentialsRefused: r.ResultCode == resultInitiator}}, true
}

// statusOutcome reads a status query's result (its ResultParameters name
// the transaction's own OriginatorConversationID, which b2cCallback checks):
// ResultCode 0 with TransactionStatus "Completed" concludes paid. Any other
// answer (a failed query, 2032 "The transaction receipt number does not
// exist.", another status) concludes nothing: its meaning for a query by
// OriginatorConversationID is not confirmed by Safaricom's sources, and a
// payout is never ended on a guess.
func statusOutcome(b resultBody) (B2CResult, bool) {
	if b.Result.ResultCode != "0" || !strings.EqualFold(b.param("TransactionStatus"), "Completed") {
		return B2CResult{}, false
	}
	name := publicName(b.param("CreditPartyName"))
	return B2CResult{Status: gateway.Status{Outcome: gateway.Succeeded, ProviderRef: firstNonEmpty(b.param("ReceiptNo"), b.Result.TransactionID),
		RecipientName: name}}, true
}

// publicName is the name in ReceiverPartyPublicName's "2547... - Name".
func publicName(s string) string {
	if _, name, ok := strings.Cut(s, " - "); ok {
		return strings.TrimSpace(name)
	}
	return strings.TrimSpace(s)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" {
			return x
		}
	}
	return ""
}
