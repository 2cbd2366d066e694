package gateway

import (
	"errors"
	"fmt"
	"strings"
)

// credentialChecks are the providers' own rules on a gateway's
// credentials, beyond the fields CheckCredentials requires: values that
// must be one of a few, fields that go together.
var credentialChecks = map[string]func(creds map[string]string, live bool) error{
	"mpesa": checkMpesaB2C,
}

// checkMpesaB2C checks M-Pesa's B2C credentials (the connector's b2c.go):
// a known command_id and environment; initiator_name with the initiator's
// password or a ready security_credential; and a production gateway's
// security_credential, since Cauri holds only Safaricom's sandbox
// certificate (safaricom/mpesa-node-library keys/sandbox-cert.cer), with
// which the connector encrypts the password. The reversal initiator's
// (reversal.go), when given, follow the same rules under their own names.
func checkMpesaB2C(creds map[string]string, live bool) error {
	switch strings.TrimSpace(creds["command_id"]) {
	case "", "BusinessPayment", "SalaryPayment", "PromotionPayment":
	default:
		return errors.New("command_id must be BusinessPayment, SalaryPayment or PromotionPayment")
	}
	env := strings.ToLower(strings.TrimSpace(creds["environment"]))
	switch {
	case env == "" && live:
		env = "production"
	case env == "":
		env = "sandbox"
	case env != "sandbox" && env != "production":
		return errors.New("environment must be sandbox or production")
	}
	if b2c := strings.TrimSpace(creds["b2c_shortcode"]); b2c != "" && !digits(b2c) {
		return errors.New("b2c_shortcode must be the B2C shortcode's digits")
	}
	if err := checkInitiator(creds, "", env, "B2C payouts", creds["b2c_shortcode"] != "" || creds["command_id"] != ""); err != nil {
		return err
	}
	return checkInitiator(creds, "reversal_", env, "Reversals by their own initiator", false)
}

// checkInitiator checks an M-Pesa initiator's credentials, named with
// prefix: none at all (and nothing that needs them: needed), or its name
// with its password or a ready security credential, the latter in
// production.
func checkInitiator(creds map[string]string, prefix, env, what string, needed bool) error {
	name, pw, cred := prefix+"initiator_name", prefix+"initiator_password", prefix+"security_credential"
	password, ready := strings.TrimSpace(creds[pw]) != "", strings.TrimSpace(creds[cred]) != ""
	if strings.TrimSpace(creds[name]) == "" {
		if password || ready || needed {
			return fmt.Errorf("%s need %s, with %s or %s", what, name, pw, cred)
		}
		return nil
	}
	if !password && !ready {
		return fmt.Errorf("%s need %s (or a ready %s) with %s", what, pw, cred, name)
	}
	if env == "production" && !ready {
		return fmt.Errorf("Cauri holds only Safaricom's sandbox certificate: a production gateway gives its %s, generated on the Daraja portal", cred)
	}
	return nil
}

func digits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
