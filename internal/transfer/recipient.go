package transfer

import (
	"context"
	"errors"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/movement"
)

// Why a recipient's name is unavailable (Recipient.UnavailableReason).
const (
	// NameNotSupported: no gateway of the workspace sending money to this
	// operator can tell a name (only MTN MoMo's can: docs/transfers.md).
	NameNotSupported = "not_supported"
	// NameNotFound: the aggregator knows no holder of this account, or no
	// name for it.
	NameNotFound = "not_found"
	// NameLookupFailed: the aggregator could not be asked (down, an
	// unreadable answer); asking again later may answer.
	NameLookupFailed = "lookup_failed"
)

// Recipient is what the workspace's gateways tell about a Mobile Money
// account before a payout: POST /v1/transfers/recipient's answer. An
// unavailable name is not an error: Name is nil, NameAvailable false and
// UnavailableReason says why.
type Recipient struct {
	Object            string  `json:"object"`
	Country           string  `json:"country"`
	Operator          string  `json:"operator"`
	Phone             string  `json:"phone"`
	Name              *string `json:"name"`
	NameAvailable     bool    `json:"name_available"`
	UnavailableReason *string `json:"unavailable_reason"`
	Provider          *string `json:"provider"`
}

// RecipientParams is a name lookup as the merchant sent it.
type RecipientParams struct {
	Country, Operator, Phone string
}

// RecipientName tells the name of the holder of a Mobile Money account
// before a payout, from the first of the workspace's gateways sending money
// to that operator in that country that can tell it (the gateway the
// routing would choose for the payout first). The request passes the
// transfer routes' checks (Allowed: a test key, or an unverified
// workspace, never reaches an aggregator), its fields are checked as a
// transfer's, then it takes a turn from limit (nil: none) before any
// aggregator is asked.
func (s *Service) RecipientName(ctx context.Context, ws *cauri.Workspace, keyLive bool, p RecipientParams, limit func() error) (*Recipient, error) {
	if err := Allowed(ws, keyLive, true); err != nil {
		return nil, err
	}
	d, err := s.destination(ctx, ws, p.Country, p.Operator, p.Phone, 0)
	if err != nil {
		return nil, err
	}
	if limit != nil {
		if err := limit(); err != nil {
			return nil, err
		}
	}
	out := &Recipient{Object: "recipient", Country: d.country.Code, Operator: d.operator, Phone: d.phone}
	name, provider, why := s.lookupName(ctx, d)
	if provider != "" {
		out.Provider = &provider
	}
	if why != "" {
		out.UnavailableReason = &why
		return out, nil
	}
	out.Name, out.NameAvailable = &name, true
	return out, nil
}

// lookupName asks the destination's gateways that can tell a name, the
// routed one first, and answers the name and the provider that told it,
// or why there is none (NameNotSupported, NameNotFound, NameLookupFailed;
// with the provider that said it does not know the account). A gateway
// that fails is logged and the next one asked.
func (s *Service) lookupName(ctx context.Context, d *destination) (name, provider, unavailable string) {
	routes, _ := payoutRoutes(d.gateways, d.country.Code, d.operator)
	ordered := []*route{d.route}
	for _, r := range routes {
		if r.gateway.ID != d.route.gateway.ID {
			ordered = append(ordered, r)
		}
	}
	unavailable = NameNotSupported
	for _, r := range ordered {
		c, err := s.Connectors.For(ctx, movement.Transfer, r.gateway)
		if err != nil {
			unavailable = NameLookupFailed // For has logged it
			continue
		}
		nl, ok := c.(gateway.NameLooker)
		if !ok {
			continue
		}
		n, err := nl.AccountHolderName(ctx, d.country.Code, r.code, d.phone)
		switch {
		case errors.Is(err, gateway.ErrNoNameLookup):
			continue
		case errors.Is(err, gateway.ErrNameUnknown):
			return "", r.gateway.Provider, NameNotFound
		case err != nil:
			s.Failures.Record(ctx, movement.Transfer, "name_lookup", r.gateway.ID, err)
			unavailable = NameLookupFailed
			continue
		}
		return n, r.gateway.Provider, ""
	}
	return "", "", unavailable
}

// checkName is a transfer's recipient name check, before anything is
// written: a name the aggregator tells that clearly differs from
// recipient_name refuses the transfer (400 nom_different); a name that
// matches marks it matched; no name leaves it unavailable, and it is sent
// unchecked.
func (s *Service) checkName(ctx context.Context, ws *cauri.Workspace, tr *cauri.Transfer) error {
	if tr.RecipientNameCheck == cauri.NameCheckNone {
		return nil
	}
	d, err := s.destination(ctx, ws, tr.Country, tr.Operator, tr.Phone, tr.Amount)
	if err != nil {
		return err
	}
	name, provider, unavailable := s.lookupName(ctx, d)
	switch {
	case unavailable != "", len(nameWords(name)) == 0: // no name, or none to compare (a title alone)
		tr.RecipientNameCheck = cauri.NameCheckUnavailable
	case NamesDiffer(tr.RecipientName, name):
		return invalid("nom_different", "The account %s at %s is not in the name of %q (%s tells another name); nothing was sent",
			tr.Phone, tr.Operator, tr.RecipientName, provider)
	default:
		tr.RecipientNameCheck = cauri.NameCheckMatched
	}
	return nil
}
