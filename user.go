package cauri

import (
	"net/mail"
	"strings"
	"time"
)

// User is a person who signs in to the merchant dashboard. A user may
// belong to several workspaces.
type User struct {
	ID        string
	Email     string // lowercase
	CreatedAt time.Time
}

// NormalizeEmail checks an e-mail address and lowercases it.
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return "", Errorf(EInvalid, "%q is not an e-mail address", s)
	}
	return s, nil
}

// MinPasswordLen is the shortest password the dashboard accepts.
const MinPasswordLen = 10

// DashboardSessionLifetime is how long a dashboard sign-in lasts.
const DashboardSessionLifetime = 12 * time.Hour
