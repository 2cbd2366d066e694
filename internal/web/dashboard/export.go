package dashboard

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/store"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

// MaxExport is the most transactions one export holds (SPEC section 8).
const MaxExport = 10_000

// exportColumns are the CSV's columns, in the SPEC's order.
var exportColumns = []string{"ID", "Order ID", "Status", "Amount", "Currency", "Provider", "Payment Type", "Customer Name",
	"Customer Email", "Customer Phone", "Provider Ref", "Created At", "Completed At"}

// exportRow is one transaction of the JSON export.
type exportRow struct {
	ID            string              `json:"id"`
	OrderID       string              `json:"orderId"`
	Status        cauri.SessionStatus `json:"status"`
	Amount        json.Number         `json:"amount"`
	Currency      cauri.Currency      `json:"currency"`
	Provider      string              `json:"provider"`
	PaymentType   string              `json:"paymentType"`
	CustomerName  string              `json:"customerName"`
	CustomerEmail string              `json:"customerEmail"`
	CustomerPhone string              `json:"customerPhone"`
	ProviderRef   string              `json:"providerRef"`
	CreatedAt     string              `json:"createdAt"`
	CompletedAt   string              `json:"completedAt"`
}

func newExportRow(r store.ExportRow) exportRow {
	s := r.Session
	typ := ""
	switch {
	case s.Provider == "sandbox":
		typ = "SANDBOX"
	case strings.HasPrefix(r.Operator, "card_"):
		typ = "CARD"
	case r.Operator != "":
		typ = "MOBILE_MONEY"
	}
	out := exportRow{ID: s.ID, OrderID: s.OrderID(), Status: s.Status, Amount: json.Number(cauri.FormatAmount(s.Amount, s.Currency)),
		Currency: s.Currency, Provider: s.Provider, PaymentType: typ, CustomerName: s.CustomerName, CustomerEmail: s.CustomerEmail,
		CustomerPhone: s.CustomerPhone, ProviderRef: r.ProviderRef, CreatedAt: s.CreatedAt.UTC().Format(cauri.TimeFormat)}
	if s.CompletedAt != nil {
		out.CompletedAt = s.CompletedAt.UTC().Format(cauri.TimeFormat)
	}
	return out
}

// cells are the row's CSV cells. Text a customer or a merchant typed is
// guarded against spreadsheet formula injection: a cell starting with
// = + - @ or a tab or carriage return gets a leading apostrophe (OWASP).
func (e exportRow) cells() []string {
	guard := func(s string) string {
		if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
			return "'" + s
		}
		return s
	}
	return []string{e.ID, guard(e.OrderID), string(e.Status), string(e.Amount), string(e.Currency), e.Provider, e.PaymentType,
		guard(e.CustomerName), guard(e.CustomerEmail), e.CustomerPhone, guard(e.ProviderRef), e.CreatedAt, e.CompletedAt}
}

// exportTransactions is GET /v1/transactions/export: the dashboard's
// session cookie only (an API key gets 401), the workspace and mode the
// session selected (400 without one), up to 10 000 transactions newest
// first, streamed as CSV (default) or JSON.
func (s *Dashboard) exportTransactions(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
		return cauri.Errorf(cauri.EUnauthorized, "The export is for the dashboard: sign in there; API keys cannot export")
	}
	_, d, err := s.dashboardSession(r)
	if err != nil {
		return err
	}
	if d.WorkspaceID == "" {
		return cauri.Errorf(cauri.EInvalid, "No workspace is selected in this dashboard session; pick one on the dashboard")
	}
	ws, err := s.Accounts.Workspace(r.Context(), d.WorkspaceID)
	if err != nil {
		return err
	}
	shownMode(d, ws)
	q, err := httpx.Query(r)
	if err != nil {
		return err
	}
	f, format, err := transactionFilter(q)
	if err != nil {
		return err
	}
	f.Limit = MaxExport
	name := fmt.Sprintf("transactions-%s-%s", map[bool]string{true: "live", false: "test"}[d.Livemode], s.Now().UTC().Format("2006-01-02"))
	if format == "json" {
		return s.exportJSON(w, r, d, f, name)
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
	out := csv.NewWriter(w)
	out.UseCRLF = true // RFC 4180
	if err := out.Write(exportColumns); err != nil {
		return err
	}
	err = s.Reports.Transactions(r.Context(), d.WorkspaceID, d.Livemode, f, func(row store.ExportRow) error {
		return out.Write(newExportRow(row).cells())
	})
	out.Flush()
	return s.streamed(r, err)
}

// transactionFilter reads the export's (and the transactions page's)
// filters: format, status, from, to, search.
func transactionFilter(q url.Values) (store.ExportFilter, string, error) {
	f := store.ExportFilter{Search: strings.TrimSpace(q.Get("search"))}
	format := q.Get("format")
	if format == "" {
		format = "csv"
	}
	if format != "csv" && format != "json" {
		return f, "", cauri.Errorf(cauri.EInvalid, "format must be csv or json")
	}
	switch st := strings.ToUpper(q.Get("status")); st {
	case "", "ALL":
	case "PENDING", "SUCCESS", "FAILED", "CANCELLED", "REFUNDED":
		f.Status = cauri.SessionStatus(st)
	default:
		return f, "", cauri.Errorf(cauri.EInvalid, "status must be ALL, PENDING, SUCCESS, FAILED, CANCELLED or REFUNDED")
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
		end  bool
	}{{"from", &f.From, false}, {"to", &f.To, true}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		day, err := time.Parse("2006-01-02", v)
		if err != nil {
			return f, "", cauri.Errorf(cauri.EInvalid, "%s must be a date YYYY-MM-DD", p.name)
		}
		if p.end {
			day = day.AddDate(0, 0, 1) // inclusive through 23:59:59.999
		}
		*p.dst = day
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, "", cauri.Errorf(cauri.EInvalid, "from must not be after to")
	}
	search, err := cauri.CleanText("search", f.Search, 200)
	if err != nil {
		return f, "", err
	}
	f.Search = search
	return f, format, nil
}

// exportJSON streams {"object": "list", "data": [...], "count": n}.
func (s *Dashboard) exportJSON(w http.ResponseWriter, r *http.Request, d *store.DashboardSession, f store.ExportFilter, name string) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.json"`)
	fmt.Fprint(w, `{"object":"list","data":[`)
	n := 0
	err := s.Reports.Transactions(r.Context(), d.WorkspaceID, d.Livemode, f, func(row store.ExportRow) error {
		b, err := json.Marshal(newExportRow(row))
		if err != nil {
			return err
		}
		if n > 0 {
			w.Write([]byte(","))
		}
		n++
		_, err = w.Write(b)
		return err
	})
	fmt.Fprintf(w, `],"count":%d}`, n)
	return s.streamed(r, err)
}

// streamed logs an error met after the answer began: the status is sent,
// the client sees a cut file.
func (s *Dashboard) streamed(r *http.Request, err error) error {
	if err != nil {
		s.Logger.ErrorContext(r.Context(), "export cut short", "err", err, "request_id", httpx.RequestID(r))
	}
	return nil
}
