package pay

import (
	"net/http"
	"net/url"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type initiateRequest struct {
	TransactionID string         `json:"transactionId"`
	GatewayID     string         `json:"gatewayId"`
	Code          string         `json:"code"`
	Phone         string         `json:"phone"`
	AuthCode      string         `json:"authCode"` // the operator's code, for methods that ask one first
	Holder        *holderRequest `json:"holder"`   // the card holder, for cards that need one
}

type holderRequest struct {
	Name    string `json:"name"`
	Email   string `json:"email"`
	Address string `json:"address"`
	City    string `json:"city"`
	State   string `json:"state"`
	ZipCode string `json:"zipCode"`
}

func (h *holderRequest) holder() checkout.Holder {
	if h == nil {
		return checkout.Holder{}
	}
	return checkout.Holder{Name: h.Name, Email: h.Email,
		Billing: gateway.Billing{Address: h.Address, City: h.City, State: h.State, ZipCode: h.ZipCode}}
}

// formHolder is the card holder of a page's form.
func formHolder(f url.Values) checkout.Holder {
	return (&holderRequest{Name: f.Get("holder_name"), Email: f.Get("holder_email"), Address: f.Get("address"),
		City: f.Get("city"), State: f.Get("state"), ZipCode: f.Get("zip")}).holder()
}

type payResponse struct {
	Success     bool                `json:"success"`
	Status      cauri.SessionStatus `json:"status"`
	Paid        bool                `json:"paid"`
	Message     string              `json:"message"`
	RedirectURL string              `json:"redirectUrl,omitempty"` // the aggregator's page, where the customer goes on
	// NextAction is what the customer does while the payment is pending.
	NextAction *cauri.NextAction `json:"nextAction,omitempty"`
}

// pendingResponse is the answer about a session whose payment a may be
// waiting for the customer (a nil a: none is).
func pendingResponse(sess *cauri.Session, a *cauri.PaymentAttempt, message string) payResponse {
	res := payResponse{Success: true, Status: sess.Status, Paid: sess.Paid(), Message: message}
	if a == nil || a.Status != cauri.AttemptPending || sess.Status != cauri.SessionPending {
		return res
	}
	next := a.NextAction()
	res.NextAction = &next
	switch next.Type {
	case cauri.ActionRedirect:
		res.RedirectURL, res.Message = next.URL, "Go on paying on the payment page"
	case cauri.ActionEnterCode:
		res.Message = "Enter the code you received"
	}
	return res
}

// initiate is POST /checkout/initiate: the hosted page starts paying a live
// session with the method and phone number the customer chose. No key: the
// session id suffices, as on the page.
func (s *Pages) initiate(w http.ResponseWriter, r *http.Request) error {
	var req initiateRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	for field, v := range map[string]string{"transactionId": req.TransactionID, "gatewayId": req.GatewayID, "code": req.Code} {
		if v == "" {
			return cauri.Errorf(cauri.EInvalid, "%s is required", field)
		}
	}
	a, err := s.Checkout.Initiate(r.Context(), req.TransactionID, checkout.Payment{GatewayID: req.GatewayID, Code: req.Code,
		Phone: req.Phone, AuthCode: req.AuthCode, Holder: req.Holder.holder()})
	if cauri.ErrorCode(err) == cauri.EBadGateway {
		// The aggregator refused the payment (or could not be reached): the
		// attempt failed, and the page, shown again ("again"), says why in
		// the customer's words and language with the same method and
		// number; the message is the service's, for scripts.
		httpx.WriteJSON(w, http.StatusBadGateway, map[string]any{"success": false, "message": cauri.ErrorMessage(err), "again": true})
		return nil
	}
	if err != nil {
		return err
	}
	sess, _, err := s.Checkout.Session(r.Context(), req.TransactionID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, pendingResponse(sess, a, "Confirm the payment on your phone"))
	return nil
}

type codeRequest struct {
	TransactionID string `json:"transactionId"`
	Code          string `json:"code"`
}

// submitCode is POST /checkout/code: the code the aggregator sent the
// customer (a voucher, a one-time code), for a payment that waits for it.
// It counts against the initiation's limit, so codes cannot be guessed
// faster than payments are started.
func (s *Pages) submitCode(w http.ResponseWriter, r *http.Request) error {
	var req codeRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.TransactionID == "" {
		return cauri.Errorf(cauri.EInvalid, "transactionId is required")
	}
	sess, a, err := s.Checkout.SubmitCode(r.Context(), req.TransactionID, req.Code)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, pendingResponse(sess, a, verifyMessage(sess)))
	return nil
}

func verifyMessage(sess *cauri.Session) string {
	switch sess.Status {
	case cauri.SessionSuccess:
		return "Payment succeeded"
	case cauri.SessionFailed:
		return "Payment failed"
	}
	return "Waiting for the confirmation on the phone"
}

type verifyRequest struct {
	TransactionID string `json:"transactionId"`
}

// verify is POST /checkout/verify: the page asks, while the customer
// confirms, where the payment stands; the aggregator is asked at most once
// every 8 seconds.
func (s *Pages) verify(w http.ResponseWriter, r *http.Request) error {
	var req verifyRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.TransactionID == "" {
		return cauri.Errorf(cauri.EInvalid, "transactionId is required")
	}
	sess, err := s.Checkout.Refresh(r.Context(), req.TransactionID)
	if err != nil {
		return err
	}
	a, err := s.Checkout.Waiting(r.Context(), sess)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, pendingResponse(sess, a, verifyMessage(sess)))
	return nil
}
