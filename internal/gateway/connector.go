package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
)

// Collection asks an aggregator to collect one payment.
type Collection struct {
	// Reference is ours, unique per attempt; aggregators that take a
	// client id use it as their idempotency key, so a retry never charges twice.
	Reference   string
	Amount      int64 // minor units
	Currency    cauri.Currency
	Phone       string // E.164
	Operator    string // the aggregator's own code for the operator
	Description string
	Email       string // the customer's, when the session has one
	Name        string // the customer's, when the session has one
	Country     string // ISO 3166-1 alpha-2 of the operator; "" for a card
	// Code is a code the customer obtained before paying, for the
	// operators that require one at initiation (pawaPay's
	// preAuthorisationCode for Orange Burkina Faso: a one-time code the
	// customer gets by dialling a USSD code). The operator's entry in
	// providers.json ("preauth") says how the customer gets it.
	Code string
	// Billing is the card holder's postal address, for a card payment
	// through an aggregator that needs it to offer cards
	// (Provider.CardBilling: CinetPay); Name, Email and Phone are then the
	// card holder's too.
	Billing Billing
	// Card asks for a card payment on the aggregator's own page (no phone,
	// no operator): the Status carries the page's RedirectURL.
	Card bool
	// ReturnURL is where the aggregator's page sends the customer back (the
	// hosted page); NotifyURL is this gateway's callback address, for the
	// aggregators that take it per payment.
	ReturnURL, NotifyURL string
	// Created, when set, is called with the aggregator's own id as soon as
	// the aggregator has created the payment and before anything can move
	// money, for the aggregators that cannot be asked by our reference: the
	// caller stores it. If it fails, the connector starts nothing more.
	Created func(providerRef string) error
}

// Billing is a card holder's postal address. The country is the card
// holder's phone number's.
type Billing struct {
	Address, City, State, ZipCode string
}

// Ref names a collection when its status is read: our reference and, once
// known, the aggregator's own id.
type Ref struct {
	Reference   string
	ProviderRef string
	// Collection, in a refund's RefundStatus only, names the refunded
	// collection as Refund.Collection does, for the aggregators that know
	// a refund only by its payment (Wave: by its checkout session).
	Collection *Ref
	// NotifyURL, in a PayoutStatus or a RefundStatus only, is the
	// gateway's callback address, for the aggregators whose status query
	// answers there (M-Pesa's transaction status query); Amount and
	// Currency are the payout's, for those that check the answer's amount
	// (M-Pesa).
	NotifyURL string
	Amount    int64 // minor units
	Currency  cauri.Currency
}

// Outcome is where a collection stands at the aggregator.
type Outcome string

const (
	Pending   Outcome = "pending"   // started; the customer has not finished
	Succeeded Outcome = "succeeded" // the money is collected
	Failed    Outcome = "failed"    // declined, refused or failed: final
	NotFound  Outcome = "not_found" // the aggregator never received it: safe to try elsewhere
)

// Status is a collection's state as the aggregator reports it.
type Status struct {
	Outcome     Outcome
	ProviderRef string // the aggregator's (or operator's) transaction id, once known
	Reason      string // the aggregator's words for a failure
	// RedirectURL is the aggregator's page where the customer finishes a
	// pending payment (cards, aggregators that pay through their own page).
	RedirectURL string
	// NeedsCode: the aggregator waits for a code the customer receives
	// after initiation (Paystack's send_otp: a voucher or one-time code);
	// the hosted page asks for it and CodeSubmitter.SubmitCode sends it.
	NeedsCode bool
	// Instructions are the aggregator's words telling the customer how to
	// finish a pending payment (a USSD code to dial, "approve on your
	// phone"), shown on the waiting screen as the aggregator gives them.
	Instructions string
	// LowBalance: a payout failed because the merchant's wallet at the
	// aggregator lacks the funds.
	LowBalance bool
	// RecipientName is the account holder's name as a payout's own final
	// answer reports it (M-Pesa's B2C result: ReceiverPartyPublicName's
	// name, without the number); empty when the answer names nobody.
	RecipientName string
	// CredentialsRefused: a payout failed because the aggregator refused
	// the gateway's own credentials (M-Pesa's ResultCode 2001, "The
	// initiator information is invalid."): nothing was paid, and the
	// gateway, not the recipient, needs fixing.
	CredentialsRefused bool
}

// Connector talks to one aggregator with one gateway's credentials.
type Connector interface {
	// Collect starts a collection. A refusal by the aggregator is a Status
	// with Outcome Failed; an error means the outcome is unknown.
	Collect(ctx context.Context, c Collection) (Status, error)
	// CollectionStatus reads a collection's state.
	CollectionStatus(ctx context.Context, ref Ref) (Status, error)
	// CallbackReference reads which collection an aggregator's callback is
	// about. The callback is only a signal: its state is confirmed with
	// CollectionStatus before anything changes.
	CallbackReference(h http.Header, body []byte) (string, error)
}

// CallbackQueryHeader carries a callback's query string to
// Connector.CallbackReference (which sees headers and body only), for the
// aggregators that give our reference back only in the address we gave
// them. The service sets it; a caller's own is dropped.
const CallbackQueryHeader = "X-Cauri-Callback-Query"

// CallbackPathHeader carries, likewise, the path segment a callback came
// to after the gateway's callback address (/callbacks/{gatewayId}/{segment}),
// for the connectors that give each request an address of its own (M-Pesa's
// result addresses, with their token).
const CallbackPathHeader = "X-Cauri-Callback-Path"

// CodeSubmitter is a connector that can pass the aggregator a code the
// customer entered for a pending collection whose Status had NeedsCode.
// It answers like CollectionStatus; a code the aggregator refuses is a
// Status with Outcome Pending and NeedsCode again (the customer may retry)
// or Failed, as the aggregator decides.
type CodeSubmitter interface {
	SubmitCode(ctx context.Context, ref Ref, code string) (Status, error)
}

// ErrNoCode is a code submitted through a connector that takes none.
var ErrNoCode = errors.New("gateway: this aggregator takes no code from the customer")

// NameLooker is a connector that can tell, before a payout, the name of a
// Mobile Money account's holder (MTN MoMo's basicuserinfo; the other
// aggregators document no such lookup: docs/transfers.md). Every observed
// connector has the method; one that cannot look names up answers
// ErrNoNameLookup without calling anyone.
type NameLooker interface {
	// AccountHolderName answers the holder's name of the account phone
	// (E.164) of operator (the aggregator's own code for it) in country
	// (ISO 3166-1 alpha-2). ErrNameUnknown: the aggregator knows no holder
	// of this account, or gives no name for it. Any other error (an *Error)
	// means it could not be asked: nothing is concluded about the name.
	AccountHolderName(ctx context.Context, country, operator, phone string) (string, error)
}

var (
	// ErrNoNameLookup is a name asked of a connector that cannot tell one.
	ErrNoNameLookup = errors.New("gateway: this aggregator tells no account holder's name")
	// ErrNameUnknown is an aggregator's answer that it knows no holder of
	// the account, or no name for it.
	ErrNameUnknown = errors.New("gateway: the aggregator knows no holder of this account")
)

// Payout asks an aggregator to send money to a Mobile Money account.
type Payout struct {
	// Reference is ours, the transfer's; aggregators that take a client id
	// use it as their idempotency key, so a retry never pays twice.
	Reference     string
	Amount        int64 // minor units
	Currency      cauri.Currency
	Phone         string // E.164
	Operator      string // the aggregator's own code for the operator
	Country       string // ISO 3166-1 alpha-2
	RecipientName string
	Description   string
	NotifyURL     string // this gateway's callback address, for aggregators that take it per payout
	// Created is as Collection.Created: the aggregator's own id, stored
	// before the money can move, for aggregators not asked by our reference.
	Created func(providerRef string) error
}

// Payer is a connector that can send money. Payout answers like Collect:
// a refusal is a Status with Outcome Failed; an error means the outcome
// is unknown. A payout's CallbackReference is read by the same
// Connector method as a collection's.
type Payer interface {
	Payout(ctx context.Context, p Payout) (Status, error)
	PayoutStatus(ctx context.Context, ref Ref) (Status, error)
	// IdempotentPayout reports whether a payout sent again with the same
	// reference is never paid twice (pawaPay's payoutId).
	IdempotentPayout() bool
}

// Refund asks the aggregator that collected a payment to give back all or
// part of it to the payer.
type Refund struct {
	// Reference is ours, the refund's; aggregators that take a client id
	// use it as their idempotency key (pawaPay's refundId), so a retry
	// never refunds twice.
	Reference string
	// Collection names the refunded collection as its status is read: our
	// reference (pawaPay's depositId) and the aggregator's own id.
	Collection Ref
	Amount     int64 // minor units; always given, the whole rest included
	Currency   cauri.Currency
	Operator   string // the aggregator's code of the collection's operator
	Reason     string // the merchant's words, for aggregators that take a note
	NotifyURL  string // this gateway's callback address, for aggregators that take it per refund
}

// Refunder is a connector whose aggregator's API refunds a collection.
// Refund answers like Collect: a refusal is a Status with Outcome Failed;
// an error means the outcome is unknown. A refund's CallbackReference is
// read by the same Connector method as a collection's.
type Refunder interface {
	Refund(ctx context.Context, r Refund) (Status, error)
	RefundStatus(ctx context.Context, ref Ref) (Status, error)
	// IdempotentRefund reports whether a refund sent again with the same
	// reference is never refunded twice (pawaPay's refundId, MTN MoMo's
	// X-Reference-Id). When false (Paystack, Flutterwave: no idempotency
	// key), a refund is never sent twice: one whose answer was lost stays
	// pending, and RefundStatus without the aggregator's id never answers
	// NotFound (nothing proves the aggregator did not receive it).
	IdempotentRefund() bool
}

// WholeRefundsOnly reports whether r refunds only a whole payment (Wave:
// its refund takes no amount): the refund service then refuses, before
// anything is written or sent, a refund of a part, or of the rest of a
// payment already partly refunded or being refunded.
func WholeRefundsOnly(r Refunder) bool {
	w, ok := r.(interface{ WholeRefundsOnly() bool })
	return ok && w.WholeRefundsOnly()
}

// RefundsUnavailable says why r, a Refunder whose refunds depend on its
// gateway's credentials (MTN MoMo's need the Disbursement product), cannot
// refund with them; "" when it can. The refund service answers
// refunds_unsupported with it, before anything is written.
func RefundsUnavailable(r Refunder) string {
	if u, ok := r.(interface{ RefundsUnavailable() string }); ok {
		return u.RefundsUnavailable()
	}
	return ""
}

// CollectionUnrefundable says why r cannot refund the collection ref
// (M-Pesa: a payment whose receipt number never reached Cauri, which a
// reversal names it by); "" when it can. The refund service answers
// refunds_unsupported with it, before anything is written.
func CollectionUnrefundable(r Refunder, ref Ref) string {
	if u, ok := r.(interface{ CollectionUnrefundable(Ref) string }); ok {
		return u.CollectionUnrefundable(ref)
	}
	return ""
}

// PaidReference reads what an authenticated callback (h, body) says of a
// paid collection: the aggregator's provisional id of it and its final
// one (M-Pesa's CheckoutRequestID and receipt number, which only a push's
// callback carries and a reversal names the payment by, from a callback to
// the address with the push's token: Daraja signs nothing). The payment is
// still confirmed by a status read; the final id replaces the provisional
// one once it is. Empty for a callback that proves nothing, as every other
// connector's.
func PaidReference(c Connector, h http.Header, body []byte) (provisional, final string) {
	if o, ok := c.(interface {
		paidReference(http.Header, []byte) (string, string)
	}); ok {
		return o.paidReference(h, body)
	}
	if p, ok := c.(interface {
		PaidReference(http.Header, []byte) (string, string)
	}); ok {
		return p.PaidReference(h, body)
	}
	return "", ""
}

// refundsOf marks a callback reference that names a refunded collection
// rather than a refund (RefundsOf).
const refundsOf = "refunds-of:"

// RefundsOf is what CallbackReference answers for a refund callback that
// names only the refunded collection, by our reference (Paystack's refund.*
// webhooks carry the transaction's reference, not the refund's id, nor any
// id of ours): every pending refund of that collection is then checked.
func RefundsOf(collectionReference string) string { return refundsOf + collectionReference }

// RefundedCollection reads a RefundsOf reference: the collection's
// reference, and false for any other callback reference.
func RefundedCollection(ref string) (string, bool) {
	c, ok := strings.CutPrefix(ref, refundsOf)
	return c, ok && c != ""
}

// Refunds returns c's Refunder, through Observe's wrapper too; false when
// c's aggregator cannot refund through its API (or Cauri does not speak
// that part of it yet).
func Refunds(c Connector) (Refunder, bool) {
	if o, ok := c.(interface{ refunder() (Refunder, bool) }); ok {
		return o.refunder()
	}
	r, ok := c.(Refunder)
	return r, ok
}

// Error is a failure to talk with an aggregator.
type Error struct {
	// Transient errors (timeouts, 5xx, an unreadable answer) may have
	// started the operation or not: check its status before trying
	// another gateway.
	Transient bool
	// NotSent: the request never left (the connection could not be made),
	// so nothing started.
	NotSent bool
	// Answered: the aggregator answered (a 5xx, an unreadable body), as
	// opposed to a timeout where no answer came at all.
	Answered bool
	// Credentials: the aggregator refused the gateway's credentials (its
	// token request, or a token refused twice): a lasting error the
	// merchant fixes on the gateway.
	Credentials bool
	Message     string
}

func (e *Error) Error() string { return "gateway: " + e.Message }

// IsTransient reports whether err is an Error another attempt could overcome.
func IsTransient(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Transient
}

// ErrorOf returns err's *Error, or nil.
func ErrorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// IdempotentCollector is a connector whose initiation may be sent again
// with the same reference without a second payment (pawaPay's depositId).
type IdempotentCollector interface {
	IdempotentCollect() bool
}
