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

// openAPIDocs returns the embedded document as the service serves it, in
// YAML and in JSON, made once at start: its servers are the service's own
// base URL (CAURI_BASE_URL), so that /docs shows requests to this
// service; the document in the repository names a local `cauri serve`.
func openAPIDocs(baseURL string) (yamlDoc, jsonDoc []byte, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(cauri.OpenAPI, &doc); err != nil || len(doc.Content) == 0 {
		return nil, nil, fmt.Errorf("openapi.yaml: %v", err)
	}
	root := doc.Content[0]
	yamlDoc = cauri.OpenAPI
	if baseURL != "" {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != "servers" {
				continue
			}
			str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
			root.Content[i+1] = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{
				str("url"), str(baseURL), str("description"), str("This service")}}}}
		}
		var b bytes.Buffer
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			return nil, nil, err
		}
		yamlDoc = b.Bytes()
	}
	var v any
	if err := doc.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	jsonDoc, err = json.Marshal(v)
	return yamlDoc, jsonDoc, err
}

func (s *Server) openAPIYAML(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.openapiYAML)
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
<redoc spec-url="/v1/openapi.yaml" disable-telemetry="true"></redoc>
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
