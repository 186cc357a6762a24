// Package search turns a family into a rapid property over one runner:
// draw, run, judge (Property). Explore plays a family's seeds several at
// a time until the deadline or a failure, and re-plays a failing seed
// alone through rapid, which confirms and shrinks it; certify re-plays a
// failing crash wave's payments alone (families.Solo) through Judge.
//
// It imports families, runner and checker: it is where a history is
// first judged.
package search
