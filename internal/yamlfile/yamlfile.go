// Package yamlfile decodes the project's YAML files (targets, incidents)
// strictly and reports every error as file:line: field: what was expected.
// It imports no idemcheck package; target and scenarios use it.
package yamlfile

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// FieldError names the place in a file that is wrong and what was expected
// there. Its Error is "file:line: field: message". Kind is the sentinel it
// unwraps to, so callers can tell a bad target from a bad incident file.
type FieldError struct {
	File  string
	Line  int // 0 when the field is absent from the file
	Field string
	Msg   string
	Kind  error
}

func (e *FieldError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
}

// Unwrap returns the error's kind.
func (e *FieldError) Unwrap() error { return e.Kind }

// Bad is a FieldError for a field, with no position yet: Locate fills it.
func Bad(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Decode strictly decodes data into v: unknown fields, wrong types, bad
// durations and YAML tags are errors with file and line.
func Decode(name string, data []byte, v any, kind error) error {
	if !utf8.Valid(data) {
		return &FieldError{File: name, Line: firstInvalidLine(data), Kind: kind, Msg: "expected UTF-8 text (YAML is Unicode): this line holds a byte that is not"}
	}
	if line, tag := firstTag(data); line > 0 {
		return &FieldError{File: name, Line: line, Kind: kind,
			Msg: fmt.Sprintf("unexpected YAML tag %s: idemcheck files hold plain values (quote a string that starts with !)", tag)}
	}
	if err := yaml.UnmarshalWithOptions(data, v, yaml.Strict()); err != nil {
		return decodeError(name, data, err, kind)
	}
	return nil
}

// firstInvalidLine is the line of data's first byte that is not UTF-8.
func firstInvalidLine(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[size:]
	}
	return line
}

// firstTag finds the first YAML tag (!0, !!str) in data. Our files need
// none, and goccy/go-yaml v1.19.2 panics on a tag over a scalar where
// a list is expected (expect: !0 …; goccy/go-yaml#735, fixed after that
// release by #862), so Decode refuses tags before decoding.
func firstTag(data []byte) (line int, tag string) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return 0, ""
	}
	for _, doc := range file.Docs {
		ast.Walk(visitorFunc(func(n ast.Node) bool {
			if t, ok := n.(*ast.TagNode); ok && line == 0 {
				line, tag = t.GetToken().Position.Line, t.Start.Value
			}
			return line == 0
		}), doc)
	}
	return line, tag
}

// Locate fills in File, Line and Kind of a *FieldError returned by a
// validation, by finding its Field in data. Other errors pass unchanged.
func Locate(name string, data []byte, err error, kind error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		file, _ := parser.ParseBytes(data, 0)
		fe.File, fe.Line, fe.Kind = name, lineOf(file, fe.Field), kind
	}
	return err
}

func decodeError(name string, data []byte, err error, kind error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		tk := ye.GetToken()
		return &FieldError{File: name, Line: tk.Position.Line, Msg: ye.GetMessage(), Kind: kind}
	}
	if line, field := findBadDuration(data); line > 0 {
		return &FieldError{File: name, Line: line, Field: field, Kind: kind, Msg: fmt.Sprintf("expected a duration such as 500ms, 30s or 24h: %v", err)}
	}
	return &FieldError{File: name, Msg: err.Error(), Kind: kind}
}

// lineOf finds the line of a dotted field path ("policy.ttl",
// "start.args[1]") in the parsed file, 0 when it is not there.
func lineOf(file *ast.File, field string) int {
	if file == nil || field == "" {
		return 0
	}
	for f := field; f != ""; f = parent(f) {
		p, err := yaml.PathString("$." + f)
		if err != nil {
			continue
		}
		if n, err := p.FilterFile(file); err == nil && n != nil {
			return nodeLine(n, f)
		}
	}
	return 0
}

// nodeLine is the line of n. A block mapping's first token is on the line
// after its key (a missing field reported at its parent, or a mapping
// that is itself the field: protocol.body): the key's line is the one a
// reader wants. A mapping that is a list item (steps[0]) starts on its
// dash's line, which is already the right one.
func nodeLine(n ast.Node, field string) int {
	line := n.GetToken().Position.Line
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && line > 1 && !strings.HasSuffix(field, "]") {
		return line - 1
	}
	return line
}

func parent(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}

// durationFields are the keys whose values must parse as time.Duration.
var durationFields = map[string]bool{"ttl": true, "retry_window": true, "recovery_window": true, "max_wait": true, "timeout": true, "for": true, "provider_key_lifetime": true}

// findBadDuration locates the first duration value that does not parse:
// the YAML decoder reports such errors without a position.
func findBadDuration(data []byte) (line int, field string) {
	file, err := parser.ParseBytes(data, 0)
	if err != nil || len(file.Docs) == 0 {
		return 0, ""
	}
	var found *ast.MappingValueNode
	ast.Walk(visitorFunc(func(n ast.Node) bool {
		mv, ok := n.(*ast.MappingValueNode)
		if !ok || found != nil {
			return found == nil
		}
		if durationFields[mv.Key.String()] {
			if _, err := time.ParseDuration(scalarText(mv.Value)); err != nil {
				found = mv
			}
		}
		return true
	}), file.Docs[0])
	if found == nil {
		return 0, ""
	}
	return found.Value.GetToken().Position.Line, strings.TrimPrefix(found.GetPath(), "$.")
}

// scalarText is the value of a scalar node as the decoder reads it: a
// quoted string without its quotes, and nothing trimmed from a plain one
// (00h" is not 00h).
func scalarText(n ast.Node) string {
	if s, ok := n.(*ast.StringNode); ok {
		return s.Value
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

type visitorFunc func(ast.Node) bool

func (f visitorFunc) Visit(n ast.Node) ast.Visitor {
	if f(n) {
		return f
	}
	return nil
}
