package web

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store/storetest"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// notInterface are routes that are not part of the interface: the hosted
// page's own assets, the vendored reference bundle, and the JSON 404s
// (the partner API's checks its secret first: the Partner tag says so).
var notInterface = map[string]bool{"GET /static/": true, "GET /static/reference/redoc.standalone.js": true, "/v1/": true, "/v1/partner/": true, "/": true}

func TestOpenAPI_Document(t *testing.T) {
	doc, err := contractDoc()
	if err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI document: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != cauri.APIVersion || cauri.APIVersion != "2026-09-19" {
		t.Fatalf("openapi %s, info.version %s; want 3.1.0 and %s", doc.OpenAPI, doc.Info.Version, cauri.APIVersion)
	}
	for _, name := range []string{"bearerAuth", "apiKey", "partnerSecret", "dashboardSession"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s is missing", name)
		}
	}
	for _, ev := range []string{cauri.EventPaymentCompleted, cauri.EventPaymentFailed, cauri.EventPaymentCancelled,
		cauri.EventPaymentUpdated, cauri.EventTransferSucceeded, cauri.EventTransferFailed} {
		if doc.Webhooks[ev] == nil || doc.Webhooks[ev].Post == nil {
			t.Errorf("webhook %s is not described", ev)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s needs an operationId and a summary", method, path)
			}
		}
	}
}

// routeList is every route pattern a server registers.
func routeList(t *testing.T) []string {
	srv, err := New(Deps{PayURL: "http://127.0.0.1/pay", Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var rec patterns
	srv.routes(&rec)
	return rec.list
}

func TestOpenAPI_DocumentsEveryRoute(t *testing.T) {
	doc, err := contractDoc()
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\{[^}]+\}`)
	served := map[string]bool{}
	for _, p := range routeList(t) {
		if notInterface[p] {
			continue
		}
		served[param.ReplaceAllString(p, "{}")] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+param.ReplaceAllString(path, "{}")] = true
		}
	}
	var missing, extra []string
	for r := range served {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for r := range documented {
		if !served[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes not in openapi.yaml: %v\noperations in openapi.yaml the service does not route: %v", missing, extra)
	}
}

func TestOpenAPI_Served(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	r := e.do("GET", "/v1/openapi.json", nil)
	if r.status != 200 || r.body["openapi"] != "3.1.0" || r.body["info"].(map[string]any)["version"] != cauri.APIVersion {
		t.Fatalf("openapi.json = %d %.200s", r.status, r.raw)
	}
	var again map[string]any
	if err := json.Unmarshal([]byte(r.raw), &again); err != nil || len(again["paths"].(map[string]any)) == 0 {
		t.Fatalf("openapi.json has no paths: %v", err)
	}
	// Both name this service as their server, and are otherwise the
	// embedded document.
	if servers := again["servers"].([]any); len(servers) != 1 || servers[0].(map[string]any)["url"] != e.url {
		t.Fatalf("openapi.json servers = %v; want this service's base URL %s", servers, e.url)
	}
	y := e.do("GET", "/v1/openapi.yaml", nil)
	var served, embedded map[string]any
	if err := yaml.Unmarshal([]byte(y.raw), &served); y.status != 200 || err != nil {
		t.Fatalf("openapi.yaml = %d, %v", y.status, err)
	}
	if err := yaml.Unmarshal(cauri.OpenAPI, &embedded); err != nil {
		t.Fatal(err)
	}
	if servers := served["servers"].([]any); len(servers) != 1 || servers[0].(map[string]any)["url"] != e.url {
		t.Fatalf("openapi.yaml servers = %v; want %s", servers, e.url)
	}
	served["servers"] = embedded["servers"]
	if !reflect.DeepEqual(served, embedded) {
		t.Fatal("openapi.yaml as served differs from the embedded document beyond its servers")
	}
	if p := e.do("GET", "/docs", nil); p.status != 200 || !strings.Contains(p.raw, `spec-url="/v1/openapi.yaml"`) {
		t.Fatalf("/docs = %d %s", p.status, p.raw)
	}
}

// TestBrowser_Reference renders the reference page in Chromium: the
// vendored Redoc must load and show the operations from the served document.
func TestBrowser_Reference(t *testing.T) {
	e := newEnv(t, storetest.SQLite(t))
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(e.url+"/docs")); err != nil {
		t.Fatal(err)
	}
	// Redoc shows the overview first and each tag on its own view: open
	// the Checkout tag, then the webhooks, from the sidebar.
	for _, step := range []struct{ link, want string }{
		{"Checkout", "Create a checkout session"},
		{"Webhooks", "payment.completed"},
	} {
		var text string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			click := fmt.Sprintf(`(() => {
				const e = [...document.querySelectorAll("a, li, span")].find(e => e.textContent.trim() === %q);
				if (e) e.click();
				return !!e })()`, step.link)
			chromedp.Run(ctx, chromedp.Evaluate[bool](click))
			text, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			if strings.Contains(text, step.want) {
				break
			}
		}
		if !strings.Contains(text, step.want) {
			t.Fatalf("the reference page does not show %q after opening %q; it shows: %.800s", step.want, step.link, text)
		}
	}
	// The sidebar, in a merchant's order (the document's, which Redoc keeps
	// from the YAML): checkout first, its first operation the session's
	// creation; one Webhooks section, the events, next to their deliveries.

	menu, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(document.querySelector(".menu-content")?.innerText || "none").split("\n")`))
	if err != nil {
		t.Fatal(err)
	}
	at := func(label string) int { return slices.Index(menu, label) }
	if n := len(slices.DeleteFunc(slices.Clone(menu), func(l string) bool { return l != "Webhooks" })); n != 1 ||
		at("Checkout") < 0 || at("Create a checkout session") != at("Checkout")+1 || at("Webhooks") > at("Payment links") {
		t.Fatalf("sidebar = %q; want Checkout first with the session's creation first, one Webhooks section before the links", menu)
	}
	screenshot(t, ctx, "reference")
}
