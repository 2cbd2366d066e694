package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// Call sends one JSON request to an aggregator named name and decodes its
// answer into out, returning the HTTP status. It classifies failures the
// same way for every connector: no answer, a 5xx or an unreadable answer
// is transient (the operation may or may not have happened); refused
// credentials are not. Other statuses are the connector's to read.
func Call(ctx context.Context, hc *http.Client, name, method, url string, header http.Header, in, out any) (int, error) {
	code, raw, err := Send(ctx, hc, name, method, url, header, in)
	switch {
	case err != nil:
		return code, err
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return code, &Error{Message: fmt.Sprintf("%s refused the gateway's credentials (%d)", name, code)}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return code, &Error{Transient: true, Answered: true, Message: fmt.Sprintf("%s answered %d with unreadable JSON", name, code)}
	}
	return code, nil
}

// Send sends one request (in, when not nil, as JSON) to an aggregator named
// name and returns the HTTP status and the raw answer, for the connectors
// that read answers Call cannot (an empty 202, refusals that are not JSON,
// a 401 that only means a token expired). No answer, a cut answer or a 5xx
// is a transient error (not sent when the connection could not be made).
func Send(ctx context.Context, hc *http.Client, name, method, url string, header http.Header, in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, &Error{Message: name + " address: " + err.Error()}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	res, err := hc.Do(req)
	if err != nil {
		var op *net.OpError
		notSent := errors.As(err, &op) && op.Op == "dial"
		return 0, nil, &Error{Transient: true, NotSent: notSent, Message: name + " did not answer: " + Describe(err)}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	switch {
	case err != nil:
		return res.StatusCode, nil, &Error{Transient: true, Message: name + " answer cut: " + err.Error()}
	case res.StatusCode >= 500:
		return res.StatusCode, raw, &Error{Transient: true, Answered: true, Message: fmt.Sprintf("%s answered %d", name, res.StatusCode)}
	}
	return res.StatusCode, raw, nil
}

// Describe is a transport error without its URL, which may carry a
// credential (a token in the query): safe to log and to show.
func Describe(err error) string {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// URL joins an aggregator's base address and a path.
func URL(base, path string) string { return strings.TrimRight(base, "/") + path }
