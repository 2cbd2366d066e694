package httpx

import (
	"time"

	"github.com/cauri-pay/cauri/internal/ratelimit"
)

// The rate limits, in one table: SPEC section 8's, and those this service
// adds where the SPEC gives none (docs/decisions.md, "Rate limits"). Each
// means at most Count accepted in any window of Per (ratelimit), shared by
// every node through Redis when CAURI_REDIS_URL is set. Each audience's
// routes.go names the one a route takes.
var (
	LimitCreateSession  = ratelimit.PerMinute("create_session", 60)                            // per IP (SPEC)
	LimitSandbox        = ratelimit.PerMinute("sandbox", 30)                                   // per IP (SPEC)
	LimitInitiate       = ratelimit.PerMinute("initiate", 30)                                  // per IP (SPEC); also the page's forms and codes
	LimitVerify         = ratelimit.PerMinute("verify", 60)                                    // per IP (SPEC)
	LimitRoute          = ratelimit.PerMinute("route", 120)                                    // per IP (SPEC)
	LimitLinks          = ratelimit.PerMinute("payment_links", 60)                             // per IP (SPEC): creation
	LimitTransfers      = ratelimit.PerMinute("transfers", 30)                                 // per workspace (SPEC): a batch takes one turn
	LimitRecipients     = ratelimit.PerMinute("transfer_recipients", 30)                       // per workspace: name lookups, each an aggregator's call
	LimitResend         = ratelimit.PerMinute("resend", 30)                                    // per workspace: resending deliveries
	LimitRefunds        = ratelimit.PerMinute("refunds", 30)                                   // per workspace: creating refunds, as transfers
	LimitPartner        = ratelimit.PerMinute("partner", 120)                                  // per partner
	LimitLoginIP        = ratelimit.PerMinute("login_ip", 20)                                  // per IP: sign-in and invitations
	LimitLoginEmail     = ratelimit.PerMinute("login_email", 5)                                // per address and client network
	LimitLoginEmailHour = ratelimit.Limit{Name: "login_email_hour", Count: 20, Per: time.Hour} // the same, growing: an hour's
	LimitRefused        = ratelimit.PerMinute("refused_credential", 30)                        // per IP: refused API keys and partner secrets
)
