// Package sim is what the aggregators' simulators are built on: one
// state machine (Book, running a Lifecycle) holding their collections and
// payouts, the numbers that choose an outcome (Outcome), injected faults,
// the control calls tests and developers make, notifications and the
// stand-in for an aggregator's own payment page (Page). Each connector's
// simulator adds its aggregator's API on top: paths, authentication,
// checks, refusals and words, from the aggregator's own documentation.
//
// It imports only the standard library.
package sim

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Outcome is what the payer's number asks a simulator to do, like
// the aggregators' sandbox numbers:
//
//	...0039  refused at initiation
//	...0029  fails once settled (the payer declines)
//	...0049  fails once settled: the payer's balance is too low
//	...0129  never settles, no callback (a lost payment)
//	other    succeeds
func Outcome(phone string) (refuse, fail, stuck bool) {
	return strings.HasSuffix(phone, "0039"), strings.HasSuffix(phone, "0029") || LowBalance(phone), strings.HasSuffix(phone, "0129")
}

// LowBalance reports a number whose payment fails for want of
// funds (...0049); each simulator says so in its aggregator's words.
func LowBalance(phone string) bool { return strings.HasSuffix(phone, "0049") }

// Faults is a simulator's injected faults, set by POST /_sim/fault?mode=
// slow&seconds=N | 500 | 500-initiate | malformed | none.
type Faults struct {
	mu      sync.Mutex
	mode    string
	slowFor time.Duration
}

// Set changes the fault from a control request's query.
func (f *Faults) Set(r *http.Request) {
	secs, _ := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode, f.slowFor = r.URL.Query().Get("mode"), time.Duration(secs*float64(time.Second))
	if f.mode == "none" {
		f.mode = ""
	}
}

// Apply injects the current fault into an API request: it reports true when
// it answered (500, 500-initiate on a POST, malformed JSON), after waiting
// when the fault is slow.
func (f *Faults) Apply(w http.ResponseWriter, r *http.Request) bool {
	f.mu.Lock()
	mode, slow := f.mode, f.slowFor
	f.mu.Unlock()
	switch {
	case mode == "slow":
		select {
		case <-time.After(slow):
		case <-r.Context().Done():
			return true
		}
	case mode == "500", mode == "500-initiate" && r.Method == http.MethodPost:
		http.Error(w, `{"message":"internal error"}`, http.StatusInternalServerError)
		return true
	case mode == "malformed":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status": `))
		return true
	}
	return false
}

// Reply writes a simulator's JSON answer.
func Reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Note is an aggregator's notification: Body sent to URL with Method
// (POST when "") and the aggregator's own Header (its signature;
// Content-Type: JSON unless set). URL "": none.
type Note struct {
	Method, URL string
	Body        []byte
	Header      http.Header
}

// PostCallback sends a simulator's notification n, giving up after 5
// seconds.
func PostCallback(n Note) {
	if n.URL == "" {
		return
	}
	req, err := http.NewRequest(cmp.Or(n.Method, http.MethodPost), n.URL, bytes.NewReader(n.Body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range n.Header {
		req.Header[k] = v
	}
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req); err == nil {
		res.Body.Close()
	}
}

// Page is a simulator's stand-in for an aggregator's own payment page,
// served at GET /_sim/pay/{id}: the customer pays or declines there, the
// simulator settles the payment so, and the customer goes back to the
// merchant's return address.
type Page struct {
	// Settle settles payment id ("" succeeds, declined fails), reporting
	// whether it exists.
	Settle   func(id, status string) bool
	Declined string // the status Settle takes for a declined payment
	// Return is where the customer goes back to, and the fields the
	// aggregator posts there (nil: a plain GET, as most aggregators do).
	Return func(id string) (string, url.Values)
}

// Serve answers GET /_sim/pay/{id} (the page) and POST /_sim/pay/{id}
// with pay or decline (its buttons).
func (p Page) Serve(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/_sim/pay/")
	back, fields := p.Return(id)
	if back == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method != http.MethodPost {
		fmt.Fprintf(w, `<!doctype html><title>Simulated payment page</title><form method="post">
<button name="do" value="pay" id="sim-pay">Pay</button> <button name="do" value="decline" id="sim-decline">Decline</button></form>`)
		return
	}
	status := ""
	if r.FormValue("do") == "decline" {
		status = p.Declined
	}
	p.Settle(id, status)
	if fields == nil {
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	fmt.Fprintf(w, `<!doctype html><title>Back to the merchant</title><body onload="document.forms[0].submit()"><form method="post" action="%s">`,
		html.EscapeString(back))
	for k, vs := range fields {
		for _, v := range vs {
			fmt.Fprintf(w, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(k), html.EscapeString(v))
		}
	}
	fmt.Fprint(w, `<button id="sim-back">Back to the merchant</button></form>`)
}
