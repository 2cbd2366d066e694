package mtnmomo

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/cauri-pay/cauri/internal/gateway"
	"github.com/cauri-pay/cauri/internal/gateway/sim"
)

var _ gateway.NameLooker = (*Client)(nil)

// basicUserInfo is GET /{product}/v1_0/accountholder/msisdn/{msisdn}/basicuserinfo's
// answer: given_name and family_name in MTN's reference; the SDK's sandbox
// example also has name, the whole name (testdata/SOURCES.md).
type basicUserInfo struct {
	Name       text `json:"name"`
	GivenName  text `json:"given_name"`
	FamilyName text `json:"family_name"`
}

// fullName is the holder's name: name when MTN gives it, else the given
// names then the family names; "" when it gives none.
func (b basicUserInfo) fullName() string {
	if n := strings.Join(strings.Fields(string(b.Name)), " "); n != "" {
		return truncate(n, 200)
	}
	return truncate(strings.Join(strings.Fields(string(b.GivenName)+" "+string(b.FamilyName)), " "), 200)
}

// AccountHolderName implements gateway.NameLooker with the Disbursement
// product's basic user info (the product payouts use, so its credentials
// are the gateway's payout ones): "the operation does not need any consent
// by the account holder" (MTN). The number goes as MTN's partyId does,
// digits without the "+". A 404 carrying MTN's {code} is an account MTN
// does not know (ErrNameUnknown, an assumption: MTN documents only the 200);
// one without (its API gateway's own 404: a wrong address), a 5xx or an
// unreadable answer, an error. Country and operator are the gateway's: one
// MTN account serves one country's MTN wallets.
func (c *Client) AccountHolderName(ctx context.Context, _, _, phone string) (string, error) {
	digits, ok := msisdn(phone)
	if !ok {
		return "", &gateway.Error{Message: "not asked to MTN MoMo: the phone number is not in E.164 format"}
	}
	code, raw, err := c.api(ctx, c.disbursement(), http.MethodGet,
		"/disbursement/v1_0/accountholder/msisdn/"+url.PathEscape(digits)+"/basicuserinfo", nil, nil)
	switch {
	case err != nil:
		return "", err
	case code == http.StatusNotFound && errorOf(raw).Code != "":
		return "", gateway.ErrNameUnknown
	case code >= 500:
		return "", &gateway.Error{Transient: true, Answered: true, Message: "MTN MoMo answered the account holder's info " + refusal(code, raw)}
	case code != http.StatusOK:
		return "", &gateway.Error{Message: "MTN MoMo answered the account holder's info " + refusal(code, raw)}
	}
	var info basicUserInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return "", &gateway.Error{Transient: true, Answered: true, Message: "MTN MoMo answered an unreadable account holder's info"}
	}
	if n := info.fullName(); n != "" {
		return n, nil
	}
	return "", gateway.ErrNameUnknown
}

// simHolder is a wallet holder the simulator knows, by the last four
// digits of the number: its given and family names.
type simHolder struct{ given, family string }

// SimHolders are the simulator's wallet holders, by the number's last four
// digits (any country): the names of docs/transfers.md's examples. MTN's
// sandbox numbers (46733123450 to ...463) are MTN's sandbox user, "Sand
// Box", as the SDK's example shows it; any other number is an account MTN
// does not know (404 RESOURCE_NOT_FOUND).
var SimHolders = map[string]simHolder{
	"3456": {"Jean", "Kouassi"},
	"4567": {"Awa", "Diop"},
	"5678": {"Aya", "N'Guessan"},
	"6789": {"Issa", "Ouédraogo"},
}

// basicUserInfo is GET /{product}/v1_0/accountholder/msisdn/{msisdn}/basicuserinfo:
// MTN's reference's fields for a known holder, the SDK's sandbox example
// for MTN's sandbox numbers, 404 RESOURCE_NOT_FOUND for any other number.
func (s *Simulator) basicUserInfo(w http.ResponseWriter, number string) {
	s.mu.Lock()
	s.lookups++
	s.mu.Unlock()
	if _, ok := msisdn(number); !ok || strings.HasPrefix(number, "+") {
		refuse(w, http.StatusBadRequest, "BAD_REQUEST", "accountHolderMSISDN must be an MSISDN with its country code, digits only.")
		return
	}
	if len(number) == 11 && number >= "46733123450" && number <= "46733123463" {
		sim.Reply(w, http.StatusOK, map[string]any{"sub": "0", "name": "Sand Box", "given_name": "Sand", "family_name": "Box",
			"birthdate": "1976-08-13", "locale": "sv_SE", "gender": "MALE", "updated_at": 1678361103})
		return
	}
	h, ok := SimHolders[number[len(number)-4:]]
	if !ok {
		refuse(w, http.StatusNotFound, notFound, "Requested resource was not found.")
		return
	}
	sim.Reply(w, http.StatusOK, map[string]any{"given_name": h.given, "family_name": h.family, "birthdate": "1990-01-01",
		"locale": "fr_CI", "gender": "", "status": "ACTIVE"})
}

// NameLookups counts the basic user info requests the simulator answered.
func (s *Simulator) NameLookups() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookups
}
