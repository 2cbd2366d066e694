package web

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cauri-pay/cauri"
	"go.yaml.in/yaml/v3"
)

// openAPIJSON converts the embedded document to JSON once, at start.
func openAPIJSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(cauri.OpenAPI, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
}

func (s *Server) openAPIYAML(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(cauri.OpenAPI)
}

func (s *Server) openAPIJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(s.openapiJSON)
}

// reference is the API reference page: Redoc, vendored, rendering the
// served document. Nothing is loaded from outside the service, and Redoc's
// telemetry is off (the CSP would block it anyway).
func (s *Server) reference(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// Redoc injects its styles and runs its search in a blob worker.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	fmt.Fprint(w, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Cauri API reference `+cauri.APIVersion+`</title>
</head>
<body>
<redoc spec-url="/v1/openapi.json" disable-telemetry="true"></redoc>
<script type="module" src="/static/reference/redoc.standalone.js"></script>
</body>
</html>
`)
}

// redocJS serves the vendored bundle, gzipped to clients that accept it.
func (s *Server) redocJS(w http.ResponseWriter, r *http.Request) {
	gz, err := redoc.ReadFile("redoc/redoc.standalone.js.gz")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("Vary", "Accept-Encoding")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		w.Write(gz)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		http.Error(w, "corrupt bundle", http.StatusInternalServerError)
		return
	}
	io.Copy(w, zr)
}

//go:embed redoc/redoc.standalone.js.gz
var redoc embed.FS
