package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// anonymousShared is a public endpoint: the reference behind
// zoo.Anonymous, so requests without credentials share one namespace
// (the server cannot tell their clients apart) and the reference's
// fingerprint keeps one client's different request from another's
// answer: it is refused with 422. anonymous-namespace, which compares no
// body, answers it with the other client's charge.
var anonymousShared = zoo.Variant{
	Name: "anonymous-shared",
	Bug:  "none: takes requests without credentials into one shared namespace, bodies compared as for any tenant",
	New: func(cfg reference.Config) (zoo.Server, error) {
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return zoo.Anonymous(s), nil
	},
}
