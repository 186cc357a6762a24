package gatewaysim

import "strings"

// declineReason is why a card was declined, in Stripe's vocabulary.
type declineReason struct {
	code        string // error.code and the charge's failure_code
	declineCode string // error.decline_code
	message     string
}

var (
	genericDecline    = &declineReason{"card_declined", "generic_decline", "Your card was declined."}
	insufficientFunds = &declineReason{"card_declined", "insufficient_funds", "Your card has insufficient funds."}
	expiredCard       = &declineReason{"expired_card", "expired_card", "Your card has expired."}
	incorrectCVC      = &declineReason{"incorrect_cvc", "incorrect_cvc", "Your card's security code is incorrect."}
)

// declineTokens are Stripe's test-mode tokens that decline, so a service's
// own tests of its decline path work against the simulator unchanged. Any
// other source succeeds.
var declineTokens = map[string]*declineReason{
	"tok_chargeDeclined":                  genericDecline,
	"tok_chargeDeclinedInsufficientFunds": insufficientFunds,
	"tok_chargeDeclinedExpiredCard":       expiredCard,
	"tok_chargeDeclinedIncorrectCvc":      incorrectCVC,
}

// declineOfToken is the decline a token or PaymentMethod id asks for, nil
// for one that succeeds. Stripe names its test PaymentMethods after the
// tokens: pm_card_chargeDeclined declines as tok_chargeDeclined does, and
// pm_card_visa succeeds as tok_visa does.
func declineOfToken(id string) *declineReason {
	if name, ok := strings.CutPrefix(id, "pm_card_"); ok {
		id = "tok_" + name
	}
	return declineTokens[id]
}

// declineCards are the raw test card numbers behind those tokens.
var declineCards = map[string]*declineReason{
	"4000000000000002": genericDecline,
	"4000000000009995": insufficientFunds,
	"4000000000000069": expiredCard,
	"4000000000000127": incorrectCVC,
}

// declineOfCharge is the decline recorded on a failed charge.
func declineOfCharge(c Charge) *declineReason {
	return &declineReason{code: c.FailureCode, declineCode: c.DeclineCode, message: c.FailureMessage}
}

// apiError is the 402 a decline is answered with; it names the failed charge,
// as Stripe's does, so a caller can look it up.
func (d *declineReason) apiError(chargeID string) *apiError {
	return &apiError{kind: errDeclined, Type: typeCard, Code: d.code, DeclineCode: d.declineCode,
		Message: d.message, Charge: chargeID,
		DocURL: "https://stripe.com/docs/error-codes/" + strings.ReplaceAll(d.code, "_", "-")}
}
