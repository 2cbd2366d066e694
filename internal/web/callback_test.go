package web

import (
	"strings"
	"testing"

	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/store/storetest"
)

// TestCallback_BadReference: a callback naming a reference no database
// could hold (a NUL byte, invalid UTF-8, a huge one) is answered like any
// callback about an unknown payment: 200, nothing changed, never a 500.
func TestCallback_BadReference(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		ws, _ := e.newWorkspace("Callback shop", true)
		g, _, _ := e.addSimulatedGateway(ws, "SN")
		for _, ref := range []string{`\u0000abc`, `\udcff`, strings.Repeat("x", 10000), ""} {
			r := e.do("POST", "/callbacks/"+g.ID, `{"depositId": "`+ref+`", "status": "COMPLETED"}`)
			if r.status != 200 {
				t.Errorf("callback with reference %.20q = %d %s; want 200", ref, r.status, r.raw)
			}
		}
		for _, path := range []string{"/callbacks/gw_%00", "/callbacks/%FF"} {
			if r := e.do("POST", path, `{}`); r.status != 404 {
				t.Errorf("callback to %s = %d; want 404", path, r.status)
			}
			if r := e.do("PUT", path, `{}`); r.status != 404 {
				t.Errorf("PUT callback to %s = %d; want 404", path, r.status)
			}
		}
	})
}
