package checker

// alreadyCanonical reports whether body is JSON that RFC 8785 leaves as
// it is, so that canonical need not parse and rewrite it: no whitespace,
// object members in strictly increasing key order, strings of printable
// ASCII without escapes, integers of at most 15 digits (exact in a
// double, printed as written; no fraction, exponent or -0), true, false
// and null, nested at most maxCanonDepth deep. Anything else, canonical or
// not, is left to jcs: a false here costs time, never a verdict.
func alreadyCanonical(body string) bool {
	end, ok := canonValue(body, 0, 0)
	return ok && end == len(body)
}

const maxCanonDepth = 32

// canonValue scans one value at s[i:] and returns where it ends.
func canonValue(s string, i, depth int) (int, bool) {
	if i >= len(s) || depth > maxCanonDepth {
		return i, false
	}
	switch c := s[i]; {
	case c == '{':
		return canonObject(s, i+1, depth+1)
	case c == '[':
		return canonArray(s, i+1, depth+1)
	case c == '"':
		_, end, ok := canonString(s, i)
		return end, ok
	case c == '-' || c >= '0' && c <= '9':
		return canonInteger(s, i)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(s)-i >= len(lit) && s[i:i+len(lit)] == lit {
			return i + len(lit), true
		}
	}
	return i, false
}

// canonObject scans the members after '{' and the closing '}'.
func canonObject(s string, i, depth int) (int, bool) {
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	prev, first := "", true
	for {
		key, end, ok := canonString(s, i)
		if !ok || (!first && key <= prev) || end >= len(s) || s[end] != ':' {
			return end, false
		}
		prev, first = key, false
		if i, ok = canonValue(s, end+1, depth); !ok || i >= len(s) {
			return i, false
		}
		switch s[i] {
		case '}':
			return i + 1, true
		case ',':
			i++
		default:
			return i, false
		}
	}
}

// canonArray scans the elements after '[' and the closing ']'.
func canonArray(s string, i, depth int) (int, bool) {
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = canonValue(s, i, depth); !ok || i >= len(s) {
			return i, false
		}
		switch s[i] {
		case ']':
			return i + 1, true
		case ',':
			i++
		default:
			return i, false
		}
	}
}

// canonString scans a string at s[i] (its opening quote) of printable
// ASCII without escapes, and returns its contents and where it ends.
func canonString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return "", j, false
		}
	}
	return "", len(s), false
}

// canonInteger scans -?(0|[1-9][0-9]{0,14}), refusing -0.
func canonInteger(s string, i int) (int, bool) {
	neg := s[i] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n := i - start
	switch {
	case n == 0 || n > 15 || (n > 1 && s[start] == '0') || (neg && s[start] == '0'):
		return i, false
	case i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'):
		return i, false
	}
	return i, true
}
