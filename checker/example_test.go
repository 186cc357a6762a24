package checker_test

import (
	"fmt"
	"log"

	"github.com/idemcheck/idemcheck/checker"
	"github.com/idemcheck/idemcheck/history"
)

// Judge a recorded history: the naive check-then-act server let two
// duplicates race past the key lookup, and both charged.
func Example() {
	h, err := history.ReadFile("testdata/m1_double_charge.json")
	if err != nil {
		log.Fatal(err)
	}
	r := checker.Check(h)
	for _, c := range r.Checks {
		for _, v := range c.Violations {
			if c.Verdict == checker.Failed {
				fmt.Printf("%s %s key=%q order=%s charges=%v ops=%v\n", v.Invariant, c.Verdict, v.Key, v.Order, v.Charges, v.Ops)
			}
		}
	}
	fmt.Println("verdict:", r.Verdict, "level:", r.Level)
	fmt.Println(r.LevelNote)
	// Output:
	// M1 FAILED key="k1" order=ord_1 charges=[ch_1 ch_2] ops=[0 1]
	// M1 FAILED key="" order=ord_2 charges=[ch_3 ch_4] ops=[2 3]
	// M4 FAILED key="k1" order=ord_1 charges=[ch_1 ch_2] ops=[0 1]
	// verdict: FAILED level: L0
	// L1 retry-safe not reached: M1 FAILED
}

// Certify a target over several families: each history is judged alone,
// the merge climbs the ladder.
func ExampleMerge() {
	var rs []checker.Result
	for _, f := range []string{"clean_sequential", "clean_concurrent", "clean_crash_recovered", "clean_expiry"} {
		h, err := history.ReadFile("testdata/" + f + ".json")
		if err != nil {
			log.Fatal(err)
		}
		r := checker.Check(h)
		fmt.Println(f, r.Verdict, r.Level)
		rs = append(rs, r)
	}
	m := checker.Merge(rs...)
	fmt.Println("certified:", m.Verdict, m.Level)
	// Output:
	// clean_sequential PASS L1
	// clean_concurrent PASS L2
	// clean_crash_recovered PASS L4
	// clean_expiry PASS L0
	// certified: PASS L5
}
