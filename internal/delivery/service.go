package delivery

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
)

// Service is the webhooks' rules for the merchant (SPEC section 4,
// Webhooks): the addresses and events of each mode, the delivery log of
// the caller's mode, resends, and the dashboard's notices of deliveries
// that failed.
type Service struct {
	Store  ServiceStore
	Guard  *Guard  // the address policy, checked when an address is set
	Worker *Worker // sends resends at once
	Now    func() time.Time
}

// ServiceStore is what the service keeps and reads (*store.Store).
type ServiceStore interface {
	WebhookConfig(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error)
	UpdateWebhookConfig(ctx context.Context, workspaceID string, fn func(*cauri.WebhookConfig) error) (*cauri.WebhookConfig, error)
	Deliveries(ctx context.Context, workspaceID string, livemode bool, f store.DeliveryFilter) ([]*cauri.Delivery, error)
	Delivery(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error)
	UnreadNotifications(ctx context.Context, workspaceID string, livemode bool, limit int) ([]store.Notification, int, error)
	AcknowledgeNotification(ctx context.Context, workspaceID, id string, now time.Time) error
	AcknowledgeAllNotifications(ctx context.Context, workspaceID string, livemode bool, now time.Time) (int64, error)
	InsertTestEvent(ctx context.Context, ev *cauri.Event, url string, maxAttempts int) (string, error)
}

// Config reads a workspace's webhook configuration, both modes.
func (s *Service) Config(ctx context.Context, workspaceID string) (*cauri.WebhookConfig, error) {
	return s.Store.WebhookConfig(ctx, workspaceID)
}

// Setting is a change to a workspace's webhooks; nil fields stay as they
// are, "" removes an address.
type Setting struct {
	URL, TestURL *string
	Events       []string
	// EventsLive says which mode's selection Events sets.
	EventsLive bool
}

// Configure checks every address (Guard) and event of a change, then
// saves it whole.
func (s *Service) Configure(ctx context.Context, workspaceID string, c Setting) (*cauri.WebhookConfig, error) {
	for _, u := range []*string{c.URL, c.TestURL} {
		if u != nil && *u != "" {
			if err := s.Guard.CheckURL(ctx, *u); err != nil {
				return nil, err
			}
		}
	}
	var events []string
	if c.Events != nil {
		var err error
		if events, err = cauri.ParseEvents(c.Events); err != nil {
			return nil, err
		}
	}
	return s.Store.UpdateWebhookConfig(ctx, workspaceID, func(cfg *cauri.WebhookConfig) error {
		if c.URL != nil {
			cfg.URL = *c.URL
		}
		if c.TestURL != nil {
			cfg.TestURL = *c.TestURL
		}
		if c.Events != nil {
			cfg.SetEvents(c.EventsLive, events)
		}
		return nil
	})
}

// ConfigureMode is an API key's change (PATCH /v1/config/webhook): the
// address and the events of one mode, the key's unless mode says ("live",
// "test"); a test key sets only the test mode's. It returns the
// configuration and the mode changed.
func (s *Service) ConfigureMode(ctx context.Context, workspaceID string, keyLive bool, mode string, url *string, events []string) (*cauri.WebhookConfig, bool, error) {
	live := keyLive
	switch mode {
	case "":
	case "live":
		if !keyLive {
			return nil, false, cauri.Errorf(cauri.EForbidden, "A test key sets only the test webhook URL; use mode test, or a production key")
		}
	case "test":
		live = false
	default:
		return nil, false, cauri.Errorf(cauri.EInvalid, "mode must be \"live\" or \"test\"")
	}
	c := Setting{Events: events, EventsLive: live}
	if live {
		c.URL = url
	} else {
		c.TestURL = url
	}
	cfg, err := s.Configure(ctx, workspaceID, c)
	return cfg, live, err
}

// Deliveries lists the deliveries of one mode, newest first, filtered (a
// status among pending, delivered and failed; an event name; a limit of 1
// to 200).
func (s *Service) Deliveries(ctx context.Context, workspaceID string, livemode bool, f store.DeliveryFilter) ([]*cauri.Delivery, error) {
	if f.Status != "" && !slices.Contains([]string{"pending", "delivered", "failed"}, f.Status) {
		return nil, cauri.Errorf(cauri.EInvalid, "status must be pending, delivered or failed")
	}
	if f.Event != "" && !slices.Contains(cauri.EventNames, f.Event) {
		return nil, cauri.Errorf(cauri.EInvalid, "event %q is not an event", f.Event)
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, cauri.Errorf(cauri.EInvalid, "limit must be a whole number from 1 to 200")
	}
	return s.Store.Deliveries(ctx, workspaceID, livemode, f)
}

// Delivery reads one delivery of the mode.
func (s *Service) Delivery(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error) {
	return s.Store.Delivery(ctx, workspaceID, livemode, id)
}

// Resend makes one attempt of a delivery of the mode now, with a fresh
// signature, to the current address, whatever its state; it returns once
// the receiver has answered (or the worker's timeout).
func (s *Service) Resend(ctx context.Context, workspaceID string, livemode bool, id string) (*cauri.Delivery, error) {
	if _, err := s.Store.Delivery(ctx, workspaceID, livemode, id); err != nil {
		return nil, err
	}
	return s.Worker.Resend(ctx, id)
}

// Unread lists the dashboard's unread notices of a workspace's deliveries
// of one mode that failed, newest first, at most limit, and how many are
// unread (up to store.UnreadCountCap).
func (s *Service) Unread(ctx context.Context, workspaceID string, livemode bool, limit int) ([]store.Notification, int, error) {
	return s.Store.UnreadNotifications(ctx, workspaceID, livemode, limit)
}

// Acknowledge marks a notice read.
func (s *Service) Acknowledge(ctx context.Context, workspaceID, id string) error {
	return s.Store.AcknowledgeNotification(ctx, workspaceID, id, s.Now())
}

// AcknowledgeAll marks every unread notice of a workspace's mode read.
func (s *Service) AcknowledgeAll(ctx context.Context, workspaceID string, livemode bool) error {
	_, err := s.Store.AcknowledgeAllNotifications(ctx, workspaceID, livemode, s.Now())
	return err
}

// TestEventMarker is the metadata key, set to "true", that marks the data
// of a test webhook (SendTest): a sample payment that does not exist.
const TestEventMarker = "cauri_test_webhook"

// SendTest sends one test webhook to the workspace's address of a mode:
// a payment.completed event (the SPEC's events are the only ones a
// receiver knows) whose data is a sample session marked as a test (its
// metadata's TestEventMarker, its description), through the delivery path
// every event takes: an event and a delivery in the log, signed with the
// mode's secret keys. It is sent once, at once, and not retried (the log's
// resend button sends it again); the delivery returned says how it went.
// No address for the mode is 409.
func (s *Service) SendTest(ctx context.Context, ws *cauri.Workspace, livemode bool) (*cauri.Delivery, error) {
	cfg, err := s.Store.WebhookConfig(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	url := cfg.URLFor(livemode)
	if url == "" {
		mode := "production"
		if !livemode {
			mode = "test"
		}
		return nil, cauri.Errorf(cauri.EConflict, "No webhook URL is set for %s data: save one first", mode)
	}
	now := s.Now().UTC()
	sess := &cauri.Session{ID: cauri.NewID("cs_"), Livemode: livemode, Status: cauri.SessionSuccess, Amount: 1000,
		Currency: ws.DefaultCurrency, Description: "Test webhook sent from the Cauri dashboard", Provider: "sandbox",
		MerchantName: ws.Name, Metadata: map[string]string{TestEventMarker: "true", "order_id": "test_webhook"},
		CreatedAt: now, UpdatedAt: now, CompletedAt: &now}
	if sess.Currency == "" {
		sess.Currency = cauri.DefaultCurrency
	}
	obj := sess.Object("")
	obj.URL = "" // no page: the payment does not exist
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	ev := &cauri.Event{ID: cauri.NewLogID("evt_", now), WorkspaceID: ws.ID, Livemode: livemode, Type: cauri.EventPaymentCompleted,
		Data: data, CreatedAt: now}
	id, err := s.Store.InsertTestEvent(ctx, ev, url, 1)
	if err != nil {
		return nil, err
	}
	return s.Worker.SendNow(ctx, id)
}
