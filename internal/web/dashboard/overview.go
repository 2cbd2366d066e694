package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/reports"
	"github.com/cauri-pay/cauri/internal/store"
)

// The overview's charts are SVG drawn on the server (no script, nothing
// loaded from elsewhere): a bar per day for the volume and for the success
// rate, and a bar per provider and per operator.
const (
	chartWidth  = 600
	chartHeight = 120
)

// overviewPeriods are the periods the overview offers, in days.
var overviewPeriods = []int{7, 30, 90}

type chartBar struct {
	X, Y, W, H int
	Title      string // the tooltip: the day and its figure
	Empty      bool   // nothing ended that day (the rate chart draws a tick)
}

type breakdownRow struct {
	Name, Volume, Rate string
	RatePct            int // the bar's length, 0 to 100
	Attempts           int
}

type overviewData struct {
	frame
	Workspaces []*cauri.Workspace
	Selected   string
	Days       int
	Periods    []int
	Currency   cauri.Currency
	Currencies []cauri.Currency
	Volume     string
	Rate       string
	Payments   int
	VolumeBars []chartBar
	RateBars   []chartBar
	MaxVolume  string
	FirstDay   string
	Breakdowns []breakdownTable
	// Connect: the service holds the workspace's money; Balance is what it
	// owes the workspace, per currency.
	Connect bool
	Balance []string
	// Checklist is the first-run checklist, until everything is done.
	Checklist  []checkItem
	ChecksDone int
}

// checkItem is a step of the first-run checklist; Title and Hint are keys
// of the page's texts, Link where the step is done ("": outside the
// dashboard).
type checkItem struct {
	ID, Title, Hint, Link string
	Done                  bool
}

// checklist is what the overview shows of c: nothing once all is done.
func checklist(c reports.Checklist) ([]checkItem, int) {
	if c.Done() {
		return nil, 0
	}
	webhookHint := "check_webhook_hint"
	if c.WebhookURL && !c.Webhook {
		webhookHint = "check_webhook_saved"
	}
	items := []checkItem{
		{"check-keys", "check_keys", "check_keys_hint", "/dashboard/keys", true},
		{"check-test-payment", "check_test_payment", "check_test_payment_hint", "/dashboard/transactions", c.TestPayment},
		{"check-webhook", "check_webhook", webhookHint, "/dashboard/webhooks", c.Webhook},
	}
	if !c.Connect {
		items = append(items, checkItem{"check-gateway", "check_gateway", "check_gateway_hint", "/dashboard/gateways", c.Gateway})
	}
	items = append(items, checkItem{"check-verified", "check_verified", "check_verified_hint", "", c.Verified})
	done := 0
	for _, it := range items {
		if it.Done {
			done++
		}
	}
	return items, done
}

// breakdownTable is the overview's table per provider or per operator
// (Title and Column are keys of the page's texts).
type breakdownTable struct {
	ID, Title, Column string
	Rows              []breakdownRow
}

// dashboard is GET /dashboard: the workspace and data (live or test) shown,
// and, once a workspace is chosen, the overview of its payments over the
// last 7, 30 or 90 days in one currency: volume and success rate per day,
// per provider and per operator.
func (s *Dashboard) dashboard(w http.ResponseWriter, r *http.Request) error {
	_, d, err := s.dashboardSession(r)
	if cauri.ErrorCode(err) == cauri.EUnauthorized {
		http.Redirect(w, r, "/dashboard/login", http.StatusSeeOther)
		return nil
	}
	if err != nil {
		return err
	}
	list, err := s.Accounts.Workspaces(r.Context(), d.UserID)
	if err != nil {
		return err
	}
	var ws *cauri.Workspace
	for _, x := range list {
		if x.ID == d.WorkspaceID {
			ws = x
		}
	}
	shownMode(d, ws)
	data := overviewData{frame: s.frame(w, r, "overview", ws, d.Livemode), Workspaces: list, Periods: overviewPeriods}
	if ws == nil {
		return s.pages.ExecuteTemplate(w, "dashboard.html", data)
	}
	data.Selected = ws.ID
	check, err := s.Reports.Checklist(r.Context(), ws)
	if err != nil {
		return err
	}
	data.Checklist, data.ChecksDone = checklist(check)
	if ws.Connect {
		balance, err := s.Reports.Balance(r.Context(), ws)
		if err != nil {
			return err
		}
		data.Connect = true
		for _, c := range slices.Sorted(maps.Keys(balance)) {
			data.Balance = append(data.Balance, cauri.DisplayAmount(balance[c], c))
		}
	}
	q := r.URL.Query()
	data.Days, _ = strconv.Atoi(q.Get("days"))
	if !slices.Contains(overviewPeriods, data.Days) {
		data.Days = 30
	}
	st, since, err := s.Reports.Overview(r.Context(), ws.ID, d.Livemode, data.Days)
	if err != nil {
		return err
	}
	data.Currency = pickCurrency(st, q.Get("currency"), ws.DefaultCurrency)
	for c := range st.Currencies {
		data.Currencies = append(data.Currencies, c)
	}
	slices.Sort(data.Currencies)
	data.overview(st, since)
	return s.pages.ExecuteTemplate(w, "dashboard.html", data)
}

// pickCurrency is the asked currency if valid, else the workspace's, else
// the one with the most payments in the period.
func pickCurrency(st *store.Stats, asked string, def cauri.Currency) cauri.Currency {
	if c, err := cauri.ParseCurrency(asked); err == nil {
		return c
	}
	if st.Currencies[def] > 0 || len(st.Currencies) == 0 {
		return def
	}
	best := def
	for c, n := range st.Currencies {
		if n > st.Currencies[best] || (n == st.Currencies[best] && c < best) {
			best = c
		}
	}
	return best
}

// overview fills the figures and the charts of one currency.
func (o *overviewData) overview(st *store.Stats, since time.Time) {
	days := st.Days[o.Currency]
	var total store.Tally
	var maxVolume int64
	for _, t := range days {
		total.Succeeded, total.Failed, total.Total, total.Volume = total.Succeeded+t.Succeeded, total.Failed+t.Failed, total.Total+t.Total, total.Volume+t.Volume
		maxVolume = max(maxVolume, t.Volume)
	}
	o.Payments = total.Total
	o.Volume = cauri.DisplayAmount(total.Volume, o.Currency)
	o.MaxVolume = cauri.DisplayAmount(maxVolume, o.Currency)
	o.Rate = rateText(total)
	w := chartWidth / o.Days
	for i := range o.Days {
		day := since.AddDate(0, 0, i)
		t := store.Tally{}
		if days[day] != nil {
			t = *days[day]
		}
		label := day.Format("2006-01-02")
		h := 0
		if maxVolume > 0 {
			h = int(t.Volume * (chartHeight - 2) / maxVolume)
		}
		if t.Volume > 0 {
			h = max(h, 2)
		}
		o.VolumeBars = append(o.VolumeBars, chartBar{X: i * w, Y: chartHeight - h, W: max(w-1, 1), H: h,
			Title: label + ": " + cauri.DisplayAmount(t.Volume, o.Currency)})
		rate, ok := t.SuccessRate()
		bar := chartBar{X: i * w, W: max(w-1, 1), Title: label + ": " + rateText(t)}
		if ok {
			bar.H = max(int(rate*chartHeight), 2)
		} else {
			bar.H, bar.Empty = 1, true
		}
		bar.Y = chartHeight - bar.H
		o.RateBars = append(o.RateBars, bar)
	}
	o.FirstDay = since.Format("2006-01-02")
	providers := breakdown(st.Providers[o.Currency], o.Currency, func(k string) string {
		if p, ok := gateway.Lookup(k); ok {
			return p.Name
		}
		return k
	})
	operators := breakdown(st.Operators[o.Currency], o.Currency, func(k string) string {
		if op := catalog.OperatorByKey(k); op != nil {
			return op.Name
		}
		return k
	})
	o.Breakdowns = []breakdownTable{{"providers", "per_provider", "provider", providers}, {"operators", "per_operator", "operator", operators}}
}

// breakdown lists tallies by volume, then by attempts.
func breakdown(m map[string]*store.Tally, cur cauri.Currency, name func(string) string) []breakdownRow {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b].Volume, m[a].Volume), cmp.Compare(m[b].Total, m[a].Total), cmp.Compare(a, b))
	})
	var out []breakdownRow
	for _, k := range keys {
		t := *m[k]
		rate, _ := t.SuccessRate()
		out = append(out, breakdownRow{Name: name(k), Volume: cauri.DisplayAmount(t.Volume, cur), Rate: rateText(t),
			RatePct: int(rate * 100), Attempts: t.Total})
	}
	return out
}

// rateText is a success rate as shown: "83 %" and the counts, or "–" when
// nothing ended.
func rateText(t store.Tally) string {
	rate, ok := t.SuccessRate()
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.0f %% (%d/%d)", rate*100, t.Succeeded, t.Succeeded+t.Failed)
}
