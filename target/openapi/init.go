package openapi

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/idemcheck/idemcheck/target"
)

// Options are what idemcheck init was asked.
type Options struct {
	// Spec is the OpenAPI 3 document (YAML or JSON); "" writes the
	// commented template.
	Spec string
	// Operation is the operationId of the charge operation; "" takes the
	// one operation that declares an idempotency key header.
	Operation string
	// Command is the command line that starts one replica, split as a
	// shell would (quotes, backslashes); "" leaves a placeholder.
	Command string
	// Name is the target's name; "" derives it from the document's title.
	Name string
	// Amount, Currency and OrderID name the property that holds each of
	// the payment's values (metadata.order_id or /metadata/order_id), in
	// the request body, the success answer, or both, where the document
	// has several candidates.
	Amount, Currency, OrderID string
	// Out is the file that will be written ("" for stdout). A relative
	// command that contains a slash (./bin/server, typed in WorkDir) is
	// moved to be relative to Out's folder, where the loader resolves it.
	Out string
	// WorkDir is where the command line was typed ("" = the current
	// directory).
	WorkDir string
}

// ErrCommand marks an Options.Command that does not split into words.
var ErrCommand = errors.New("--command")

// Result is a starter target file.
type Result struct {
	YAML []byte
	// Notes are what a reader should check before certifying: values
	// made up, fields the answer does not declare.
	Notes []string
}

// Init writes a starter target file as Options say, and checks that it
// loads (target.Parse): a file it returns always loads.
func Init(opts Options) (*Result, error) {
	start, err := startSection(opts)
	if err != nil {
		return nil, err
	}
	var res *Result
	if opts.Spec == "" {
		res = &Result{YAML: []byte(template(opts.Name, start))}
	} else if res, err = fromSpec(opts, start); err != nil {
		return nil, err
	}
	if _, err := target.Parse("init", res.YAML); err != nil {
		return nil, fmt.Errorf("init wrote a target file the loader refuses (a bug in idemcheck init): %w\n%s", err, res.YAML)
	}
	return res, nil
}

// startSection writes start:, from the command line or a placeholder.
func startSection(opts Options) (string, error) {
	var b strings.Builder
	b.WriteString("start:\n")
	if opts.Command == "" {
		b.WriteString("  command: ./your-server               # TODO: the program that runs one replica (relative to this file, or on PATH)\n")
		b.WriteString("  args: [\"--listen={{.ListenAddr}}\"]   # its arguments; every string under start is a template\n")
	} else {
		words, err := splitCommand(opts.Command)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrCommand, err)
		}
		cmd := relocate(words[0], opts.WorkDir, opts.Out)
		fmt.Fprintf(&b, "  command: %s\n", scalar(cmd))
		if len(words) > 1 {
			args := make([]string, len(words)-1)
			for i, a := range words[1:] {
				args[i] = flow(a)
			}
			fmt.Fprintf(&b, "  args: [%s]\n", strings.Join(args, ", "))
		}
	}
	b.WriteString(`  env:                                  # set for every replica; idemcheck fills the values
    LISTEN_ADDR: "{{.ListenAddr}}"
    DATABASE_URL: "{{.DatabaseURL}}"     # with needs: [postgres]; REDIS_URL: "{{.RedisURL}}" with redis, MYSQL_DSN: "{{.MySQLDSN}}" with mysql
    GATEWAY_URL: "{{.GatewayURL}}"       # the payment gateway (Stripe's /v1/charges and /v1/payment_intents)
    GATEWAY_API_KEY: "{{.GatewayAPIKey}}"
    IDEMPOTENCY_TTL: "{{.TTL}}"          # certify with a short test-mode TTL: see policy
needs: [postgres]                        # the stores your server keeps its keys in: postgres, redis, mysql, or [] for keys in memory
ready: {path: /healthz, timeout: 30s}    # a replica is ready when GET path answers 2xx
`)
	return b.String(), nil
}

// policySection is what a starter promises, in test mode.
const policySection = `# What the server promises. Certify with a short test-mode TTL (the server
# reads it from IDEMPOTENCY_TTL): late-retry waits multiples of it.
policy:
  ttl: 2s                 # a key deduplicates with its full answer this long after its first request
  retry_window: 20s       # clients may retry this late and still get the first answer
  recovery_window: 5s     # after faults heal, a crashed key converges within this
  max_wait: 1s            # a duplicate in flight is held at most this long before 409
tenants: [tenant_a, tenant_b]   # bearer tokens, one a tenant
`

// template is the commented starter written without a document.
func template(name, start string) string {
	return "# A target file: how idemcheck starts your server, how it speaks the charge\n" +
		"# protocol, and what it promises (docs/targets.md explains every field).\n" +
		"# Written by `idemcheck init`; fill in start, check protocol, then run\n" +
		"# idemcheck doctor --target <this file>.\n" +
		"name: " + cmp.Or(name, "my-server") + "\n" +
		"description: my payment service\n" + start +
		`protocol:                                # the reference protocol's defaults; change what your server does differently
  path: /v1/charges                      # may hold {order_id}, {amount}, {currency}
  encoding: json                         # json or form (application/x-www-form-urlencoded, Stripe's bracket keys)
  key_header: Idempotency-Key
  body:                                  # the request as a template of the payment's values
    amount: "{{.Amount}}"                # minor units, sent as a number
    currency: "{{.Currency}}"            # usd
    order_id: "{{.OrderID}}"
    description: "{{.Description}}"
    # customer: cus_123                  # a static field your server requires, sent as written
  fields:                                # where a 2xx JSON answer keeps these (a name, or a JSON pointer such as /metadata/order_id)
    id: id
    status: status
    amount: amount
    currency: currency
    order_id: order_id
` + policySection
}

// fromSpec writes a target from the charge operation of a document.
func fromSpec(opts Options, start string) (*Result, error) {
	s, err := loadSpec(opts.Spec)
	if err != nil {
		return nil, err
	}
	op, err := s.chooseOperation(opts.Operation)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if op.method != "POST" {
		res.Notes = append(res.Notes, fmt.Sprintf("%s is a %s: idemcheck sends every charge as a POST", op, op.method))
	}
	req, err := s.requestBody(op)
	if err != nil {
		return nil, err
	}
	ans := s.successAnswer(op)
	overrides := map[string][]string{"amount": flagPath(opts.Amount), "currency": flagPath(opts.Currency), "order_id": flagPath(opts.OrderID)}
	path, inPath, err := s.chargePath(op, overrides["order_id"])
	if err != nil {
		return nil, err
	}
	b := &bodyBuilder{places: map[string]place{}}
	fields, defaulted := map[string]string{}, map[string]bool{}
	for _, r := range roles {
		reqP, okReq, err := s.pick(r, req.props, overrides[r.key], "request body", req.ptr, req.line)
		if err != nil {
			return nil, err
		}
		if okReq {
			b.places[reqP.dotted()] = place(r.place)
		} else if !inPath[r.key] {
			return nil, s.fail(req.line, req.ptr, "no property of the request body holds the %s: expected %s; name it with %s PATH (metadata.order_id)", r.what, r.hint, r.flag)
		}
		ansP, okAns, err := s.pick(r, ans.props, overrides[r.key], "success answer", ans.ptr, ans.line)
		if err != nil {
			return nil, err
		}
		fields[r.key] = r.key
		if okAns {
			fields[r.key] = ansP.field()
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("the success answer (%s) declares no %s: protocol.fields.%s is %q, the default; check it", ans.ptr, r.what, r.key, r.key))
			defaulted[r.key] = true
		}
		if o := overrides[r.key]; o != nil && !matches(o, reqP, okReq) && !matches(o, ansP, okAns) && !inPath[r.key] {
			return nil, s.fail(req.line, req.ptr, "%s %s: no such property in the request body, nor in the success answer (%s)", r.flag, strings.Join(o, "."), ans.ptr)
		}
	}
	for _, k := range []string{"id", "status"} {
		fields[k] = k
		if p, ok := answerField(ans.props, k); ok {
			fields[k] = p.field()
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("the success answer (%s) declares no %s: protocol.fields.%s is %q, the default; check it", ans.ptr, k, k, k))
			defaulted[k] = true
		}
	}
	body := b.object(req.schema, req.ptr, nil, req.example)
	for _, g := range b.guessed {
		res.Notes = append(res.Notes, fmt.Sprintf("protocol.body.%s: the document gives no example, enum or default for this required property: the file sends a made-up value", g))
	}
	auth, note := s.auth(op)
	if note != "" {
		res.Notes = append(res.Notes, note)
	}
	name := cmp.Or(opts.Name, slug(s.doc.Info), "my-server")
	res.YAML = []byte(s.write(name, start, op, path, req.encoding, auth, body, fields, defaulted))
	return res, nil
}

// matches says whether a flag's path is the property picked.
func matches(path []string, p prop, ok bool) bool { return ok && slices.Equal(path, p.path) }

// body is a request or answer schema and its properties.
type body struct {
	schema   *openapi3.SchemaRef
	ptr      string
	line     int
	encoding string
	example  any
	props    []prop
}

// requestBody is the operation's JSON or form request schema (JSON when
// it offers both).
func (s *spec) requestBody(op operation) (body, error) {
	ptr := pointer(op.ptr, "requestBody")
	rb := op.op.RequestBody
	if rb == nil || rb.Value == nil {
		return body{}, s.fail(op.line(), op.ptr, "%s has no requestBody: a charge's amount, currency and order go in a JSON or form body", op)
	}
	if strings.HasPrefix(rb.Ref, "#/") {
		ptr = rb.Ref
	}
	var types []string
	for ct := range rb.Value.Content {
		types = append(types, ct)
	}
	slices.Sort(types)
	for _, want := range []string{target.EncodingJSON, target.EncodingForm} {
		for _, ct := range types {
			if encodingOf(ct) != want {
				continue
			}
			mt := rb.Value.Content[ct]
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				return body{}, s.fail(lineOf(rb.Value.Origin, ""), pointer(ptr, "content", ct), "no schema: idemcheck builds the body from the request's schema")
			}
			b := body{schema: mt.Schema, ptr: pointer(ptr, "content", ct, "schema"), encoding: want, example: mt.Example}
			if strings.HasPrefix(mt.Schema.Ref, "#/") {
				b.ptr = mt.Schema.Ref
			}
			b.line = schemaLine(mt)
			b.props = props(mt.Schema, b.ptr)
			return b, nil
		}
	}
	return body{}, s.fail(lineOf(rb.Value.Origin, ""), pointer(ptr, "content"), "the request body is %s: idemcheck sends application/json or application/x-www-form-urlencoded", strings.Join(types, ", "))
}

// schemaLine is the line of a media type's schema: the referenced
// schema's, or the line of its schema: key (an inline schema's origin
// names its media type's key).
func schemaLine(mt *openapi3.MediaType) int {
	if strings.HasPrefix(mt.Schema.Ref, "#/") {
		return lineOf(mt.Schema.Value.Origin, "")
	}
	return cmp.Or(lineOf(mt.Origin, "schema"), lineOf(mt.Schema.Value.Origin, ""))
}

// encodingOf is a content type's protocol.encoding, or "".
func encodingOf(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
		return ""
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return target.EncodingJSON
	case mt == "application/x-www-form-urlencoded":
		return target.EncodingForm
	}
	return ""
}

// successAnswer is the schema of the operation's first 2xx JSON answer
// (200, 201, 202, then 2XX); an operation without one has no properties.
func (s *spec) successAnswer(op operation) body {
	b := body{ptr: pointer(op.ptr, "responses")}
	if op.op.Responses == nil {
		return b
	}
	codes := op.op.Responses.Keys()
	slices.SortFunc(codes, func(x, y string) int { return cmp.Compare(strings.ToUpper(x), strings.ToUpper(y)) })
	for _, code := range codes {
		r := op.op.Responses.Value(code)
		if !strings.HasPrefix(code, "2") || r == nil || r.Value == nil {
			continue
		}
		for ct, mt := range r.Value.Content {
			if encodingOf(ct) != target.EncodingJSON || mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			b.schema, b.ptr = mt.Schema, pointer(op.ptr, "responses", code, "content", ct, "schema")
			if strings.HasPrefix(mt.Schema.Ref, "#/") {
				b.ptr = mt.Schema.Ref
			}
			b.line = schemaLine(mt)
			b.props = props(mt.Schema, b.ptr)
			return b
		}
	}
	return b
}

// auth is how the operation takes its credentials, as protocol lines:
// none for a bearer token (the default), auth_header and auth_scheme:
// none for an API key in a header. Another scheme is a note: idemcheck
// sends each tenant's token in a header.
func (s *spec) auth(op operation) (string, string) {
	reqs := op.op.Security
	if reqs == nil {
		reqs = &s.doc.Security
	}
	if len(*reqs) == 0 || s.doc.Components == nil {
		return "", ""
	}
	names := slices.Sorted(maps.Keys((*reqs)[0]))
	for _, n := range names {
		ref := s.doc.Components.SecuritySchemes[n]
		if ref == nil || ref.Value == nil {
			continue
		}
		switch sc := ref.Value; {
		case sc.Type == "http" && strings.EqualFold(sc.Scheme, "bearer"):
			return "", ""
		case sc.Type == "apiKey" && sc.In == "header":
			return fmt.Sprintf("  auth_header: %s                      # the tenant's token, sent bare\n  auth_scheme: none\n", sc.Name), ""
		}
	}
	return "", fmt.Sprintf("%s takes %s: idemcheck sends each tenant's token as a bearer token (protocol.auth_header, protocol.auth_scheme)", op, strings.Join(names, ", "))
}

// answerField finds an answer's id or status: the top-level property of
// that name, else the shallowest.
func answerField(all []prop, name string) (prop, bool) {
	var best prop
	found := false
	for _, p := range all {
		if normal(p.name()) == name && (!found || len(p.path) < len(best.path)) {
			best, found = p, true
		}
	}
	return best, found
}

var pathParamRE = regexp.MustCompile(`\{([^{}]+)\}`)

// chargePath is the operation's path with a parameter that holds the
// order (or the amount, or the currency) as the loader's placeholder, and
// every other parameter filled with the document's example. inPath says
// which of the payment's values the path holds.
func (s *spec) chargePath(op operation, orderFlag []string) (string, map[string]bool, error) {
	inPath := map[string]bool{}
	var err error
	path := pathParamRE.ReplaceAllStringFunc(op.path, func(tok string) string {
		name := tok[1 : len(tok)-1]
		n := normal(name)
		switch {
		case slices.Contains(orderNames, n) || (len(orderFlag) == 1 && orderFlag[0] == name):
			inPath["order_id"] = true
			return "{order_id}"
		case slices.Contains(amountNames, n):
			inPath["amount"] = true
			return "{amount}"
		case slices.Contains(currencyNames, n):
			inPath["currency"] = true
			return "{currency}"
		}
		for _, prm := range op.params {
			if prm.In == openapi3.ParameterInPath && prm.Name == name {
				if v, ok := paramValue(prm); ok {
					return url.PathEscape(v)
				}
			}
		}
		if err == nil {
			err = s.fail(op.line(), op.ptr, "path parameter {%s} is none of the payment's values and has no example, enum or default: add one to the document, or edit protocol.path", name)
		}
		return tok
	})
	return path, inPath, err
}

// paramValue is a parameter's example, first enum value or default.
func paramValue(p *openapi3.Parameter) (string, bool) {
	vals := []any{p.Example}
	if p.Schema != nil && p.Schema.Value != nil {
		sc := p.Schema.Value
		vals = append(vals, sc.Example, sc.Default)
		if len(sc.Enum) > 0 {
			vals = append(vals, sc.Enum[0])
		}
	}
	for _, v := range vals {
		if v != nil {
			return strings.Trim(flow(v), `"`), true
		}
	}
	return "", false
}

// slug is a target name from the document's title: lower-case letters,
// digits and dashes.
func slug(info *openapi3.Info) string {
	if info == nil {
		return ""
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(info.Title) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return strings.TrimRight(b.String()[:min(b.Len(), 63)], "-")
}

// write assembles the target file.
func (s *spec) write(name, start string, op operation, path, encoding, auth string, body object, fields map[string]string, defaulted map[string]bool) string {
	var w strings.Builder
	fmt.Fprintf(&w, "# A target file written by `idemcheck init` from %s:\n", filepath.Base(s.file))
	fmt.Fprintf(&w, "# %s, at %s.\n", op, op.ptr)
	w.WriteString("# Check what it guessed (protocol), fill in start, then run\n")
	w.WriteString("# idemcheck doctor --target <this file>. docs/targets.md explains every field.\n")
	fmt.Fprintf(&w, "name: %s\n", name)
	fmt.Fprintf(&w, "description: %s\n", scalar(strings.TrimSpace(cmp.Or(op.op.Summary, op.String()))))
	w.WriteString(start)
	w.WriteString("protocol:\n")
	fmt.Fprintf(&w, "  path: %s\n", pathScalar(path))
	fmt.Fprintf(&w, "  encoding: %s\n", encoding)
	fmt.Fprintf(&w, "  key_header: %s\n", cmp.Or(op.keyHeader, "Idempotency-Key"))
	w.WriteString(auth)
	w.WriteString("  body:                                  # required properties with the document's values; the payment's as placeholders\n")
	writeObject(&w, body, 4)
	w.WriteString("  fields:                                # where the 2xx answer keeps these\n")
	for _, k := range []string{"id", "status", "amount", "currency", "order_id"} {
		note := ""
		if defaulted[k] {
			note = comment("the answer's schema declares none: the default; check it")
		}
		fmt.Fprintf(&w, "    %s: %s%s\n", k, scalar(fields[k]), note)
	}
	w.WriteString(policySection)
	return w.String()
}

// pathScalar writes protocol.path plain when its placeholders are the
// only braces in it, as the examples write it.
func pathScalar(p string) string {
	if scalar(pathParamRE.ReplaceAllString(p, "x")) == pathParamRE.ReplaceAllString(p, "x") {
		return p
	}
	return strconv.Quote(p)
}

// relocate makes a relative command typed in workDir relative to the
// folder of out, the written file, where the loader resolves it. A bare
// name (looked up in PATH) and an absolute path stay; so does any command
// written to stdout. A path that would climb more than one folder is
// written absolute.
func relocate(cmd, workDir, out string) string {
	if out == "" || filepath.IsAbs(cmd) || !strings.Contains(cmd, "/") {
		return cmd
	}
	if workDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return cmd
		}
		workDir = wd
	}
	outDir := filepath.Dir(filepath.Join(workDir, out))
	if filepath.IsAbs(out) {
		outDir = filepath.Dir(out)
	}
	abs := filepath.Join(workDir, cmd)
	rel, err := filepath.Rel(outDir, abs)
	if err != nil || strings.HasPrefix(rel, ".."+string(filepath.Separator)+"..") {
		return abs
	}
	if !strings.Contains(rel, string(filepath.Separator)) {
		rel = "." + string(filepath.Separator) + rel
	}
	return rel
}

// splitCommand splits a command line as a POSIX shell would: words
// separated by blanks, '…' taken literally, "…" with \" \\ \$ \` escapes,
// a backslash outside quotes escaping the next character.
func splitCommand(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unterminated \" in %q", line)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("expected the command that starts one replica, got %q", line)
	}
	return words, nil
}
