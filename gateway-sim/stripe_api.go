package gatewaysim

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// apiKeyOf reads the secret key from "Authorization: Bearer sk_..." (what
// stripe-go sends) or from HTTP basic auth's user name (what curl -u sends).
func apiKeyOf(r *http.Request) (string, error) {
	scheme, cred, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	cred = strings.TrimSpace(cred)
	var key string
	switch strings.ToLower(scheme) {
	case "bearer":
		key = cred
	case "basic":
		key = basicUser(cred)
	}
	if key == "" || strings.ContainsAny(key, " \t") {
		return "", noAPIKey()
	}
	return key, nil
}

func basicUser(cred string) string {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		return ""
	}
	user, _, _ := strings.Cut(string(raw), ":")
	return user
}

// asAPIError passes Stripe errors through and turns anything else into a
// 500: a bug in the simulator, never a verdict about the client.
func asAPIError(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	return gatewayFailed()
}

// getCharge is GET /v1/charges/{id}.
func (s *Sim) getCharge(w http.ResponseWriter, r *http.Request) {
	s.serveGet(w, r, func(apiKey, id string) (any, *apiError) {
		c, ok := s.ledger.get(id)
		if !ok || c.APIKey != apiKey {
			return nil, notFound("resource_missing", "id", "No such charge: '"+id+"'")
		}
		return renderCharge(c), nil
	})
}

// serveGet answers GET /v1/{resources}/{id} with what find (called under
// s.mu) renders. Resources belong to the API key that made them: another
// key gets 404, as another Stripe account would.
func (s *Sim) serveGet(w http.ResponseWriter, r *http.Request, find func(apiKey, id string) (any, *apiError)) {
	apiKey, err := apiKeyOf(r)
	if err != nil {
		s.write(w, nil, errorResponse(asAPIError(err)))
		return
	}
	s.mu.Lock()
	obj, apiErr := find(apiKey, r.PathValue("id"))
	s.mu.Unlock()
	if apiErr != nil {
		s.write(w, nil, errorResponse(apiErr))
		return
	}
	s.write(w, nil, jsonResponse(http.StatusOK, obj))
}

// searchCharges is GET /v1/charges/search.
func (s *Sim) searchCharges(w http.ResponseWriter, r *http.Request) {
	s.serveSearch(w, r, func(q *searchQuery, apiKey string) searchResult {
		found := searchAll(q, apiKey, s.ledger.charges, Charge.facts)
		return searchPage(q, found, func(c Charge) any { return renderCharge(c) }, "/v1/charges/search")
	})
}

// serveSearch answers a search with the query subset of search.go, newest
// first, paginated with limit and page as Stripe does; run (called under
// s.mu) searches one kind of resource.
func (s *Sim) serveSearch(w http.ResponseWriter, r *http.Request, run func(q *searchQuery, apiKey string) searchResult) {
	resp, err := s.search(r, run)
	if err != nil {
		resp = errorResponse(asAPIError(err))
	}
	s.write(w, nil, resp)
}

func (s *Sim) search(r *http.Request, run func(q *searchQuery, apiKey string) searchResult) (*response, error) {
	apiKey, err := apiKeyOf(r)
	if err != nil {
		return nil, err
	}
	q, err := parseSearchParams(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	res := run(q, apiKey)
	s.mu.Unlock()
	return jsonResponse(http.StatusOK, res), nil
}

func (s *Sim) unknownURL(w http.ResponseWriter, r *http.Request) {
	msg := fmt.Sprintf("Unrecognized request URL (%s: %s).", r.Method, r.URL.Path)
	s.write(w, nil, errorResponse(notFound("", "", msg)))
}

// pageToken and parsePageToken encode a search page as an offset.
func pageToken(offset int) string { return "page_" + strconv.Itoa(offset) }

func parsePageToken(tok string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(tok, "page_"))
	return n, err == nil && strings.HasPrefix(tok, "page_") && n >= 0
}
