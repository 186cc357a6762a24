package process_test

import (
	"fmt"

	"github.com/idemcheck/idemcheck/harness"
)

func ExampleParseLink() {
	l, err := harness.ParseLink("replica1->gateway")
	fmt.Println(l, l.Replica(), err, l == harness.GatewayLink(1))
	_, err = harness.ParseLink("replica1->stripe")
	fmt.Println(err)
	// Output:
	// replica1->gateway 1 <nil> true
	// harness: no such link: "replica1->stripe" (want client->replicaN, replicaN->gateway or replicaN->STORE, STORE one of postgres, redis, mysql)
}
