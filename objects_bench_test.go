package cauri

import (
	"encoding/json"
	"testing"
	"time"
)

func benchSession() *Session {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return &Session{
		ID: NewID("cs_"), WorkspaceID: NewID("ws_"), Status: SessionSuccess, Amount: 1500000, Currency: "XOF",
		CustomerName: "Awa Diop", CustomerEmail: "awa@example.com", CustomerPhone: "+2250707123456",
		Description: "2 pagnes wax", SuccessURL: "https://shop.example/merci", Metadata: map[string]string{"order_id": "1042"},
		Provider: "sandbox", CreatedAt: now, UpdatedAt: now, CompletedAt: &now,
	}
}

func BenchmarkSessionObjectJSON(b *testing.B) {
	s := benchSession()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(s.Object("https://pay.example/pay")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeliveryObjectJSON(b *testing.B) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	code := 200
	d := &Delivery{ID: NewID("whd_"), Event: EventPaymentCompleted, URL: "https://shop.example/hooks", Status: DeliveryDelivered,
		Attempts: 1, MaxAttempts: 10, LastStatusCode: &code, TransactionID: NewID("cs_"), CreatedAt: now, DeliveredAt: &now}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(d.Object()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseAmount(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAmount("amount", "15000.50", "GHS"); err != nil {
			b.Fatal(err)
		}
	}
}
