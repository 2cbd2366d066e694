package web

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cauri-pay/cauri"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

var contractDoc = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(cauri.OpenAPI)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

var contractRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := contractDoc()
	if err != nil {
		return nil, err
	}
	// Route on paths alone: the test servers listen on other addresses than
	// the document's example server.
	local := *doc
	local.Servers = nil
	return gorillamux.NewRouter(&local)
})

func init() {
	for _, ct := range []string{"text/html", "image/svg+xml", "image/png", "application/yaml"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
	}
}

// headersAnyResponse may appear on any response without being documented:
// they describe the transport or the page's security, not the API.
var headersAnyResponse = []string{
	"Content-Type", "Content-Length", "Date", "Transfer-Encoding", "Connection", "Vary", "Cache-Control",
	"Content-Encoding", "Accept-Ranges", "Last-Modified", "Content-Security-Policy", "X-Content-Type-Options",
	"Referrer-Policy",
}

// contract holds every request and response that goes through it to
// openapi.yaml: an undocumented route, status code, header or field, a
// response body off its schema, or a request the document forbids that the
// service accepts, fails the test.
func contract(t *testing.T, next http.Handler) http.Handler {
	router, err := contractRouter()
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") && !strings.HasPrefix(r.URL.Path, "/static/logos/") {
			next.ServeHTTP(w, r) // the page's own assets, not part of the interface
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		if r.Context().Err() != nil {
			return // the client went away: nothing was answered
		}

		where := r.Method + " " + r.URL.Path
		vreq := r.Clone(context.Background())
		vreq.URL.Scheme, vreq.URL.Host = "http", "localhost"
		vreq.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := router.FindRoute(vreq)
		if err != nil {
			// An unknown path is 404, a known one with another method 405
			// (with Allow); under /v1/partner/ the partner checks come first
			// (the Partner tag documents it).
			partnerFirst := strings.HasPrefix(r.URL.Path, "/v1/partner/") && slices.Contains([]int{401, 429, 503}, rec.Code)
			otherMethod := rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != ""
			if rec.Code != http.StatusNotFound && !partnerFirst && !otherMethod {
				t.Errorf("contract: %s is not in openapi.yaml but answered %d", where, rec.Code)
			}
			return
		}
		in := &openapi3filter.RequestValidationInput{
			Request: vreq, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		}
		reqErr := openapi3filter.ValidateRequest(context.Background(), in)
		if reqErr != nil && rec.Code < 400 {
			t.Errorf("contract: openapi.yaml forbids this request to %s, but the service answered %d: %v", where, rec.Code, reqErr)
		}
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		}
		out.SetBodyBytes(rec.Body.Bytes())
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("contract: response %d of %s does not match openapi.yaml: %v\nbody: %.300s", rec.Code, where, err, rec.Body.String())
			return
		}
		documented := route.Operation.Responses.Status(rec.Code)
		for name := range rec.Header() {
			if slices.Contains(headersAnyResponse, name) {
				continue
			}
			if documented == nil || documented.Value == nil || documented.Value.Headers[name] == nil && !hasHeaderFold(documented.Value.Headers, name) {
				t.Errorf("contract: response %d of %s has header %s, which openapi.yaml does not document", rec.Code, where, name)
			}
		}
	})
}

func hasHeaderFold(h openapi3.Headers, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}
