package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/transfer"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// httpx.LimitTransfers is SPEC section 8's 30 transfers a minute per workspace.
type createTransferRequest struct {
	Amount         json.RawMessage `json:"amount"`
	Country        string          `json:"country"`
	Operator       string          `json:"operator"`
	Phone          string          `json:"phone"`
	Currency       string          `json:"currency"`
	RecipientName  string          `json:"recipient_name"`
	Description    string          `json:"description"`
	IdempotencyKey string          `json:"idempotency_key"`
	// RecipientNameCheck refuses the transfer (nom_different) when the
	// aggregator's name for the account clearly differs from RecipientName.
	RecipientNameCheck bool `json:"recipient_name_check"`
}

// transferCodes gives every error of a transfer route the body's "code"
// (SPEC section 7) when it has none yet.
func transferCodes(h httpx.Handler) httpx.Handler {
	return func(w http.ResponseWriter, r *http.Request) error { return withTransferCode(h(w, r)) }
}

func withTransferCode(err error) error { return withCode(err, transferReasons) }

// withCode gives err the body's "code" when it has none yet: the route's
// own for its kind and the kind of object it is about (own), else the
// transfers' for its kind alone.
func withCode(err error, own map[[2]string]string) error {
	if err == nil || cauri.ErrorReason(err) != "" {
		return err
	}
	code := cauri.ErrorCode(err)
	reason, ok := own[[2]string{code, cauri.ErrorEntity(err)}]
	if !ok {
		reason = transferReasons[[2]string{code, ""}]
	}
	return &cauri.Error{Code: code, Reason: reason, Message: cauri.ErrorMessage(err), Entity: cauri.ErrorEntity(err), Cause: err}
}

// transferReasons is the code (SPEC section 7) of a transfer route's error
// that has none of its own, by its kind and, where it matters, the kind of
// object it is about.
var transferReasons = map[[2]string]string{
	{cauri.EUnauthorized, ""}: "unauthorized", {cauri.EInvalid, ""}: "invalid_body", {cauri.ETooLarge, ""}: "invalid_body",
	{cauri.EUnsupported, ""}: "invalid_body", {cauri.EUnprocessable, ""}: "idempotency_key_reused", {cauri.ERateLimited, ""}: "rate_limited",
	{cauri.EInternal, ""}: "internal", {cauri.ENotFound, "transfer"}: "transfert_introuvable",
}

// createTransfer is POST /v1/transfers. The order of the checks is in
// docs/transfers.md; a replay of an Idempotency-Key is answered before any
// of them but the key's, whatever has changed since (transfers closed, a
// gateway disabled): the SPEC's "no second object, the existing one".
func (s *API) createTransfer(w http.ResponseWriter, r *http.Request, c *caller) error {
	var req createTransferRequest
	decodeErr := httpx.DecodeJSON(w, r, &req)
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		key = req.IdempotencyKey
	}
	if err := transfer.Allowed(c.ws, c.key.Live, true); err != nil {
		// Refused now, a replay is still answered (Send replays first too).
		if decodeErr == nil && c.key.Live && cauri.CheckIdempotencyKey(key) == nil &&
			(r.Header.Get("Idempotency-Key") == "" || req.IdempotencyKey == "" || key == req.IdempotencyKey) {
			prev, rerr := s.Transfers.ReplayRequest(r.Context(), c.ws, key, s.transferParams(req))
			if rerr != nil {
				return rerr
			}
			if prev != nil {
				w.Header().Set("Idempotent-Replayed", "true")
				httpx.WriteJSON(w, http.StatusOK, prev.Object())
				return nil
			}
		}
		return err
	}
	if decodeErr != nil {
		return decodeErr
	}
	if h := r.Header.Get("Idempotency-Key"); h != "" && req.IdempotencyKey != "" && h != req.IdempotencyKey {
		return cauri.Errorf(cauri.EInvalid, "The Idempotency-Key header and the body's idempotency_key differ")
	}
	if err := cauri.CheckIdempotencyKey(key); err != nil {
		return err
	}
	out, replayed, err := s.Transfers.Send(r.Context(), c.ws, s.transferParams(req), key, func() error {
		return s.Limit(w, r, httpx.LimitTransfers, "per workspace", c.ws.ID, "rate_limited")
	})
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

// transferParams reads a request's fields; the amount stays the JSON
// number's text (a non-number is refused by validation as montant_invalide).
func (s *API) transferParams(req createTransferRequest) transfer.Params {
	amount, err := httpx.JSONNumber("amount", req.Amount)
	if err != nil {
		amount = "not a number"
	}
	return transfer.Params{Amount: amount, Country: req.Country, Operator: req.Operator, Phone: req.Phone, Currency: req.Currency,
		RecipientName: req.RecipientName, Description: req.Description, CheckRecipientName: req.RecipientNameCheck}
}

type recipientRequest struct {
	Country  string `json:"country"`
	Operator string `json:"operator"`
	Phone    string `json:"phone"`
}

// transferRecipient is POST /v1/transfers/recipient: the name of a Mobile
// Money account's holder before a payout, where an aggregator of the
// workspace can tell it (docs/transfers.md). The transfer routes' checks
// first (the key, the workspace, its mode), then the body, the fields as a
// transfer's, LimitRecipients, the lookup.
func (s *API) transferRecipient(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := transfer.Allowed(c.ws, c.key.Live, true); err != nil {
		return err
	}
	var req recipientRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	out, err := s.Transfers.RecipientName(r.Context(), c.ws, c.key.Live, transfer.RecipientParams{Country: req.Country, Operator: req.Operator, Phone: req.Phone},
		func() error { return s.Limit(w, r, httpx.LimitRecipients, "per workspace", c.ws.ID, "rate_limited") })
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

type transferList struct {
	Object string                 `json:"object"`
	Data   []cauri.TransferObject `json:"data"`
	Count  int                    `json:"count"`
}

type transferOptions struct {
	Object     string                   `json:"object"`
	Countries  []transfer.CountryOption `json:"countries"`
	Currencies []cauri.Currency         `json:"currencies"`
}

// listTransfers is GET /v1/transfers: the latest transfers, newest first,
// or, with options=1, where the workspace can send money.
func (s *API) listTransfers(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := transfer.Allowed(c.ws, c.key.Live, false); err != nil {
		return err
	}
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	if q.Get("options") == "1" {
		countries, err := s.Transfers.Options(r.Context(), c.ws)
		if err != nil {
			return err
		}
		out := transferOptions{Object: "transfer_options", Countries: countries, Currencies: []cauri.Currency{}}
		seen := map[cauri.Currency]bool{}
		for _, o := range countries {
			if !seen[o.Currency] {
				seen[o.Currency] = true
				out.Currencies = append(out.Currencies, o.Currency)
			}
		}
		httpx.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	limit := 50
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil {
			limit = -1 // refused as out of range
		}
	}
	list, err := s.Transfers.List(r.Context(), c.ws.ID, cauri.TransferStatus(q.Get("status")), limit)
	if err != nil {
		return err
	}
	out := transferList{Object: "list", Data: make([]cauri.TransferObject, len(list)), Count: len(list)}
	for i, t := range list {
		out.Data[i] = t.Object()
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getTransfer is GET /v1/transfers/{id}: 404 transfert_introuvable for a
// transfer that does not exist or belongs to another workspace.
func (s *API) getTransfer(w http.ResponseWriter, r *http.Request, c *caller) error {
	if err := transfer.Allowed(c.ws, c.key.Live, false); err != nil {
		return err
	}
	tr, err := s.Transfers.Get(r.Context(), c.ws.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, tr.Object())
	return nil
}

// batchDeadline bounds writing a batch's answer.
const batchDeadline = 15 * time.Minute

type batchRequest struct {
	Transfers []json.RawMessage `json:"transfers"`
}

// batchItem is one transfer's answer in a batch: the status it would have
// had alone, with the transfer or the error.
type batchItem struct {
	Index    int                   `json:"index"`
	Status   int                   `json:"status"`
	Replayed bool                  `json:"replayed"`
	Transfer *cauri.TransferObject `json:"transfer"`
	Error    *string               `json:"error"`
	Code     *string               `json:"code"`
}

type batchResponse struct {
	Object   string      `json:"object"`
	Count    int         `json:"count"`
	Created  int         `json:"created"`
	Replayed int         `json:"replayed"`
	Refused  int         `json:"refused"`
	Data     []batchItem `json:"data"`
}

// createTransferBatch is POST /v1/transfers/batch, beyond the SPEC (see
// docs/transfers.md): up to transfer.MaxBatch transfers, each validated, limited by
// the daily cap and idempotent on its own, answered item by item. The
// batch takes one turn of the per-minute limit.
//
// Resending a batch must answer what its first sending did: each item's
// transfer, found by its key, is replayed before anything else is judged
// (its fields against the gateways, a name check, the workspace's state),
// as a single transfer's is. With transfers closed since (a live key), the
// items already made are replayed and the others refused with the reason;
// a batch whose every item is that refusal answers it alone.
func (s *API) createTransferBatch(w http.ResponseWriter, r *http.Request, c *caller) error {
	refused := transfer.Allowed(c.ws, c.key.Live, true)
	if refused != nil && !c.key.Live {
		return refused
	}
	var req batchRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return cauri.Reasonf(cauri.ErrorCode(err), "invalid_body", "%s", cauri.ErrorMessage(err))
	}
	if len(req.Transfers) == 0 || len(req.Transfers) > transfer.MaxBatch {
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers must hold 1 to %d transfers", transfer.MaxBatch)
	}
	// A batch takes time and its answer can be lost: resending it must never
	// pay twice, so it needs a key.
	batchKey := r.Header.Get("Idempotency-Key")
	if err := cauri.CheckIdempotencyKey(batchKey); err != nil || batchKey == "" || len(batchKey) > cauri.MaxIdempotencyKeyLen-4 {
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "A batch needs an Idempotency-Key: printable ASCII without spaces, at most %d characters", cauri.MaxIdempotencyKeyLen-4)
	}
	// Up to 500 payouts, 8 at a time, may outlast the server's write timeout.
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(batchDeadline))
	if refused == nil {
		if err := s.Limit(w, r, httpx.LimitTransfers, "per workspace", c.ws.ID, "rate_limited"); err != nil {
			return err
		}
	}
	out := batchResponse{Object: "transfer_batch", Count: len(req.Transfers), Data: make([]batchItem, len(req.Transfers))}
	skipped := transfer.Batch(len(req.Transfers), s.Draining, func(i int) {
		out.Data[i] = s.batchOne(r, c, i, req.Transfers[i], batchKey, refused)
	})
	for _, i := range skipped {
		// The server is stopping: what is in flight ends, nothing more
		// starts, and the answer says how to finish (the same batch
		// again: sent items are replayed, never paid twice).
		msg, code := fmt.Sprintf("transfers[%d] was not sent: the server is shutting down; send the batch again with the same Idempotency-Key (the transfers already sent are replayed, never paid twice)", i), "shutting_down"
		out.Data[i] = batchItem{Index: i, Status: http.StatusServiceUnavailable, Error: &msg, Code: &code}
	}
	for _, it := range out.Data {
		switch {
		case it.Replayed:
			out.Replayed++
		case it.Transfer != nil:
			out.Created++
		default:
			out.Refused++
		}
	}
	if refused != nil && allRefusedBy(out.Data, refused) {
		return refused
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// allRefusedBy reports whether every item of a batch was answered the
// workspace's refusal alone: only then does the batch answer it as a
// whole. An item replayed, or answered anything else (its first sending
// still running, a store error), keeps the item list: its answer must not
// be hidden behind a "nothing was made".
func allRefusedBy(items []batchItem, refused error) bool {
	for _, it := range items {
		if it.Replayed || it.Code == nil || *it.Code != cauri.ErrorReason(refused) {
			return false
		}
	}
	return true
}

// batchOne is one item of a batch. Its key is its own idempotency_key or,
// without one, the batch's Idempotency-Key with ":<index>". An item that is
// not a replay is refused when the batch is (refused), and one asking a
// recipient name check takes a turn of LimitRecipients, as a lookup does.
func (s *API) batchOne(r *http.Request, c *caller, i int, raw json.RawMessage, batchKey string, refused error) batchItem {
	it := batchItem{Index: i}
	fail := func(err error) batchItem {
		if cauri.ErrorCode(err) == cauri.EInternal {
			s.Logger.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path, "item", i)
		}
		err = withTransferCode(err)
		msg, code := cauri.ErrorMessage(err), cauri.ErrorReason(err)
		it.Status, it.Error, it.Code = httpx.Status(err), &msg, &code
		return it
	}
	var req createTransferRequest
	if err := httpx.DecodeObject(raw, &req); err != nil {
		return fail(cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers[%d]: %s", i, cauri.ErrorMessage(err)))
	}
	key := req.IdempotencyKey
	if key == "" && batchKey != "" {
		key = batchKey + ":" + strconv.Itoa(i)
	}
	if err := cauri.CheckIdempotencyKey(key); err != nil {
		return fail(cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers[%d]: %s", i, cauri.ErrorMessage(err)))
	}
	p := s.transferParams(req)
	var tr *cauri.Transfer
	replayed, err := true, error(nil)
	if refused != nil {
		if tr, err = s.Transfers.ReplayRequest(r.Context(), c.ws, key, p); err == nil && tr == nil {
			err = refused
		}
	} else {
		// The batch took its turn of LimitTransfers.
		tr, replayed, err = s.Transfers.Send(r.Context(), c.ws, p, key, func() error {
			if !req.RecipientNameCheck {
				return nil
			}
			_, err := s.Take(r.Context(), httpx.LimitRecipients, "per workspace (recipient name checks)", c.ws.ID, "rate_limited")
			return err
		})
	}
	if err != nil {
		return fail(err)
	}
	obj := tr.Object()
	it.Status, it.Replayed, it.Transfer = http.StatusCreated, replayed, &obj
	if replayed {
		it.Status = http.StatusOK
	}
	return it
}
