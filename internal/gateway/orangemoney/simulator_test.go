package orangemoney

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/gateway/gatewaytest"
)

// TestSimulator_CountsTokens holds Calls to counting the OAuth endpoint's
// requests and unknown paths', which faults spare.
func TestSimulator_CountsTokens(t *testing.T) {
	sim, srv, _ := newSim(t)
	gatewaytest.Control(t, srv.URL, "/_sim/fault?mode=500")
	token, _ := http.NewRequest(http.MethodPost, srv.URL+tokenPath, strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	token.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	token.SetBasicAuth(sim.ClientID, sim.ClientSecret)
	nowhere, _ := http.NewRequest(http.MethodGet, srv.URL+"/nowhere", nil)
	for req, want := range map[*http.Request]int{token: http.StatusOK, nowhere: http.StatusNotFound} {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Fatalf("%s under fault 500 = %d; want %d", req.URL.Path, res.StatusCode, want)
		}
	}
	if sim.Calls() != 2 {
		t.Fatalf("%d calls; want 2", sim.Calls())
	}
}
