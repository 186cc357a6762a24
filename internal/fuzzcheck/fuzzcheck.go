// Package fuzzcheck holds the properties that every fuzz target of a file
// a user hands idemcheck asserts (a target file, an incident file, a shard's
// report.json): the parse returns in bounded time, it returns a value or
// an error and never both or neither, and its error names the file and a
// line or a field, as docs/testing.md promises for bad input.
//
// It is for tests only; it imports testing.
package fuzzcheck

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/internal/yamlfile"
)

// MaxInput bounds a fuzz input. The files users write are a few kilobytes
// (the largest report.json of a full certification is under 64 KiB);
// larger inputs only slow the fuzzer down without reaching new code.
const MaxInput = 64 << 10

// Timeout is how long one parse of at most MaxInput bytes may take before
// the fuzz target calls it a hang. A parse takes microseconds; the margin
// is for a machine shared with other builds, not for a slow parser.
const Timeout = 10 * time.Second

// Watchdog crashes the fuzzing process, with every goroutine's stack,
// when the input it was started for is not done within Timeout; call
// the returned stop when it is. Go's fuzzing engine has no per-input
// deadline: without this a hang stalls the run silently, while a crashed
// worker makes the engine keep the input as a failure.
func Watchdog(data []byte) (stop func() bool) {
	return time.AfterFunc(Timeout, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("hang: a %d-byte input is not done after %s: %s", len(data), Timeout, String(data)))
	}).Stop
}

// Parse runs parse(name, data) and fails t when it returns both a value
// and an error, or neither.
func Parse[T comparable](t testing.TB, name string, data []byte, parse func(string, []byte) (T, error)) (T, error) {
	t.Helper()
	v, err := parse(name, data)
	var zero T
	if (v == zero) == (err == nil) {
		t.Fatalf("parse returned value %v and error %v: want exactly one", v, err)
	}
	return v, err
}

// lineRE is the start of an error that names its line, "file:12: ", after
// the file name; fieldRE of one that names a field, "file: field: ".
var (
	lineRE  = regexp.MustCompile(`^:(\d+): .`)
	fieldRE = regexp.MustCompile(`^: ([^ :]+): .`)
)

// NamesPlace fails t unless err wraps kind (when not nil) and its text
// begins with the file name and then a line of data (1 to its last line)
// or a field. The field of a *yamlfile.FieldError is its own (any text a
// file's keys make); any other error may name only one of fields.
func NamesPlace(t testing.TB, err error, name string, data []byte, kind error, fields ...string) {
	t.Helper()
	if kind != nil && !errors.Is(err, kind) {
		t.Fatalf("error does not wrap %q: %v", kind, err)
	}
	msg := err.Error()
	rest, ok := strings.CutPrefix(msg, name)
	if !ok {
		t.Fatalf("error does not begin with the file name %s: %q", name, msg)
	}
	if m := lineRE.FindStringSubmatch(rest); m != nil {
		checkLine(t, m[1], data, msg)
	}
	var fe *yamlfile.FieldError
	if errors.As(err, &fe) {
		if fe.File != name || (fe.Line == 0 && fe.Field == "") {
			t.Fatalf("FieldError %+v: want File %q and a line or a field", *fe, name)
		}
		return
	}
	if m := fieldRE.FindStringSubmatch(rest); !lineRE.MatchString(rest) && (m == nil || !slices.Contains(fields, m[1])) {
		t.Fatalf("error names neither %s:<line> nor one of the fields %v: %q", name, fields, msg)
	}
}

// checkLine fails t when line is not a line of data.
func checkLine(t testing.TB, line string, data []byte, msg string) {
	t.Helper()
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 || n > Lines(data) {
		t.Fatalf("error names line %s of a %d-line file: %q", line, Lines(data), msg)
	}
}

// Lines is the number of lines of data as YAML counts them: a line
// break is \n, \r\n or a lone \r, a last line without a break counts,
// and an empty file has one line.
func Lines(data []byte) int {
	n := 1
	for i, b := range data {
		last := i == len(data)-1
		switch {
		case b == '\n' && !last, b == '\r' && !last && data[i+1] != '\n':
			n++
		}
	}
	return n
}

// String abbreviates a fuzz input for a failure message.
func String(data []byte) string {
	if len(data) > 300 {
		return fmt.Sprintf("%q… (%d bytes)", data[:300], len(data))
	}
	return fmt.Sprintf("%q", data)
}
