package cauri

import _ "embed"

// OpenAPI is the interface description (openapi.yaml at the repository
// root), embedded so the binary serves the document it was built with.
//
//go:embed openapi.yaml
var OpenAPI []byte

// APIVersion is the interface description's version (SPEC section 9).
const APIVersion = "2026-09-19"
