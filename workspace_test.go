package cauri

import "testing"

// TestCreditsBalance: only a live payment that succeeded, in a Connect
// workspace, credits the workspace's balance at the service.
func TestCreditsBalance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		live     bool
		status   SessionStatus
		connect  bool
		credited bool
	}{
		{"LiveSuccessConnect", true, SessionSuccess, true, true},
		{"NotConnect", true, SessionSuccess, false, false},
		{"TestMode", false, SessionSuccess, true, false},
		{"Pending", true, SessionPending, true, false},
		{"Failed", true, SessionFailed, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := &Session{Livemode: tc.live, Status: tc.status}
			if got := CreditsBalance(sess, tc.connect); got != tc.credited {
				t.Fatalf("got %v; want %v", got, tc.credited)
			}
		})
	}
}
