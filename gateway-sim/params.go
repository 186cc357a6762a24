package gatewaysim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// maxBody bounds a request body; a charge is a few hundred bytes.
const maxBody = 1 << 20

// param is one request parameter with its bracket path split out:
// metadata[order_id]=ord_1 is {path: [metadata order_id], value: ord_1}.
// Form bodies and JSON bodies both become params, so one validator and one
// fingerprint serve both encodings.
type param struct {
	path   []string
	value  string
	number bool // a JSON number, not a string
}

// name is the parameter's Stripe spelling, used in error messages.
func (p param) name() string { return formatKey(p.path) }

func formatKey(path []string) string {
	var b strings.Builder
	b.WriteString(path[0])
	for _, part := range path[1:] {
		b.WriteString("[" + part + "]")
	}
	return b.String()
}

// readParams parses a POST body as JSON when the content type says so and as
// form encoding (what stripe-go and curl -d send) otherwise.
func readParams(w http.ResponseWriter, r *http.Request) ([]param, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, invalidRequest(fmt.Sprintf("Could not read the request body: %v.", err))
	}
	if isJSON(r.Header.Get("Content-Type")) {
		return parseJSONParams(body)
	}
	return parseFormParams(string(body))
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// parseFormParams parses application/x-www-form-urlencoded text pair by
// pair, so an encoding error names the parameter it is in.
func parseFormParams(body string) ([]param, error) {
	var out []param
	for _, pair := range strings.Split(body, "&") {
		if pair == "" {
			continue
		}
		p, err := parseFormPair(pair)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parseFormPair(pair string) (param, error) {
	rawKey, rawValue, _ := strings.Cut(pair, "=")
	key, err := url.QueryUnescape(rawKey)
	if err != nil {
		return param{}, invalidParam(rawKey, "parameter_invalid_string", "Invalid URL encoding in parameter name: "+rawKey)
	}
	value, err := url.QueryUnescape(rawValue)
	if err != nil {
		return param{}, invalidParam(key, "parameter_invalid_string", "Invalid URL encoding in the value of "+key+".")
	}
	path, err := splitKey(key)
	if err != nil {
		return param{}, err
	}
	return param{path: path, value: value}, nil
}

// splitKey splits "a[b][c]" into [a b c]; "expand[]" gives [expand ""].
func splitKey(key string) ([]string, error) {
	bad := invalidParam(key, "parameter_unknown", "Invalid parameter name: "+key)
	head, rest, _ := strings.Cut(key, "[")
	if head == "" || strings.Contains(head, "]") {
		return nil, bad
	}
	path := []string{head}
	if rest == "" && !strings.Contains(key, "[") {
		return path, nil
	}
	for _, seg := range strings.Split("["+rest, "[")[1:] {
		inner, ok := strings.CutSuffix(seg, "]")
		if !ok || strings.Contains(inner, "]") {
			return nil, bad
		}
		path = append(path, inner)
	}
	return path, nil
}

// parseJSONParams flattens a JSON object into params; nested objects become
// bracket paths exactly as their form encoding would.
func parseJSONParams(body []byte) ([]param, error) {
	var top map[string]any
	if err := decodeJSON(body, &top); err != nil {
		return nil, invalidRequest("Invalid JSON body: " + err.Error() + ".")
	}
	if top == nil {
		return nil, invalidRequest("Invalid JSON body: the body must be a JSON object.")
	}
	var out []param
	flattenJSON(nil, top, &out)
	return out, nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as written.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

func flattenJSON(path []string, v any, out *[]param) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			flattenJSON(appendPath(path, k), v[k], out)
		}
	case []any:
		for i, e := range v {
			flattenJSON(appendPath(path, fmt.Sprint(i)), e, out)
		}
	case json.Number:
		*out = append(*out, param{path: path, value: v.String(), number: true})
	case string:
		*out = append(*out, param{path: path, value: v})
	case bool:
		*out = append(*out, param{path: path, value: fmt.Sprint(v)})
	case nil:
		*out = append(*out, param{path: path}) // Stripe: an empty value unsets
	}
}

func appendPath(path []string, seg string) []string {
	return append(path[:len(path):len(path)], seg)
}

// fingerprint identifies a request's parameters independently of encoding
// and order: the same charge sent as form or as JSON, in any key order, is
// the same request for idempotency.
func fingerprint(method, route string, params []param) string {
	lines := make([]string, len(params))
	for i, p := range params {
		b, _ := json.Marshal(append(append([]string(nil), p.path...), p.value))
		lines[i] = string(b)
	}
	sort.Strings(lines)
	return method + " " + route + "\n" + strings.Join(lines, "\n")
}
