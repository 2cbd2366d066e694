// Package sdk holds Cauri's client libraries for other languages: node/
// (TypeScript types, plain JavaScript at run time), php/ and python/. Each
// covers the merchant routes of openapi.yaml and verifies webhooks in one
// call against the shared vectors in testdata/, which the Go webhook
// package generates. The Go test here builds cauri once and runs each
// library's own test suite with its toolchain, so `go test ./...` runs them
// all; without a toolchain a suite is skipped locally and fails under CI=true.
package sdk
