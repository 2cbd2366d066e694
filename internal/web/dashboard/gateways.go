package dashboard

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cauri-pay/cauri"
	"github.com/cauri-pay/cauri/internal/catalog"
	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateways"
	"github.com/cauri-pay/cauri/internal/web/httpx"
)

type operatorRow struct {
	Country, Operator, Name string
	Enabled                 bool
}

type gatewayRow struct {
	ID, Name, Provider             string
	Live, Enabled, Collect, Payout bool
	Credentials                    []string // each field with the hint of its value
	Operators                      []operatorRow
	Attempts, Pending              int
	Rate, LastFailure, LastFailAt  string
	Down                           bool   // its aggregator stopped answering (the routing engine's view)
	Problem                        string // why it cannot be used now (its connector cannot be built)
}

type credentialField struct {
	Name     string
	Optional bool
}

type gatewaysData struct {
	frame
	Gateways  []gatewayRow
	Providers []*gateway.Provider
	// Adding is the provider whose form is open, with its fields.
	Adding    *gateway.Provider
	Fields    []credentialField
	Set       int      // the credentials' set: 0 the provider's first, n its n-th other (CinetPay's API v1)
	Sets      []string // each set of the provider's credentials, named by its fields, for links to each form
	Countries string   // of the provider being added, for the hint
	Name      string   // the form's values, kept after a refusal (never the credentials)
	Live      bool
	Connect   bool // the workspace collects through the platform's gateways
	Error     string
}

// gatewaysPage is GET /dashboard/gateways: the workspace's gateways, each
// with its credentials (hints only), its switch, its operators (each with
// its switch) and its health over the last 24 hours; and the form that
// connects an account (?provider=KEY opens that provider's fields).
func (s *Dashboard) gatewaysPage(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	return s.renderGateways(w, r, u, r.URL.Query().Get("provider"), nil)
}

func (s *Dashboard) renderGateways(w http.ResponseWriter, r *http.Request, u *signedInUser, adding string, refused error) error {
	d, ws := u.d, u.ws
	list, health, err := s.Gateways.List(r.Context(), ws.ID)
	if err != nil {
		return err
	}
	data := gatewaysData{frame: s.frame(w, r, "gateways", ws, d.Livemode), Live: true, Connect: ws.Connect}
	for _, k := range gateway.Keys() {
		p, _ := gateway.Lookup(k)
		data.Providers = append(data.Providers, p)
	}
	if p, ok := gateway.Lookup(adding); ok {
		data.Adding = p
		fields := p.Credentials
		if set, err := strconv.Atoi(r.FormValue("set")); err == nil && set > 0 && set <= len(p.CredentialSets) {
			data.Set, fields = set, p.CredentialSets[set-1]
		}
		if len(p.CredentialSets) > 0 {
			for _, set := range append([][]string{p.Credentials}, p.CredentialSets...) {
				data.Sets = append(data.Sets, strings.Join(set, ", "))
			}
		}
		for _, f := range fields {
			data.Fields = append(data.Fields, credentialField{Name: f})
		}
		for _, f := range p.OptionalCredentials {
			data.Fields = append(data.Fields, credentialField{Name: f, Optional: true})
		}
		data.Countries = strings.Join(slices.Sorted(maps.Keys(p.Operators)), ", ")
	}
	for _, g := range list {
		row := gatewayRow{ID: g.ID, Name: g.Name, Provider: g.Provider, Live: g.Live, Enabled: g.Enabled, Collect: g.Collect,
			Payout: g.Payout, Rate: "–", Problem: g.Problem}
		if p, ok := gateway.Lookup(g.Provider); ok {
			row.Provider = p.Name
		}
		if s.Router != nil {
			row.Down = s.Router.Down(g.Provider)
		}
		for _, f := range slices.Sorted(maps.Keys(g.CredentialHints)) {
			row.Credentials = append(row.Credentials, f+" "+g.CredentialHints[f])
		}
		for _, rt := range g.Routes {
			name := rt.Operator
			if op := catalog.OperatorByKey(rt.Operator); op != nil {
				name = op.Name
			}
			row.Operators = append(row.Operators, operatorRow{Country: rt.Country, Operator: rt.Operator, Name: name, Enabled: rt.Enabled})
		}
		if h := health[g.ID]; h != nil {
			row.Attempts, row.Pending, row.Rate, row.LastFailure = h.Total, h.Pending, rateText(h.Tally), h.LastFailure
			if h.LastFailureAt != nil {
				row.LastFailAt = h.LastFailureAt.UTC().Format("2006-01-02 15:04")
			}
		}
		data.Gateways = append(data.Gateways, row)
	}
	if refused != nil {
		data.Error = cauri.ErrorMessage(refused)
		if r.Method == http.MethodPost {
			data.Name, data.Live = r.PostForm.Get("name"), r.PostForm.Get("live") == "true"
		}
		w.WriteHeader(httpx.Status(refused))
	}
	return s.pages.ExecuteTemplate(w, "gateways.html", data)
}

// addGateway is POST /dashboard/gateways: connects one of the merchant's
// aggregator accounts, checked as `cauri gateway add` checks it (provider,
// credentials complete and known, countries served). The credentials are
// sealed at once and never shown again; a refusal shows the form again
// without them.
func (s *Dashboard) addGateway(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	f := r.PostForm
	p, found := gateway.Lookup(f.Get("provider"))
	if !found {
		return s.renderGateways(w, r, u, "", cauri.Errorf(cauri.EInvalid, "Pick an aggregator among %s", strings.Join(gateway.Keys(), ", ")))
	}
	creds := map[string]string{}
	for k, v := range f {
		if name, ok := strings.CutPrefix(k, "cred."); ok && len(v) == 1 && strings.TrimSpace(v[0]) != "" {
			creds[name] = strings.TrimSpace(v[0])
		}
	}
	var countries []string
	for _, c := range strings.Split(f.Get("countries"), ",") {
		if c = strings.ToUpper(strings.TrimSpace(c)); c != "" {
			countries = append(countries, c)
		}
	}
	_, err := s.Gateways.Add(r.Context(), ws, gateways.New{Provider: p.Key, Name: f.Get("name"), Live: f.Get("live") == "true",
		Countries: countries, Credentials: creds})
	switch cauri.ErrorCode(err) {
	case "":
	case cauri.EInternal:
		return err
	case cauri.EForbidden:
		return s.renderGateways(w, r, u, "", err)
	default:
		return s.renderGateways(w, r, u, p.Key, err)
	}
	http.Redirect(w, r, "/dashboard/gateways", http.StatusSeeOther)
	return nil
}

// gatewaySwitch is POST /dashboard/gateways/{id}: enabled=true or false.
func (s *Dashboard) gatewaySwitch(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	if _, err := s.Gateways.SetEnabled(r.Context(), ws.ID, r.PathValue("id"), r.PostForm.Get("enabled") == "true"); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/gateways", http.StatusSeeOther)
	return nil
}

// gatewayOperator is POST /dashboard/gateways/{id}/operators: one
// operator of one country (country, operator) on or off (enabled).
func (s *Dashboard) gatewayOperator(w http.ResponseWriter, r *http.Request, u *signedInUser) error {
	ws := u.ws
	f := r.PostForm
	if _, err := s.Gateways.SetOperator(r.Context(), ws.ID, r.PathValue("id"), f.Get("country"), f.Get("operator"),
		f.Get("enabled") == "true"); err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/gateways", http.StatusSeeOther)
	return nil
}
