package garden

import (
	"github.com/idemcheck/idemcheck/reference"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// orderInPath is a service that takes the order in the path only (POST
// /orders/{order_id}/payments, a JSON body of the payment's values): the
// reference behind zoo.OrderInPath, so a key is bound to the concrete
// path. The same key and body for another order is another request,
// refused with 422; route-template-key, which binds the key to the route
// template, replays the first order's charge instead.
var orderInPath = zoo.Variant{
	Name: "order-in-path",
	Bug:  "none: the order in the path only (POST /orders/{order_id}/payments, a JSON body without it); a key is bound to the concrete path",
	New: func(cfg reference.Config) (zoo.Server, error) {
		s, err := reference.New(cfg)
		if err != nil {
			return nil, err
		}
		return zoo.OrderInPath(s), nil
	},
}
