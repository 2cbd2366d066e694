package mtnmomo

import (
	"context"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/gateway"
)

func (c *Client) disbursement() product {
	return product{"disbursement", c.DisbursementKey, "disbursement_key", "payouts"}
}

// transfer is POST /disbursement/v1_0/transfer: as a request to pay, with
// the recipient as payee. MTN carries no recipient name.
type transfer struct {
	Amount       string `json:"amount"`
	Currency     string `json:"currency"`
	ExternalID   string `json:"externalId"`
	Payee        party  `json:"payee"`
	PayerMessage string `json:"payerMessage"`
	PayeeNote    string `json:"payeeNote"`
}

func encodeTransfer(p gateway.Payout) transfer {
	partyID, _ := msisdn(p.Phone)
	n := note(p.Description, p.Reference)
	return transfer{Amount: cauri.FormatAmount(p.Amount, p.Currency), Currency: string(p.Currency), ExternalID: p.Reference,
		Payee: party{PartyIDType: "MSISDN", PartyID: partyID}, PayerMessage: n, PayeeNote: n}
}

// Payout implements gateway.Payer: a transfer from the merchant's
// disbursement account under our reference. A refusal is a failed payout,
// LowBalance when MTN says NOT_ENOUGH_FUNDS. A gateway without the
// Disbursement product's subscription key cannot pay out: a lasting error.
func (c *Client) Payout(ctx context.Context, p gateway.Payout) (gateway.Status, error) {
	if st, bad := invalid(p.Reference, p.Amount, p.Phone); bad {
		return st, nil
	}
	return c.initiate(ctx, c.disbursement(), "/disbursement/v1_0/transfer", referenceHeader(p.Reference, p.NotifyURL),
		encodeTransfer(p), true)
}

// PayoutStatus implements gateway.Payer: the transfer read by our
// reference.
func (c *Client) PayoutStatus(ctx context.Context, ref gateway.Ref) (gateway.Status, error) {
	return c.status(ctx, c.disbursement(), "/disbursement/v1_0/transfer/", ref.Reference, true)
}

// IdempotentPayout: a transfer sent again under the same X-Reference-Id
// is refused as a duplicate (409), never paid twice.
func (c *Client) IdempotentPayout() bool { return true }
