package cinetpay

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

// The checkout API v2's amount rules (docs.cinetpay.com,
// checkout/initialisation): an integer amount in major units, a multiple
// of 5, in XOF, XAF, CDF, GNF or USD; at least 100 FCFA (XOF and XAF).
var checkoutCurrencies = map[cauri.Currency]bool{"XOF": true, "XAF": true, "CDF": true, "GNF": true, "USD": true}

// minimumFCFA is CinetPay's smallest amount in XOF and XAF; no minimum is
// documented for the other currencies.
const minimumFCFA = 100

// checkAmount returns amount (minor units of cur) as CinetPay's integer in
// major units, or a NotSent error saying why CinetPay cannot take it: the
// request is never sent, so the service may try another gateway.
func checkAmount(amount int64, cur cauri.Currency) (string, error) {
	refuse := func(format string, args ...any) (string, error) {
		return "", &gateway.Error{NotSent: true, Message: "CinetPay cannot take " + cauri.FormatAmount(amount, cur) + " " + string(cur) + ": " +
			fmt.Sprintf(format, args...)}
	}
	if !checkoutCurrencies[cur] {
		return refuse("it takes XOF, XAF, CDF, GNF and USD only")
	}
	unit := int64(1)
	for range cur.Exponent() {
		unit *= 10
	}
	if amount <= 0 || amount%unit != 0 {
		return refuse("the amount must be a whole number of %s", cur)
	}
	major := amount / unit
	if major%5 != 0 {
		return refuse("the amount must be a multiple of 5")
	}
	if (cur == "XOF" || cur == "XAF") && major < minimumFCFA {
		return refuse("the amount must be at least %d %s", minimumFCFA, cur)
	}
	return strconv.FormatInt(major, 10), nil
}

// The codes of CinetPay's table (docs.cinetpay.com, checkout/tableau),
// sorted by what they say of a payment when a check answers them.
var (
	// successCode: SUCCES, the payment is made.
	successCode = "00"
	// waitingCodes: the payment may still be made (CREATED: the link
	// exists; WAITING_CUSTOMER_TO_VALIDATE, WAITING_CUSTOMER_PAYMENT,
	// WAITING_CUSTOMER_OTP_CODE, WAITING_CUSTOMER_PAYMENT_AT_OPERATOR_SIDE).
	waitingCodes = map[string]bool{"201": true, "623": true, "662": true, "663": true, "664": true}
	// refusedCodes: the payment failed and will not be made: PAYMENT_FAILED,
	// INSUFFICIENT_BALANCE, SERVICE_UNAVAILABLE, OTP_CODE_ERROR,
	// INCORRECT_SETTINGS (Orange Money's refusal: wrong code, balance, or a
	// repeat), ERROR_DOUBLE_PAYEMNT, ERROR_OMPAY/MOMOPAY/FLOOZPAY_UNAVAILABLE,
	// ABONNEMENT_OR_TRANSACTIONS_EXPIRED, TRANSACTION_CANCEL, the phone
	// number and amount refusals (635-637, 641, 642), OPERATOR_UNAVAILABLE
	// and the daily, weekly and monthly limits (807-812).
	refusedCodes = map[string]bool{"600": true, "602": true, "603": true, "604": true, "606": true, "620": true, "621": true,
		"622": true, "625": true, "626": true, "627": true, "635": true, "636": true, "637": true, "641": true, "642": true,
		"804": true, "807": true, "808": true, "809": true, "810": true, "811": true, "812": true}
	// lastingCodes: the gateway's account, not the payment: AUTH_NOT_FOUND
	// (apikey), ERROR_SITE_ID_NOTVALID; fixed by the merchant, not retried.
	lastingCodes = map[string]bool{"609": true, "613": true}
	// requestCodes: the request itself was refused (MINIMUM_REQUIRED_FIELDS,
	// ERROR_PAYMETHOD_NOTFOUND, ERROR_AMOUNT_TYPE, ERROR_CURRENCY_NOTVALID,
	// the form errors 614-619, UNKNOWN_ERROR, ERROR_AMOUNT_FORMAT). At
	// initiation nothing was created: the payment failed. In a check they
	// say nothing of the payment.
	requestCodes = map[string]bool{"608": true, "610": true, "611": true, "612": true, "614": true, "615": true, "616": true,
		"617": true, "618": true, "619": true, "624": true, "628": true}
)

// The payment's own status in a check's data (checkout/verification and
// checkout/notification: WAITING_FOR_CUSTOMER until the customer
// approves a push, ACCEPTED, REFUSED).
var waitingStatuses = map[string]bool{"WAITING_FOR_CUSTOMER": true, "CREATED": true, "PENDING": true, "INITIATED": true}

// checkOutcome reads a check's answer. CinetPay documents no answer for a
// transaction_id it never received: an HTTP 404 or a message saying
// NOT_FOUND is taken as such.
func checkOutcome(httpCode int, a answer, d checkData) (gateway.Status, error) {
	status := strings.ToUpper(strings.TrimSpace(d.Status))
	switch {
	case a.Code == successCode && (status == "" || status == "ACCEPTED"):
		return gateway.Status{Outcome: gateway.Succeeded, ProviderRef: d.OperatorID}, nil
	case a.Code == successCode:
		return gateway.Status{}, &gateway.Error{Message: "CinetPay answered 00 SUCCES for a payment whose status is " + status}
	case status == "ACCEPTED":
		return gateway.Status{}, &gateway.Error{Message: "CinetPay answered ACCEPTED with the code " + words(a)}
	case status == "REFUSED":
		return gateway.Status{Outcome: gateway.Failed, Reason: words(a)}, nil
	case waitingStatuses[status] || waitingCodes[a.Code]:
		return gateway.Status{Outcome: gateway.Pending}, nil
	case refusedCodes[a.Code]:
		return gateway.Status{Outcome: gateway.Failed, Reason: words(a)}, nil
	case lastingCodes[a.Code]:
		return gateway.Status{}, &gateway.Error{Message: "CinetPay refused the gateway's account (" + words(a) + ")"}
	case httpCode == http.StatusNotFound || strings.Contains(strings.ToUpper(a.Message), "NOT_FOUND"):
		return gateway.Status{Outcome: gateway.NotFound}, nil
	case requestCodes[a.Code]:
		return gateway.Status{}, &gateway.Error{Transient: true, Answered: true, Message: "CinetPay refused the check (" + words(a) + ")"}
	}
	return gateway.Status{}, &gateway.Error{Message: "CinetPay answered an unknown code " + words(a)}
}
