package cauri

import (
	"strings"
	"time"
)

// Workspace is the account unit: it owns two key sets (live and test),
// its sessions, payment links and transfers, its gateways and its webhook
// settings.
type Workspace struct {
	ID   string
	Name string
	// Verified is false until the service has checked the merchant's
	// identity; an unverified workspace is entirely in test mode.
	Verified bool
	// Connect marks a workspace whose money is held by the service.
	Connect         bool
	DefaultCurrency Currency
	// TransfersClosed: the service administration closed transfers.
	TransfersClosed bool
	// TransferDailyCap is how many transfers it may create per day (GMT).
	TransferDailyCap int
	// PartnerID is the partner product that provisioned it ("" for none):
	// that partner, and no other, manages it through /v1/partner.
	PartnerID string
	CreatedAt time.Time
}

// NewWorkspace returns a workspace with a fresh id.
func NewWorkspace(name string, now time.Time) (*Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, Errorf(EInvalid, "workspace name is required")
	}
	if len(name) > 200 {
		return nil, Errorf(EInvalid, "workspace name is longer than 200 characters")
	}
	return &Workspace{ID: NewID("ws_"), Name: name, DefaultCurrency: DefaultCurrency, TransferDailyCap: DefaultTransferDailyCap,
		CreatedAt: now.UTC()}, nil
}

// Livemode is the mode of an object created with a key of the given mode:
// an unverified workspace creates test objects even with live keys.
func (w *Workspace) Livemode(keyLive bool) bool { return keyLive && w.Verified }

// KeyKind tells a public key from a secret key.
type KeyKind string

const (
	KeyPublic KeyKind = "pub"
	KeySecret KeyKind = "sec"
)

// Key is an API key of a workspace. Its plaintext is shown once, at creation;
// the store keeps a hash to look it up and the ciphertext to sign webhooks.
type Key struct {
	ID          string
	WorkspaceID string
	Kind        KeyKind
	Live        bool
	Plaintext   string // only set right after NewKey
	Last4       string // the part that may be shown again
	CreatedAt   time.Time
	// ExpiresAt is when a rolled key stops working (nil: it has not been
	// rolled). Until then it authenticates and also signs webhooks.
	ExpiresAt *time.Time
}

// NewKey returns a key of the form svc_{live|test}_{pub|sec}_<32 random chars>.
func NewKey(workspaceID string, kind KeyKind, live bool, now time.Time) *Key {
	mode := "test"
	if live {
		mode = "live"
	}
	plain := "svc_" + mode + "_" + string(kind) + "_" + randomString(20)
	return &Key{
		ID:          NewID("key_"),
		WorkspaceID: workspaceID,
		Kind:        kind,
		Live:        live,
		Plaintext:   plain,
		Last4:       plain[len(plain)-4:],
		CreatedAt:   now.UTC(),
	}
}

// KeySet makes a new workspace's four keys: the keys, to store, and their
// plaintexts by name (live_public, live_secret, test_public, test_secret),
// to show once.
func KeySet(workspaceID string, now time.Time) ([]*Key, map[string]string) {
	keys := []*Key{
		NewKey(workspaceID, KeyPublic, true, now), NewKey(workspaceID, KeySecret, true, now),
		NewKey(workspaceID, KeyPublic, false, now), NewKey(workspaceID, KeySecret, false, now),
	}
	plain := map[string]string{}
	for _, k := range keys {
		mode, kind := "test", "public"
		if k.Live {
			mode = "live"
		}
		if k.Kind == KeySecret {
			kind = "secret"
		}
		plain[mode+"_"+kind] = k.Plaintext
	}
	return keys, plain
}

// MaxKeyGrace bounds how long a rolled key stays valid (Stripe's bound).
const MaxKeyGrace = 7 * 24 * time.Hour

// Masked is how a key is shown once its plaintext is gone:
// svc_live_sec_…abcd.
func (k *Key) Masked() string {
	mode := "test"
	if k.Live {
		mode = "live"
	}
	return "svc_" + mode + "_" + string(k.Kind) + "_…" + k.Last4
}

// LooksLikeKey reports whether s has the shape of a Cauri key; anything else
// is rejected without a database look-up.
func LooksLikeKey(s string) bool {
	for _, p := range []string{"svc_live_pub_", "svc_live_sec_", "svc_test_pub_", "svc_test_sec_"} {
		if strings.HasPrefix(s, p) && len(s) > len(p) && len(s) <= 128 {
			return true
		}
	}
	return false
}

// CreditsBalance reports whether a session, in the state just saved,
// credits its workspace's balance at the service: a live payment that
// succeeded, in a Connect workspace (the service holds its money). The
// store writes the credit in the transaction that saves the state, once
// per session.
func CreditsBalance(sess *Session, connect bool) bool {
	return connect && sess.Livemode && sess.Status == SessionSuccess
}

// CoversSettlement admits a settlement of amount (in cur) paid out to a
// Connect workspace whose balance in cur is balance: never more than the
// service holds for it (402 solde_insuffisant).
func CoversSettlement(balance, amount int64, cur Currency) error {
	if balance < amount {
		return Reasonf(EPayment, "solde_insuffisant", "The balance is %d %s; it cannot settle %d", balance, cur, amount)
	}
	return nil
}
