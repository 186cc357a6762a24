package gatewaysim

import "net/http"

// createIntent is POST /v1/payment_intents. With confirm=true it moves
// money as a charge does, through the same flow: idempotency, faults,
// ledger. Without, it only creates the PaymentIntent (still under the
// idempotency rules; no fault applies, no money moves).
func (s *Sim) createIntent(w http.ResponseWriter, r *http.Request) {
	s.process(w, r, parseIntentCreate)
}

// confirmIntent is POST /v1/payment_intents/{id}/confirm: the money-moving
// call of a PaymentIntent created without confirm=true, or re-confirmed
// with another payment method after a decline.
func (s *Sim) confirmIntent(w http.ResponseWriter, r *http.Request) {
	s.process(w, r, s.parseIntentConfirm)
}

// getIntent is GET /v1/payment_intents/{id}.
func (s *Sim) getIntent(w http.ResponseWriter, r *http.Request) {
	s.serveGet(w, r, func(apiKey, id string) (any, *apiError) {
		pi, ok := s.intents.get(apiKey, id)
		if !ok {
			return nil, noSuchIntent(id)
		}
		return pi.render(), nil
	})
}

// searchIntents is GET /v1/payment_intents/search, with the query language
// of charge search.
func (s *Sim) searchIntents(w http.ResponseWriter, r *http.Request) {
	s.serveSearch(w, r, func(q *searchQuery, apiKey string) searchResult {
		found := searchAll(q, apiKey, s.intents.list, (*paymentIntent).facts)
		return searchPage(q, found, func(pi *paymentIntent) any { return pi.render() }, "/v1/payment_intents/search")
	})
}
