package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// locateJSON places a decoding error of a JSON file: "name:line: msg".
// A syntax or type error carries its byte offset; an error a field's own
// decoder returned (a bad duration or time) carries none, and is placed
// at the first value whose text it quotes (leafLine). Either way the
// error still unwraps to what json returned.
func locateJSON(name string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%d: %w", name, lineAt(data, se.Offset), err)
	case errors.As(err, &te):
		return &jsonError{fmt.Sprintf("%s:%d: %s: expected %s, got %s", name, lineAt(data, te.Offset), te.Field, te.Type, te.Value), err}
	}
	if line := leafLine(data, err.Error()); line > 0 {
		return fmt.Errorf("%s:%d: %w", name, line, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// jsonError is a located error whose text is rewritten but which still
// unwraps to json's error.
type jsonError struct {
	msg string
	err error
}

func (e *jsonError) Error() string { return e.msg }
func (e *jsonError) Unwrap() error { return e.err }

// lineAt is the 1-based line of the last byte of data[:off], the byte at
// which json stopped (its offsets count the bytes read).
func lineAt(data []byte, off int64) int {
	off = min(max(off-1, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// leafLine is the line of the first scalar value of a JSON document that
// msg quotes (time: invalid duration "soon"), or 0.
// A scalar never spans lines, so the line its end is on is its line.
func leafLine(data []byte, msg string) int {
	quoted := quotedIn(msg)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		var text string
		switch v := tok.(type) {
		case string:
			text = v
		case json.Number:
			text = v.String()
		default:
			continue
		}
		if quoted[text] || quoted[strconv.Quote(text)] {
			return lineAt(data, dec.InputOffset())
		}
	}
}

// quotedRE matches a Go-quoted string in an error message.
var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// quotedIn is the set of strings msg quotes, unquoted: each package
// quotes in its own way (time writes a byte that is not ASCII as \xNN,
// strconv a rune as itself), and unquoting makes them one.
func quotedIn(msg string) map[string]bool {
	out := map[string]bool{}
	for _, q := range quotedRE.FindAllString(msg, -1) {
		if s, err := strconv.Unquote(q); err == nil {
			out[s] = true
		}
	}
	return out
}
