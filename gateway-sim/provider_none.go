package gatewaysim

// The profile none: a provider without idempotency. It speaks Stripe's
// wire format (charges and PaymentIntents) and ignores the key: every
// request it receives can charge. Config.NoIdempotency (--no-idempotency,
// idemcheck's --gateway-idempotency off) is this profile.
type noneDialect struct{ stripeDialect }

func (noneDialect) profile() Profile {
	p := stripeProfile
	p.Name = ProviderNone
	p.Source = "Stripe's wire format without its idempotency (" + stripeProfile.Source + ")"
	p.Idempotency = Idempotency{}
	return p
}
