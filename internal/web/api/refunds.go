package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/refund"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type createRefundRequest struct {
	TransactionID string          `json:"transaction_id"`
	Amount        json.RawMessage `json:"amount"`
	Method        string          `json:"method"`
	Reason        string          `json:"reason"`
}

// refundCodes gives every error of a refund route the body's "code", in
// the transfers' style, when it has none yet.
func refundCodes(h httpx.Handler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error { return withCode(h(w, r), refundReasons) }
}

// refundReasons is the code of a refund route's error that has none of its
// own and is not one of the transfers' (transferReasons), by its kind and
// the kind of object it is about.
var refundReasons = map[[2]string]string{
	{cauri.ENotFound, "refund"}: "refund_not_found", {cauri.ENotFound, "transaction"}: "transaction_not_found",
	{cauri.ENotFound, ""}: "refund_not_found",
}

// createRefund is POST /v1/refunds: 201 with the refund (succeeded at
// once for a test payment), or 200 with the same refund and
// Idempotent-Replayed: true when an Idempotency-Key repeats. The order of
// the checks is in docs/refunds.md.
func (s *API) createRefund(w http.ResponseWriter, r *http.Request, c *caller) error {
	// 30 requests a minute per workspace, replays included: a refund
	// request is rare, and a loop of them is a client's bug.
	if err := s.Limit(w, r, httpx.LimitRefunds, "per workspace", c.ws.ID, "rate_limited"); err != nil {
		return err
	}
	var req createRefundRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil {
		return cauri.Reasonf(cauri.EInvalid, "invalid_amount", "%s", cauri.ErrorMessage(err))
	}
	out, replayed, err := s.Refunds.Create(r.Context(), c.ws, c.key.Live,
		refund.Params{TransactionID: req.TransactionID, Amount: amount, Method: req.Method, Reason: req.Reason},
		r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		status = http.StatusOK
	}
	httpx.WriteJSON(w, status, out.Object())
	return nil
}

type refundList struct {
	Object string               `json:"object"`
	Data   []cauri.RefundObject `json:"data"`
	Count  int                  `json:"count"`
}

// listRefunds is GET /v1/refunds: the key's mode only, newest first;
// filters transaction_id and status, limit 1 to 200 (50), starting_after
// a refund id for the next page.
func (s *API) listRefunds(w http.ResponseWriter, r *http.Request, c *caller) error {
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	f := refund.Filter{TransactionID: q.Get("transaction_id"), Status: q.Get("status"), StartingAfter: q.Get("starting_after"), Limit: 50}
	if l := q.Get("limit"); l != "" {
		if f.Limit, err = strconv.Atoi(l); err != nil {
			f.Limit = -1 // refused as out of range
		}
	}
	list, err := s.Refunds.List(r.Context(), c.ws, c.key.Live, f)
	if err != nil {
		return err
	}
	out := refundList{Object: "list", Data: make([]cauri.RefundObject, len(list)), Count: len(list)}
	for i, rf := range list {
		out.Data[i] = rf.Object()
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getRefund is GET /v1/refunds/{id}: 404 refund_not_found for a refund
// that does not exist, is another workspace's or of the other mode.
func (s *API) getRefund(w http.ResponseWriter, r *http.Request, c *caller) error {
	rf, err := s.Refunds.Get(r.Context(), c.ws, c.key.Live, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, rf.Object())
	return nil
}
