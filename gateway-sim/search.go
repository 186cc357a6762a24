package gatewaysim

import (
	"strconv"
	"strings"
	"time"
)

// searchParams is the parameter set of GET /v1/charges/search and
// GET /v1/payment_intents/search.
var searchParams = map[string]paramShape{"query": scalar, "limit": scalar, "page": scalar, "expand": list}

// clause is one "field:value" term of a Stripe search query.
type clause struct {
	field string // "metadata", "status", "currency", "amount", "customer"
	key   string // the metadata key
	value string
}

// searchQuery is a parsed search: clauses joined by AND, and a page.
type searchQuery struct {
	clauses []clause
	limit   int
	offset  int
}

// searchFields are the search fields the simulator supports, for charges
// and PaymentIntents alike; they cover reconciliation by order, which is
// what a payment service searches for.
var searchFields = map[string]bool{"metadata": true, "status": true, "currency": true, "amount": true, "customer": true}

func parseSearchParams(rawQuery string) (*searchQuery, error) {
	params, err := parseFormParams(rawQuery)
	if err == nil {
		err = checkShapes(params, searchParams)
	}
	if err != nil {
		return nil, err
	}
	q := &searchQuery{limit: 10}
	for _, step := range []func([]param, *searchQuery) error{readQuery, readLimit, readPage} {
		if err := step(params, q); err != nil {
			return nil, err
		}
	}
	return q, nil
}

func readQuery(params []param, q *searchQuery) error {
	p, ok := find(params, "query")
	if !ok || strings.TrimSpace(p.value) == "" {
		return invalidParam("query", "parameter_missing", "Missing required param: query.")
	}
	clauses, err := parseQuery(p.value)
	q.clauses = clauses
	return err
}

func readLimit(params []param, q *searchQuery) error {
	p, ok := find(params, "limit")
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(p.value)
	if err != nil || n < 1 || n > 100 {
		return invalidParam("limit", "parameter_invalid_integer", "Invalid limit: must be an integer from 1 to 100.")
	}
	q.limit = n
	return nil
}

func readPage(params []param, q *searchQuery) error {
	p, ok := find(params, "page")
	if !ok || p.value == "" {
		return nil
	}
	n, ok := parsePageToken(p.value)
	if !ok {
		return invalidParam("page", "parameter_invalid_string", "Invalid page: "+p.value)
	}
	q.offset = n
	return nil
}

// parseQuery parses the subset of Stripe's search query language the
// simulator supports: field:value clauses joined by AND, with values quoted
// in ' or ", e.g. metadata['order_id']:'ord_1' AND status:'succeeded'.
func parseQuery(text string) ([]clause, error) {
	sc := &scanner{text: text}
	var out []clause
	for {
		c, err := sc.clause()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
		if sc.skipSpace(); sc.done() {
			return out, nil
		}
		if !sc.keyword("AND") {
			return nil, queryError("expected AND at offset " + strconv.Itoa(sc.pos) + " (OR and other operators are not supported by the simulator)")
		}
	}
}

func queryError(msg string) error {
	return invalidParam("query", "search_query_invalid", "Invalid search query: "+msg+".")
}

// scanner walks a search query.
type scanner struct {
	text string
	pos  int
}

func (sc *scanner) done() bool { return sc.pos >= len(sc.text) }

func (sc *scanner) skipSpace() {
	for !sc.done() && (sc.text[sc.pos] == ' ' || sc.text[sc.pos] == '\t') {
		sc.pos++
	}
}

func (sc *scanner) peek(s string) bool { return strings.HasPrefix(sc.text[sc.pos:], s) }

func (sc *scanner) keyword(k string) bool {
	if !strings.EqualFold(sc.text[sc.pos:min(sc.pos+len(k), len(sc.text))], k) {
		return false
	}
	sc.pos += len(k)
	return true
}

func (sc *scanner) clause() (clause, error) {
	sc.skipSpace()
	var c clause
	c.field = sc.ident()
	if !searchFields[c.field] {
		return c, queryError("unsupported field " + strconv.Quote(c.field))
	}
	if c.field == "metadata" {
		key, err := sc.bracketed()
		if err != nil {
			return c, err
		}
		c.key = key
	}
	if !sc.peek(":") {
		return c, queryError("expected ':' after " + c.field + " (only equality is supported)")
	}
	sc.pos++
	v, err := sc.value()
	c.value = v
	return c, err
}

func (sc *scanner) ident() string {
	start := sc.pos
	for !sc.done() && (sc.text[sc.pos] == '_' || sc.text[sc.pos] >= 'a' && sc.text[sc.pos] <= 'z') {
		sc.pos++
	}
	return sc.text[start:sc.pos]
}

func (sc *scanner) bracketed() (string, error) {
	if !sc.peek("[") {
		return "", queryError("expected metadata['key']")
	}
	sc.pos++
	key, err := sc.quoted()
	if err != nil {
		return "", err
	}
	if !sc.peek("]") {
		return "", queryError("expected ] after the metadata key")
	}
	sc.pos++
	return key, nil
}

func (sc *scanner) value() (string, error) {
	if sc.peek("'") || sc.peek(`"`) {
		return sc.quoted()
	}
	start := sc.pos
	for !sc.done() && sc.text[sc.pos] != ' ' && sc.text[sc.pos] != '\t' {
		sc.pos++
	}
	if start == sc.pos {
		return "", queryError("missing value")
	}
	return sc.text[start:sc.pos], nil
}

// quoted reads a '...' or "..." string; a backslash escapes the next byte.
func (sc *scanner) quoted() (string, error) {
	if sc.done() || (sc.text[sc.pos] != '\'' && sc.text[sc.pos] != '"') {
		return "", queryError("expected a quoted string at offset " + strconv.Itoa(sc.pos))
	}
	quote := sc.text[sc.pos]
	var b strings.Builder
	for sc.pos++; !sc.done(); sc.pos++ {
		switch ch := sc.text[sc.pos]; {
		case ch == quote:
			sc.pos++
			return b.String(), nil
		case ch == '\\' && sc.pos+1 < len(sc.text):
			sc.pos++
			b.WriteByte(sc.text[sc.pos])
		default:
			b.WriteByte(ch)
		}
	}
	return "", queryError("unterminated string")
}

// facts is what every payment resource (a charge, a PaymentIntent) states
// about its payment: whose it is, how much, for whom and in what state.
// One search query language reads it for every search endpoint, and the
// resources render their shared fields from it.
type facts struct {
	id, apiKey, status, currency, customer, description string
	amount                                              int64
	metadata                                            map[string]string
	created                                             time.Time
}

func (c clause) matches(r facts) bool {
	switch c.field {
	case "metadata":
		v, ok := r.metadata[c.key]
		return ok && v == c.value
	case "status":
		return r.status == c.value
	case "currency":
		return strings.EqualFold(r.currency, c.value)
	case "amount":
		return strconv.FormatInt(r.amount, 10) == c.value
	case "customer":
		return r.customer == c.value
	}
	return false
}

func (q *searchQuery) matchesAll(r facts) bool {
	for _, cl := range q.clauses {
		if !cl.matches(r) {
			return false
		}
	}
	return true
}

// searchAll returns the API key's matching items, newest first; view
// reads an item's facts.
func searchAll[T any](q *searchQuery, apiKey string, items []T, view func(T) facts) []T {
	var out []T
	for i := len(items) - 1; i >= 0; i-- {
		if r := view(items[i]); r.apiKey == apiKey && q.matchesAll(r) {
			out = append(out, items[i])
		}
	}
	return out
}

// searchPage cuts one page out of the results, rendered by render, and
// links the next one.
func searchPage[T any](q *searchQuery, found []T, render func(T) any, url string) searchResult {
	res := searchResult{Object: "search_result", Data: []any{}, URL: url}
	start := min(q.offset, len(found))
	end := min(start+q.limit, len(found))
	for _, item := range found[start:end] {
		res.Data = append(res.Data, render(item))
	}
	if end < len(found) {
		next := pageToken(end)
		res.HasMore, res.NextPage = true, &next
	}
	return res
}
