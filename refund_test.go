package cauri

import (
	"encoding/json"
	"testing"
	"time"
)

func refundSession(status SessionStatus) *Session {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return &Session{ID: "cs_1", WorkspaceID: "ws_1", Livemode: true, Status: status, Amount: 10000, Currency: "XOF",
		Metadata: map[string]string{"order_id": "A-1"}, CreatedAt: t0, UpdatedAt: t0}
}

func refundOf(amount int64, status RefundStatus) *Refund {
	return &Refund{ID: NewID("re_"), SessionID: "cs_1", Amount: amount, Currency: "XOF", Status: status, Method: RefundByAggregator}
}

func TestRefundable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  SessionStatus
		refunds []*Refund
		want    int64
	}{
		{"none", SessionSuccess, nil, 10000},
		{"a pending one holds its amount", SessionSuccess, []*Refund{refundOf(3000, RefundPending)}, 7000},
		{"a failed one does not", SessionSuccess, []*Refund{refundOf(3000, RefundFailed), refundOf(1000, RefundSucceeded)}, 9000},
		{"all of it", SessionSuccess, []*Refund{refundOf(4000, RefundSucceeded), refundOf(6000, RefundPending)}, 0},
		{"another session's do not count", SessionSuccess, []*Refund{{SessionID: "cs_2", Amount: 5000, Status: RefundSucceeded}}, 10000},
		{"not paid", SessionPending, nil, 0},
		{"refunded", SessionRefunded, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refundable(refundSession(tc.status), tc.refunds); got != tc.want {
				t.Errorf("Refundable = %d; want %d", got, tc.want)
			}
		})
	}
}

func TestAdmitRefund(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     SessionStatus
		amount     int64
		refunds    []*Refund
		wantAmount int64
		reason     string
	}{
		{"OK, the rest by default", SessionSuccess, 0, []*Refund{refundOf(2500, RefundSucceeded)}, 7500, ""},
		{"OK, partial", SessionSuccess, 3000, nil, 3000, ""},
		{"OK, exactly what is left", SessionSuccess, 7000, []*Refund{refundOf(3000, RefundPending)}, 7000, ""},
		{"ErrExceeds", SessionSuccess, 7001, []*Refund{refundOf(3000, RefundPending)}, 0, "refund_exceeds_payment"},
		{"ErrNothingLeft", SessionSuccess, 0, []*Refund{refundOf(10000, RefundPending)}, 0, "refund_exceeds_payment"},
		{"ErrNotRefundable, pending", SessionPending, 100, nil, 0, "not_refundable"},
		{"ErrNotRefundable, refunded", SessionRefunded, 0, nil, 0, "not_refundable"},
		{"ErrNotRefundable, failed", SessionFailed, 100, nil, 0, "not_refundable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := refundOf(tc.amount, RefundPending)
			err := AdmitRefund(r, refundSession(tc.status), tc.refunds)
			if ErrorReason(err) != tc.reason || tc.reason != "" && ErrorCode(err) != EInvalid {
				t.Fatalf("AdmitRefund = %v; want reason %q", err, tc.reason)
			}
			if tc.reason == "" && r.Amount != tc.wantAmount {
				t.Errorf("amount = %d; want %d", r.Amount, tc.wantAmount)
			}
		})
	}
}

func TestEndRefund(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name         string
		others       []*Refund
		amount       int64
		status       RefundStatus
		wantSession  SessionStatus
		wantRefunded string
	}{
		{"partial", nil, 4000, RefundSucceeded, SessionSuccess, "4000"},
		{"the last part", []*Refund{refundOf(6000, RefundSucceeded), refundOf(500, RefundFailed)}, 4000, RefundSucceeded, SessionRefunded, "10000"},
		{"whole", nil, 10000, RefundSucceeded, SessionRefunded, "10000"},
		{"failed", []*Refund{refundOf(6000, RefundSucceeded)}, 4000, RefundFailed, SessionSuccess, "6000"},
		{"whole but another still pending", []*Refund{refundOf(6000, RefundPending)}, 4000, RefundSucceeded, SessionSuccess, "4000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := refundSession(SessionSuccess)
			r := refundOf(tc.amount, RefundPending)
			// The ended refund as the store reads it: among the session's.
			ev, err := EndRefund(r, sess, append([]*Refund{r}, tc.others...), tc.status, "rejected", "no", now, "https://pay.example")
			if err != nil {
				t.Fatal(err)
			}
			if sess.Status != tc.wantSession || r.Status != tc.status || r.CompletedAt == nil || !r.CompletedAt.Equal(now) {
				t.Fatalf("session %s, refund %s at %v; want %s, %s at %v", sess.Status, r.Status, r.CompletedAt, tc.wantSession, tc.status, now)
			}
			if tc.status == RefundFailed && (r.FailureCode != "rejected" || r.FailureMessage != "no") {
				t.Errorf("failure = %q %q", r.FailureCode, r.FailureMessage)
			}
			if ev.Type != EventPaymentUpdated || ev.SessionID != sess.ID || !ev.Livemode || ev.WorkspaceID != "ws_1" {
				t.Errorf("event = %+v", ev)
			}
			var data struct {
				ID             string      `json:"id"`
				Status         string      `json:"status"`
				AmountRefunded json.Number `json:"amount_refunded"`
				Refund         struct {
					ID, Status, Object, TransactionID string
				} `json:"refund"`
			}
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data.ID != sess.ID || data.Status != string(tc.wantSession) || string(data.AmountRefunded) != tc.wantRefunded ||
				data.Refund.ID != r.ID || data.Refund.Status != string(tc.status) || data.Refund.Object != "refund" {
				t.Errorf("data = %s", ev.Data)
			}
		})
	}
}

func TestRefund_Object(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := &Refund{ID: "re_1", SessionID: "cs_1", Amount: 1250, Currency: "GHS", Status: RefundPending, Method: RefundByPayout,
		Provider: "pawapay", TransferID: "tr_1", CreatedAt: t0, UpdatedAt: t0}
	b, _ := json.Marshal(r.Object())
	want := `{"id":"re_1","object":"refund","transaction_id":"cs_1","amount":12.5,"currency":"GHS","status":"pending",` +
		`"failure_code":null,"failure_message":null,"method":"payout","reason":null,"provider":"pawapay","transfer_id":"tr_1",` +
		`"livemode":false,"created_at":"2026-11-22T10:00:00.000Z","updated_at":"2026-11-22T10:00:00.000Z","completed_at":null}`
	if string(b) != want {
		t.Errorf("object =\n%s\nwant\n%s", b, want)
	}
}
