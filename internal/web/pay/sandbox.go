package pay

import (
	"net/http"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type sandboxRequest struct {
	TransactionID string `json:"transactionId"`
	Issue         string `json:"issue"`
}

type sandboxResponse struct {
	Success bool   `json:"success"`
	Sandbox bool   `json:"sandbox"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// sandboxSettle is POST /checkout/sandbox: it settles a test session as
// succeeded ("succes") or failed ("echec"). No key: the unguessable session
// id suffices.
func (s *Pages) sandboxSettle(w http.ResponseWriter, r *http.Request) error {
	var req sandboxRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	sess, err := s.settle(r, req.TransactionID, req.Issue)
	if err != nil {
		return err
	}
	msg := "Test payment failed"
	if sess.Paid() {
		msg = "Test payment succeeded"
	}
	httpx.WriteJSON(w, http.StatusOK, sandboxResponse{Success: true, Sandbox: true, Status: string(sess.Status), Message: msg})
	return nil
}

// settle checks a sandbox request's fields and settles the session.
func (s *Pages) settle(r *http.Request, id, issue string) (*cauri.Session, error) {
	if id == "" {
		return nil, cauri.Errorf(cauri.EInvalid, "transactionId is required")
	}
	if issue != checkout.IssueSuccess && issue != checkout.IssueFailure {
		return nil, cauri.Errorf(cauri.EInvalid, "issue must be %q or %q", checkout.IssueSuccess, checkout.IssueFailure)
	}
	return s.Checkout.SettleSandbox(r.Context(), id, issue)
}
