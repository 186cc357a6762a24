package openapi

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// ErrSpec marks every error about the OpenAPI document (a missing file, a
// document that is not OpenAPI 3, no operation to take, a value two
// properties could hold), so the CLI can map it to exit code 2.
var ErrSpec = errors.New("bad OpenAPI document")

// spec is a loaded OpenAPI 3 document and the name errors give it.
type spec struct {
	file string
	doc  *openapi3.T
}

// fail is an error about the document at a JSON path (a pointer into the
// document, "#/paths/~1v1~1charges/post") and a line (0: unknown).
func (s *spec) fail(line int, ptr, format string, args ...any) error {
	return &yamlfile.FieldError{File: s.file, Line: line, Field: ptr, Msg: fmt.Sprintf(format, args...), Kind: ErrSpec}
}

// loadSpec reads an OpenAPI 3 document, JSON or YAML, recording where each
// element came from so that errors can name a line. $refs to other local
// files are followed; nothing is fetched from the network.
func loadSpec(file string) (*spec, error) {
	s := &spec{file: file}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, s.fail(0, "", "cannot read the OpenAPI document: %v", errors.Unwrap(err))
	}
	if m := swaggerRE.FindSubmatch(data); m != nil {
		return nil, s.fail(lineAt(data, m[0]), "#/swagger", "a Swagger %s document, not OpenAPI 3: convert it first (kin-openapi's openapi2conv, or swagger2openapi)", m[1])
	}
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	loader.IsExternalRefsAllowed = true
	loader.ReadFromURIFunc = openapi3.ReadFromFile
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		return nil, s.fail(0, "", "not an OpenAPI 3 document: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		return nil, s.fail(lineOf(doc.Origin, "openapi"), "#/openapi", "not an OpenAPI 3 document: expected openapi: 3.x at the top, got %q", doc.OpenAPI)
	}
	s.doc = doc
	return s, nil
}

var swaggerRE = regexp.MustCompile(`(?m)^[\s{]*"?swagger"?\s*:\s*"?([0-9.]+)`)

// lineAt is the 1-based line of the first occurrence of sub in data.
func lineAt(data, sub []byte) int {
	i := strings.Index(string(data), string(sub))
	return strings.Count(string(data[:max(i, 0)]), "\n") + 1
}

// lineOf is the line of field in a collection's origin, or of the
// collection's own key for field "".
func lineOf(o *openapi3.Origin, field string) int {
	if o == nil {
		return 0
	}
	if field != "" {
		if loc, ok := o.Fields.Lookup(field); ok {
			return loc.Line
		}
	}
	if o.Key != nil {
		return o.Key.Line
	}
	return 0
}

// pointer appends reference tokens to a JSON pointer, escaped (RFC 6901).
func pointer(base string, tokens ...string) string {
	for _, t := range tokens {
		base += "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(t)
	}
	return base
}

// operation is one method of one path, with the parameters it inherits
// from its path item merged in.
type operation struct {
	method, path string
	op           *openapi3.Operation
	params       []*openapi3.Parameter
	ptr          string
	keyHeader    string // the idempotency key header it declares, "" if none
}

func (o operation) line() int { return lineOf(o.op.Origin, "") }

// String names the operation as a list shows it: POST /v1/charges (PostCharges).
func (o operation) String() string {
	s := o.method + " " + o.path
	if o.op.OperationID != "" {
		s += " (" + o.op.OperationID + ")"
	}
	return s
}

// methodOrder lists methods as a list shows them, writes first.
var methodOrder = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, "QUERY"}

// operations lists every operation of the document, by path and method.
func (s *spec) operations() []operation {
	var out []operation
	if s.doc.Paths == nil {
		return nil
	}
	paths := s.doc.Paths.Keys()
	slices.Sort(paths)
	for _, p := range paths {
		item := s.doc.Paths.Value(p)
		ops := item.Operations()
		methods := slices.SortedFunc(func(yield func(string) bool) {
			for m := range ops {
				if !yield(m) {
					return
				}
			}
		}, func(a, b string) int { return methodRank(a) - methodRank(b) })
		for _, m := range methods {
			o := operation{method: strings.ToUpper(m), path: p, op: ops[m], ptr: pointer("#/paths", p, strings.ToLower(m))}
			o.params = mergeParams(item.Parameters, o.op.Parameters)
			for _, prm := range o.params {
				if prm.In == openapi3.ParameterInHeader && isKeyHeader(prm.Name) {
					o.keyHeader = prm.Name
				}
			}
			out = append(out, o)
		}
	}
	return out
}

func methodRank(m string) int {
	if i := slices.Index(methodOrder, strings.ToUpper(m)); i >= 0 {
		return i
	}
	return len(methodOrder)
}

// mergeParams is the path item's parameters overridden by the
// operation's of the same name and location.
func mergeParams(item, op openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	seen := map[string]bool{}
	for _, list := range []openapi3.Parameters{op, item} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				continue
			}
			k := ref.Value.In + " " + strings.ToLower(ref.Value.Name)
			if !seen[k] {
				seen[k] = true
				out = append(out, ref.Value)
			}
		}
	}
	return out
}

// isKeyHeader says whether a header carries an idempotency key:
// Idempotency-Key, X-Idempotency-Key, idempotency_key, IdempotencyKey,
// X-Idempotent-Key, in any case.
func isKeyHeader(name string) bool {
	n := strings.TrimPrefix(normal(name), "x")
	return n == "idempotencykey" || n == "idempotentkey"
}

// normal is a name lower-cased without separators: order_id, orderId and
// Order-ID are all "orderid".
func normal(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' || r == '.' {
			return -1
		}
		return r
	}, strings.ToLower(name))
}

// chooseOperation is the operation named by id, or else the one operation
// that declares an idempotency key header.
func (s *spec) chooseOperation(id string) (operation, error) {
	ops := s.operations()
	if id != "" {
		for _, o := range ops {
			if o.op.OperationID == id {
				return o, nil
			}
		}
		return operation{}, s.fail(lineOf(s.doc.Paths.Origin, ""), "#/paths", "--operation %s: no operation has that operationId; the document has %s", id, listOps(ops))
	}
	var keyed []operation
	for _, o := range ops {
		if o.keyHeader != "" {
			keyed = append(keyed, o)
		}
	}
	switch {
	case len(ops) == 0:
		return operation{}, s.fail(0, "#/paths", "the document has no operations")
	case len(keyed) == 0:
		return operation{}, s.fail(lineOf(s.doc.Paths.Origin, ""), "#/paths", "no operation declares an idempotency key header (a header parameter named Idempotency-Key or X-Idempotency-Key): name the charge operation with --operation, one of %s", listOps(ops))
	case len(keyed) > 1:
		return operation{}, s.fail(keyed[1].line(), keyed[1].ptr, "%d operations declare an idempotency key header: name the charge operation with --operation, one of %s", len(keyed), listOps(keyed))
	}
	return keyed[0], nil
}

// listOps names operations for an error, at most 20.
func listOps(ops []operation) string {
	var names []string
	for i, o := range ops {
		if i == 20 {
			names = append(names, fmt.Sprintf("and %d more", len(ops)-i))
			break
		}
		names = append(names, o.String())
	}
	return strings.Join(names, ", ")
}
