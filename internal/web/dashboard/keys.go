package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// keyGraces are the grace periods a merchant may pick when rolling a key,
// in seconds, with their texts' keys: how long the old key keeps working.
var keyGraces = []keyGrace{{0, "now"}, {3600, "hour"}, {86400, "day"}, {3 * 86400, "three_days"}, {7 * 86400, "week"}}

type keyGrace struct {
	Seconds int
	Text    string
}

type keyRow struct {
	Masked, Created, Expires string
	Kind                     cauri.KeyKind
	Live                     bool
}

type keysData struct {
	frame
	Keys   []keyRow
	Graces []keyGrace
	NewKey string // the plaintext of a key just made: shown this once
	Error  string
}

// keysPage is GET /dashboard/keys: the workspace's keys that work (shown
// by their last characters, with when a rolled one stops) and the form
// that rolls one.
func (s *Dashboard) keysPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderKeys(w, r, u, "", nil)
}

func (s *Dashboard) renderKeys(w http.ResponseWriter, r *http.Request, u *signedInUser, newKey string, refused error) error {
	d, ws := u.d, u.ws
	keys, err := s.Accounts.Keys(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	data := keysData{frame: s.frame(w, r, "keys", ws, d.Livemode), Graces: keyGraces, NewKey: newKey}
	for _, k := range keys {
		data.Keys = append(data.Keys, newKeyRow(k))
	}
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "keys.html", data)
}

// newKeyRow is a key as the pages show it: by its last characters, with
// when a rolled one stops working.
func newKeyRow(k *cauri.Key) keyRow {
	row := keyRow{Masked: k.Masked(), Kind: k.Kind, Live: k.Live, Created: k.CreatedAt.UTC().Format("2006-01-02 15:04")}
	if k.ExpiresAt != nil {
		row.Expires = k.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	return row
}

// rollKey is POST /dashboard/keys: a new key of one mode and kind
// (key=live_sec, live_pub, test_sec or test_pub), shown once on the page
// that answers; the keys it replaces keep working for the grace period
// picked (grace, in seconds: 0, 1 hour, 24 hours, 3 or 7 days).
func (s *Dashboard) rollKey(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	mode, kind, _ := strings.Cut(r.PostForm.Get("key"), "_")
	grace, gerr := strconv.Atoi(r.PostForm.Get("grace"))
	offered := slices.ContainsFunc(keyGraces, func(g keyGrace) bool { return g.Seconds == grace })
	if gerr != nil || !offered || (mode != "live" && mode != "test") || (kind != string(cauri.KeySecret) && kind != string(cauri.KeyPublic)) {
		return s.renderKeys(w, r, u, "", cauri.Errorf(cauri.EInvalid, "Pick the key to roll (live or test, secret or public) and a grace period among those offered"))
	}
	k, err := s.Accounts.RollKey(r.Context(), ws.ID, cauri.KeyKind(kind), mode == "live", time.Duration(grace)*time.Second)
	if err != nil {
		return err
	}
	return s.renderKeys(w, r, u, k.Plaintext, nil)
}
