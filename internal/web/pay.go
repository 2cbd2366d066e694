package web

import (
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
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
func pendingResponse(sess *cauri.Session, a *cauri.Attempt, message string) payResponse {
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
func (s *Server) initiate(w http.ResponseWriter, r *http.Request) error {
	if err := s.limitByIP(w, r, limitInitiate); err != nil {
		return err
	}
	var req initiateRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	for field, v := range map[string]string{"transactionId": req.TransactionID, "gatewayId": req.GatewayID, "code": req.Code} {
		if v == "" {
			return cauri.Errorf(cauri.EInvalid, "%s is required", field)
		}
	}
	a, err := s.Checkout.Initiate(r.Context(), req.TransactionID, checkout.Payment{GatewayID: req.GatewayID, Code: req.Code,
		Phone: req.Phone, AuthCode: req.AuthCode, Holder: req.Holder.holder()})
	if err != nil {
		return err
	}
	sess, _, err := s.Checkout.Session(r.Context(), req.TransactionID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pendingResponse(sess, a, "Confirm the payment on your phone"))
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
func (s *Server) submitCode(w http.ResponseWriter, r *http.Request) error {
	if err := s.limitByIP(w, r, limitInitiate); err != nil {
		return err
	}
	var req codeRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.TransactionID == "" {
		return cauri.Errorf(cauri.EInvalid, "transactionId is required")
	}
	sess, a, err := s.Checkout.SubmitCode(r.Context(), req.TransactionID, req.Code)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pendingResponse(sess, a, verifyMessage(sess)))
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
func (s *Server) verify(w http.ResponseWriter, r *http.Request) error {
	if err := s.limitByIP(w, r, limitVerify); err != nil {
		return err
	}
	var req verifyRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.TransactionID == "" {
		return cauri.Errorf(cauri.EInvalid, "transactionId is required")
	}
	sess, err := s.Checkout.Verify(r.Context(), req.TransactionID)
	if err != nil {
		return err
	}
	a, err := s.Checkout.Waiting(r.Context(), sess)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pendingResponse(sess, a, verifyMessage(sess)))
	return nil
}

// gatewayCallbackPing is GET /callbacks/{gatewayId}: aggregators that check
// the address before using it (CinetPay) get 200 for a known gateway.
func (s *Server) gatewayCallbackPing(w http.ResponseWriter, r *http.Request) error {
	if err := s.Gateways.Known(r.Context(), r.PathValue("gatewayId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"received": true})
	return nil
}

// gatewayCallback is POST /callbacks/{gatewayId}: where a gateway's
// aggregator announces a payment's or a transfer's outcome. The outcome is confirmed with
// the aggregator before anything changes; any known gateway gets 200 so
// that the aggregator stops retrying.
func (s *Server) gatewayCallback(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return cauri.Errorf(cauri.ETooLarge, "Callback body is larger than %d bytes", maxBody)
	}
	gatewayID := r.PathValue("gatewayId")
	// The callback address's query (the reference some aggregators, Orange
	// Money, can only give back there) reaches the connector as a header
	// the caller cannot set.
	h := r.Header.Clone()
	h.Del(gateway.CallbackQueryHeader)
	if r.URL.RawQuery != "" {
		h.Set(gateway.CallbackQueryHeader, r.URL.RawQuery)
	}
	ref, err := s.Checkout.CallbackReference(r.Context(), gatewayID, h, body)
	if err == nil {
		// A payment's or a transfer's: they share the gateway's address.
		if err = s.Checkout.Callback(r.Context(), gatewayID, ref); cauri.ErrorCode(err) == cauri.ENotFound {
			err = s.Transfers.Callback(r.Context(), gatewayID, ref)
		}
	}
	if err != nil {
		code := cauri.ErrorCode(err)
		if errors.Is(err, checkout.ErrUnknownGateway) {
			return err
		}
		if code == cauri.EInternal {
			return err
		}
		s.Logger.WarnContext(r.Context(), "gateway callback ignored", "gateway", r.PathValue("gatewayId"), "reason", cauri.ErrorMessage(err))
	}
	writeJSON(w, http.StatusOK, map[string]bool{"received": true})
	return nil
}
