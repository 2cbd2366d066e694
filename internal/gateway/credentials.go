package gateway

import (
	"errors"
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
// which the connector encrypts the password.
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
	password, ready := creds["initiator_password"] != "", strings.TrimSpace(creds["security_credential"]) != ""
	if strings.TrimSpace(creds["initiator_name"]) == "" {
		if password || ready || creds["b2c_shortcode"] != "" || creds["command_id"] != "" {
			return errors.New("B2C payouts need initiator_name, with initiator_password or security_credential")
		}
		return nil
	}
	if !password && !ready {
		return errors.New("B2C payouts need initiator_password (or a ready security_credential) with initiator_name")
	}
	if env == "production" && !ready {
		return errors.New("Cauri holds only Safaricom's sandbox certificate: a production gateway gives its security_credential, generated on the Daraja portal")
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
