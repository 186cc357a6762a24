package reports

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// number matches the counts and constants inside a check's note.
var number = regexp.MustCompile(`\d+(?:\.\d+)?`)

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
// as a range otherwise.
func combine(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	nums := make([][]string, len(parts))
	for i, p := range parts {
		nums[i] = number.FindAllString(p, -1)
	}
	pos := 0
	return number.ReplaceAllStringFunc(parts[0], func(string) string {
		col := make([]string, len(parts))
		for i := range parts {
			col[i] = nums[i][pos]
		}
		pos++
		return fold(col)
	})
}

// fold is one number position over every part.
func fold(col []string) string {
	if len(slices.Compact(slices.Clone(col))) == 1 {
		return col[0]
	}
	sum := 0
	for _, s := range col {
		n, err := strconv.Atoi(s)
		if err != nil {
			return numRange(col)
		}
		sum += n
	}
	return strconv.Itoa(sum)
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
