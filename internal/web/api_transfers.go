package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/ratelimit"
	"github.com/cauri-pay/cauri/internal/transfer"
)

// limitTransfers is SPEC section 8's 30 transfers a minute per workspace.
var limitTransfers = ratelimit.PerMinute("transfers", 30)

type createTransferRequest struct {
	Amount         json.RawMessage `json:"amount"`
	Country        string          `json:"country"`
	Operator       string          `json:"operator"`
	Phone          string          `json:"phone"`
	Currency       string          `json:"currency"`
	RecipientName  string          `json:"recipient_name"`
	Description    string          `json:"description"`
	IdempotencyKey string          `json:"idempotency_key"`
}

// transferCaller authenticates a transfer route: a secret key (401
// unauthorized), then, when creating, the workspace's state
// (transferts_inactifs, connect_non_disponible, identite_non_verifiee),
// then the key's mode (test_mode; on every transfer route).
func (s *Server) transferCaller(r *http.Request, creating bool) (*caller, error) {
	c, err := s.authenticate(r, false)
	if err != nil {
		if cauri.ErrorCode(err) == cauri.EUnauthorized {
			return nil, cauri.Reasonf(cauri.EUnauthorized, "unauthorized", "%s", cauri.ErrorMessage(err))
		}
		return nil, err
	}
	forbidden := func(reason, msg string) (*caller, error) {
		return nil, cauri.Reasonf(cauri.EForbidden, reason, "%s", msg)
	}
	switch {
	case creating && c.ws.TransfersClosed:
		return forbidden("transferts_inactifs", "Transfers are closed on this workspace by the service administration")
	case creating && c.ws.Connect:
		return forbidden("connect_non_disponible", "A Connect workspace has no access to transfers")
	case creating && !c.ws.Verified:
		return forbidden("identite_non_verifiee", "This workspace's identity is not verified yet: it is in test mode, and test mode sends no money")
	case !c.key.Live:
		return forbidden("test_mode", "Transfers are refused with a test key; use the production secret key")
	}
	return c, nil
}

// createTransfer is POST /v1/transfers. The order of the checks is in
// docs/transfers.md.
func (s *Server) createTransfer(w http.ResponseWriter, r *http.Request) error {
	c, err := s.transferCaller(r, true)
	if err != nil {
		return err
	}
	var req createTransferRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return cauri.Reasonf(cauri.ErrorCode(err), "invalid_body", "%s", cauri.ErrorMessage(err))
	}
	key := r.Header.Get("Idempotency-Key")
	switch {
	case key != "" && req.IdempotencyKey != "" && key != req.IdempotencyKey:
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "The Idempotency-Key header and the body's idempotency_key differ")
	case key == "":
		key = req.IdempotencyKey
	}
	if err := cauri.CheckIdempotencyKey(key); err != nil {
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "%s", cauri.ErrorMessage(err))
	}
	out, replayed, err := s.transferOne(r, c, req, key, func() error {
		return s.limit(w, r, limitTransfers, "per workspace", c.ws.ID, "rate_limited")
	})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		status = http.StatusOK
	}
	writeJSON(w, status, out.Object())
	return nil
}

// transferOne validates a transfer request, answers a replay of its key
// (whatever the limits), or takes a turn from limit and creates the
// transfer and makes its payout.
func (s *Server) transferOne(r *http.Request, c *caller, req createTransferRequest, key string, limit func() error) (*cauri.Transfer, bool, error) {
	tr, err := s.validateTransfer(r, c, req)
	if err != nil {
		return nil, false, err
	}
	if prev, err := s.Transfers.Replay(r.Context(), c.ws, key, tr); err != nil || prev != nil {
		return prev, true, err
	}
	if err := limit(); err != nil {
		return nil, false, err
	}
	return s.Transfers.Create(r.Context(), c.ws, tr, key)
}

func (s *Server) validateTransfer(r *http.Request, c *caller, req createTransferRequest) (*cauri.Transfer, error) {
	amount, err := jsonNumber("amount", req.Amount)
	if err != nil {
		return nil, cauri.Reasonf(cauri.EInvalid, "montant_invalide", "%s", cauri.ErrorMessage(err))
	}
	return s.Transfers.Validate(r.Context(), c.ws, transfer.Params{
		Amount: amount, Country: req.Country, Operator: req.Operator, Phone: req.Phone, Currency: req.Currency,
		RecipientName: req.RecipientName, Description: req.Description,
	})
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
func (s *Server) listTransfers(w http.ResponseWriter, r *http.Request) error {
	c, err := s.transferCaller(r, false)
	if err != nil {
		return err
	}
	q := r.URL.Query()
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
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	status := cauri.TransferStatus(q.Get("status"))
	switch status {
	case "", cauri.TransferProcessing, cauri.TransferSucceeded, cauri.TransferFailed:
	default:
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "status must be processing, succeeded or failed")
	}
	limit := 50
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > 200 {
			return cauri.Reasonf(cauri.EInvalid, "invalid_body", "limit must be a whole number from 1 to 200")
		}
	}
	list, err := s.Store.Transfers(r.Context(), c.ws.ID, true, status, limit)
	if err != nil {
		return err
	}
	out := transferList{Object: "list", Data: make([]cauri.TransferObject, len(list)), Count: len(list)}
	for i, t := range list {
		out.Data[i] = t.Object()
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getTransfer is GET /v1/transfers/{id}: 404 transfert_introuvable for a
// transfer that does not exist or belongs to another workspace.
func (s *Server) getTransfer(w http.ResponseWriter, r *http.Request) error {
	c, err := s.transferCaller(r, false)
	if err != nil {
		return err
	}
	tr, err := s.Store.Transfer(r.Context(), c.ws.ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tr.Object())
	return nil
}

// MaxBatch is how many transfers one batch may hold.
const MaxBatch = 500

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
// docs/transfers.md): up to MaxBatch transfers, each validated, limited by
// the daily cap and idempotent on its own, answered item by item. The
// batch takes one turn of the per-minute limit.
func (s *Server) createTransferBatch(w http.ResponseWriter, r *http.Request) error {
	c, err := s.transferCaller(r, true)
	if err != nil {
		return err
	}
	var req batchRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return cauri.Reasonf(cauri.ErrorCode(err), "invalid_body", "%s", cauri.ErrorMessage(err))
	}
	if len(req.Transfers) == 0 || len(req.Transfers) > MaxBatch {
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers must hold 1 to %d transfers", MaxBatch)
	}
	batchKey := r.Header.Get("Idempotency-Key")
	if err := cauri.CheckIdempotencyKey(batchKey); err != nil || len(batchKey) > cauri.MaxIdempotencyKeyLen-4 {
		return cauri.Reasonf(cauri.EInvalid, "invalid_body", "Idempotency-Key must be printable ASCII without spaces, at most %d characters for a batch", cauri.MaxIdempotencyKeyLen-4)
	}
	if err := s.limit(w, r, limitTransfers, "per workspace", c.ws.ID, "rate_limited"); err != nil {
		return err
	}
	out := batchResponse{Object: "transfer_batch", Count: len(req.Transfers), Data: make([]batchItem, len(req.Transfers))}
	var wg sync.WaitGroup
	turns := make(chan struct{}, 8) // payouts in flight at once
	for i, raw := range req.Transfers {
		wg.Add(1)
		turns <- struct{}{}
		go func() {
			defer func() { <-turns; wg.Done() }()
			out.Data[i] = s.batchOne(r, c, i, raw, batchKey)
		}()
	}
	wg.Wait()
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
	writeJSON(w, http.StatusOK, out)
	return nil
}

// batchOne is one item of a batch. Its key is its own idempotency_key or,
// without one, the batch's Idempotency-Key with ":<index>".
func (s *Server) batchOne(r *http.Request, c *caller, i int, raw json.RawMessage, batchKey string) batchItem {
	it := batchItem{Index: i}
	fail := func(err error) batchItem {
		if cauri.ErrorCode(err) == cauri.EInternal && cauri.ErrorReason(err) == "" {
			s.Logger.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path, "item", i)
		}
		msg, code := cauri.ErrorMessage(err), cauri.ErrorReason(err)
		if code == "" {
			code = "internal"
		}
		it.Status, it.Error, it.Code = statusOf[cauri.ErrorCode(err)], &msg, &code
		return it
	}
	var req createTransferRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fail(cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers[%d]: %s", i, cauri.ErrorMessage(decodeError(err))))
	}
	if err := exactFieldNames(raw, &req); err != nil {
		return fail(cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers[%d]: %s", i, cauri.ErrorMessage(err)))
	}
	key := req.IdempotencyKey
	if key == "" && batchKey != "" {
		key = batchKey + ":" + strconv.Itoa(i)
	}
	if err := cauri.CheckIdempotencyKey(key); err != nil {
		return fail(cauri.Reasonf(cauri.EInvalid, "invalid_body", "transfers[%d]: %s", i, cauri.ErrorMessage(err)))
	}
	tr, replayed, err := s.transferOne(r, c, req, key, func() error { return nil })
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
