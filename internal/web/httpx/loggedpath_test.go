package httpx

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLoggedPath: the secrets a path can carry (an invitation's token, a
// callback result address's token) never reach the logs; the rest does.
func TestLoggedPath(t *testing.T) {
	mux := http.NewServeMux()
	var got string
	for _, pattern := range []string{"GET /invitations/{token}", "POST /callbacks/{gatewayId}", "POST /callbacks/{gatewayId}/{segment}"} {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { got = LoggedPath(r) })
	}
	for path, want := range map[string]string{
		"GET /invitations/inv_secret":                             "/invitations/[token]",
		"POST /callbacks/gw_1":                                    "/callbacks/gw_1",
		"POST /callbacks/gw_1/stk.ref-1.1500..s3cr3t-T0ken_":      "/callbacks/gw_1/stk.ref-1.1500..[token]",
		"POST /callbacks/gw_1/whatever":                           "/callbacks/gw_1/[token]",
		"POST /callbacks/gw_1/" + strings.Repeat("a", 200) + ".t": "/callbacks/gw_1/" + strings.Repeat("a", 120) + "...[token]",
	} {
		method, p, _ := strings.Cut(path, " ")
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, p, nil))
		if got != want {
			t.Errorf("%s logged as %q; want %q", path, got, want)
		}
	}
}
