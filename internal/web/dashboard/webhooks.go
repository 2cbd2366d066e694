package dashboard

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/delivery"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type deliveryRow struct {
	ID, Created, Event, Object, Status, Result string
	Attempts                                   int
}

type eventChoice struct {
	Name     string
	Selected bool
}

type webhooksData struct {
	frame
	URL, TestURL  string
	ModeURL       string   // where the data shown is sent: the test button's target ("": disabled)
	Signers       []keyRow // the secret keys that sign the mode's webhooks now, newest first
	Events        []eventChoice
	Notifications []store.Notification // the latest unread of the mode shown
	Unread        string               // how many are unread, when more than shown ("1000+" beyond the cap)
	Deliveries    []deliveryRow
	Status        string
	Error         string
}

// webhooksPage is GET /dashboard/webhooks: the addresses and the event
// selection, the unread notifications of failed deliveries, and the
// delivery log of the selected data (latest 50, of one status when asked)
// with a resend button each.
func (s *Dashboard) webhooksPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderWebhooks(w, r, u, nil)
}

func (s *Dashboard) renderWebhooks(w http.ResponseWriter, r *http.Request, u *signedInUser, refused error) error {
	d, ws := u.d, u.ws
	cfg, err := s.Webhooks.Config(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	status := r.URL.Query().Get("status")
	if !slices.Contains([]string{"pending", "delivered", "failed"}, status) {
		status = ""
	}
	list, err := s.Webhooks.Deliveries(r.Context(), ws.ID, d.Livemode, store.DeliveryFilter{Status: status, Limit: 50})
	if err != nil {
		return err
	}
	notes, unread, err := s.Webhooks.Unread(r.Context(), ws.ID, d.Livemode, notificationsShown)
	if err != nil {
		return err
	}
	data := webhooksData{frame: s.frame(w, r, "webhooks", ws, d.Livemode), URL: cfg.URL,
		TestURL: cfg.TestURL, ModeURL: cfg.URLFor(d.Livemode), Status: status}
	for _, e := range cauri.EventNames {
		data.Events = append(data.Events, eventChoice{Name: e, Selected: cfg.Selects(e, d.Livemode)})
	}
	signers, err := s.Accounts.SigningKeys(r.Context(), ws.ID, d.Livemode)
	if err != nil {
		return err
	}
	for _, k := range signers {
		data.Signers = append(data.Signers, newKeyRow(k))
	}
	data.Notifications = notes
	switch {
	case unread >= store.UnreadCountCap:
		data.Unread = fmt.Sprintf("%d+", store.UnreadCountCap)
	case unread > len(notes):
		data.Unread = fmt.Sprint(unread)
	}
	for _, dl := range list {
		data.Deliveries = append(data.Deliveries, newDeliveryRow(dl))
	}
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "webhooks.html", data)
}

func newDeliveryRow(dl *cauri.Delivery) deliveryRow {
	row := deliveryRow{ID: dl.ID, Created: dl.CreatedAt.UTC().Format("2006-01-02 15:04"), Event: dl.Event,
		Object: dl.TransactionID + dl.TransferID, Status: string(dl.Status), Attempts: dl.Attempts}
	switch {
	case dl.LastStatusCode != nil:
		row.Result = strings.TrimSpace(fmt.Sprintf("%d %s", *dl.LastStatusCode, http.StatusText(*dl.LastStatusCode)))
	case dl.LastError != nil:
		row.Result = *dl.LastError
	}
	return row
}

// saveWebhooks is POST /dashboard/webhooks: the live and test addresses
// (public https or http only, as PATCH /v1/config/webhook checks them) and
// the events.
func (s *Dashboard) saveWebhooks(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	url, testURL := strings.TrimSpace(r.PostForm.Get("url")), strings.TrimSpace(r.PostForm.Get("test_url"))
	events := r.PostForm["events"]
	if len(events) == 0 {
		return s.renderWebhooks(w, r, u, cauri.Errorf(cauri.EInvalid, "Choose at least one event"))
	}
	// The events of the mode the dashboard shows.
	if _, err := s.Webhooks.Configure(r.Context(), ws.ID, delivery.Setting{URL: &url, TestURL: &testURL, Events: events, EventsLive: d.Livemode}); err != nil {
		return s.renderWebhooks(w, r, u, err)
	}
	http.Redirect(w, r, "/dashboard/webhooks", http.StatusSeeOther)
	return nil
}

// sendTestWebhook is POST /dashboard/webhooks/test: one test event to the
// address of the data shown (delivery.Service.SendTest), limited as
// resends are; the page comes back with it at the top of the log, or with
// the refusal (no address).
func (s *Dashboard) sendTestWebhook(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	if err := s.Limit(w, r, httpx.LimitResend, "per workspace", u.ws.ID, "rate_limited"); err != nil {
		return err
	}
	if _, err := s.Webhooks.SendTest(r.Context(), u.ws, u.d.Livemode); err != nil {
		if cauri.ErrorCode(err) == cauri.EInternal {
			return err
		}
		return s.renderWebhooks(w, r, u, err)
	}
	http.Redirect(w, r, "/dashboard/webhooks", http.StatusSeeOther)
	return nil
}

// resendFromDashboard is POST /dashboard/deliveries/{id}/resend: one
// attempt now, as the API's resend (its per-minute limit included).
func (s *Dashboard) resendFromDashboard(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	d, ws := u.d, u.ws
	if err := s.Limit(w, r, httpx.LimitResend, "per workspace", ws.ID, "rate_limited"); err != nil {
		return err
	}
	if _, err := s.Webhooks.Resend(r.Context(), ws.ID, d.Livemode, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/webhooks", http.StatusSeeOther)
	return nil
}

// notificationsShown is how many unread notifications the webhooks page
// lists (the latest); a count tells how many more there are.
const notificationsShown = 10

// acknowledgeAll is POST /dashboard/notifications/read: every unread
// notification of the mode shown.
func (s *Dashboard) acknowledgeAll(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	if err := s.Webhooks.AcknowledgeAll(r.Context(), u.ws.ID, u.d.Livemode); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/webhooks", http.StatusSeeOther)
	return nil
}

// acknowledge is POST /dashboard/notifications/{id}/read.
func (s *Dashboard) acknowledge(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	if err := s.Webhooks.Acknowledge(r.Context(), ws.ID, r.PathValue("id")); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/webhooks", http.StatusSeeOther)
	return nil
}
