package reports

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// number matches the counts, constants and ids inside a check's note:
// every word with a digit in it (12, 0.5, 1s, ch_3Pq, ord_9c_o0).
var number = regexp.MustCompile(`[\w.]*\d[\w.]*`)

// CondenseNote shortens a check's note as merged over many examples
// ("judged 2 definitive answers; judged 9 definitive answers; ..."): parts
// that differ only in their numbers become one part, in order of first
// appearance, whose differing integers are summed ("judged 11 definitive
// answers") and whose equal numbers (a TTL, a factor) are kept. A note of
// one example comes back unchanged. Every writer prints notes through it,
// so a passing run's report stays small and a summary cell reads whole.
func CondenseNote(note string) string {
	parts := strings.Split(note, "; ")
	if len(parts) < 2 {
		return note
	}
	var order []string
	groups := map[string][]string{}
	for _, p := range parts {
		shape := number.ReplaceAllString(p, "#")
		if _, ok := groups[shape]; !ok {
			order = append(order, shape)
		}
		groups[shape] = append(groups[shape], p)
	}
	out := make([]string, len(order))
	for i, shape := range order {
		out[i] = combine(groups[shape])
	}
	return strings.Join(out, "; ")
}

// combine folds parts of one shape into one: each number position kept
// when all parts agree, summed when they are integers that differ, shown
// as a range when they are other numbers; differing ids (ch_1, ch_2) show
// the first, and the part says how many it stands for.
func combine(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	nums := make([][]string, len(parts))
	for i, p := range parts {
		nums[i] = number.FindAllString(p, -1)
	}
	pos, ids := 0, false
	out := number.ReplaceAllStringFunc(parts[0], func(string) string {
		col := make([]string, len(parts))
		for i := range parts {
			col[i] = nums[i][pos]
		}
		pos++
		v, id := fold(col)
		ids = ids || id
		return v
	})
	if ids {
		out += fmt.Sprintf(" (and %d more like it)", len(parts)-1)
	}
	return out
}

// fold is one position over every part; id reports that the values were
// ids and only the first is shown.
func fold(col []string) (v string, id bool) {
	if len(slices.Compact(slices.Clone(col))) == 1 {
		return col[0], false
	}
	sum := 0
	for _, s := range col {
		n, err := strconv.Atoi(s)
		if err != nil {
			if numeric(col) {
				return numRange(col), false
			}
			return col[0], true
		}
		sum += n
	}
	return strconv.Itoa(sum), false
}

// numeric reports whether every value is a decimal number.
func numeric(col []string) bool {
	for _, s := range col {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return false
		}
	}
	return true
}

// numRange is "lo–hi" of decimal numbers.
func numRange(col []string) string {
	lo, hi := col[0], col[0]
	for _, s := range col {
		v, _ := strconv.ParseFloat(s, 64)
		if l, _ := strconv.ParseFloat(lo, 64); v < l {
			lo = s
		}
		if h, _ := strconv.ParseFloat(hi, 64); v > h {
			hi = s
		}
	}
	return lo + "–" + hi
}

// condensed returns a copy of r whose check notes are condensed.
func condensed(r *Report) *Report {
	c := *r
	c.Checks = slices.Clone(r.Checks)
	for i := range c.Checks {
		c.Checks[i].Note = CondenseNote(c.Checks[i].Note)
	}
	return &c
}
