package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/checkout"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// gatewayCallbackPing is GET /callbacks/{gatewayId}: aggregators that check
// the address before using it (CinetPay) get 200 for a known gateway.
func (s *API) gatewayCallbackPing(w http.ResponseWriter, r *http.Request) error {
	if err := s.Gateways.Known(r.Context(), r.PathValue("gatewayId")); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"received": true})
	return nil
}

// gatewayCallback is POST /callbacks/{gatewayId}: where a gateway's
// aggregator announces a payment's, a transfer's or a refund's outcome. The outcome is confirmed with
// the aggregator before anything changes; any known gateway gets 200 so
// that the aggregator stops retrying.
func (s *API) gatewayCallback(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, httpx.MaxBody))
	if err != nil {
		return cauri.Errorf(cauri.ETooLarge, "Callback body is larger than %d bytes", httpx.MaxBody)
	}
	gatewayID := r.PathValue("gatewayId")
	// The callback address's query (the reference some aggregators, Orange
	// Money, can only give back there) reaches the connector as a header
	// the caller cannot set.
	h := r.Header.Clone()
	h.Del(gateway.CallbackQueryHeader)
	h.Del(gateway.CallbackPathHeader)
	if r.URL.RawQuery != "" {
		h.Set(gateway.CallbackQueryHeader, r.URL.RawQuery)
	}
	// Likewise the segment after it, for the aggregators given an address
	// per request (M-Pesa's result addresses, with their token).
	if seg := r.PathValue("segment"); seg != "" {
		h.Set(gateway.CallbackPathHeader, seg)
	}
	sig, err := s.Checkout.CallbackReference(r.Context(), gatewayID, h, body)
	if err == nil {
		// A payment's, a transfer's or a refund's: they share the
		// gateway's address.
		if err = s.Checkout.Callback(r.Context(), gatewayID, sig); cauri.ErrorCode(err) == cauri.ENotFound {
			err = s.Transfers.Callback(r.Context(), gatewayID, sig.Ref)
		}
		if cauri.ErrorCode(err) == cauri.ENotFound {
			err = s.Refunds.Callback(r.Context(), gatewayID, sig.Ref)
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
		s.Logger.WarnContext(r.Context(), "gateway callback ignored", "gateway", r.PathValue("gatewayId"), "ref", sig.Ref,
			"path", httpx.LoggedPath(r), "reason", cauri.ErrorMessage(err))
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]bool{"received": true})
	return nil
}
