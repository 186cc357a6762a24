// Package conformance is the ginkgo conformance suite: one container per
// scenario family, labelled with the family and its certification level,
// runnable against any target. It drives the same families, runner and
// checker as `idemcheck certify` (through package certify): there is no
// second implementation to drift.
//
//	go test ./scenarios/conformance/ -ginkgo.label-filter=L2 -ginkgo.junit-report=junit.xml
//	IDEMCHECK_TARGET=./my-server.yaml IDEMCHECK_BUDGET=60s go test ./scenarios/conformance/
package conformance
