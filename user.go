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

// CheckPassword refuses a new password shorter than MinPasswordLen, or
// longer than bcrypt's 72 bytes.
func CheckPassword(p string) error {
	if len(p) < MinPasswordLen || len(p) > 72 {
		return Errorf(EInvalid, "The password must be %d to 72 characters long", MinPasswordLen)
	}
	return nil
}

// DashboardSessionLifetime is how long a dashboard sign-in lasts.
const DashboardSessionLifetime = 12 * time.Hour

// Invitation asks someone, by e-mail address, to join a workspace of the
// dashboard. Its link carries a random token (the store keeps its hash);
// it works once, until it expires or is revoked.
type Invitation struct {
	ID          string
	WorkspaceID string
	Email       string
	InvitedBy   string // user id
	CreatedAt   time.Time
	ExpiresAt   time.Time
}

// InvitationLifetime is how long an invitation's link works.
const InvitationLifetime = 7 * 24 * time.Hour
