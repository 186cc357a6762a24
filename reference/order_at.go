package reference

import (
	"fmt"
	"net/url"
	"strings"
)

// OrderAt is where a server names the order on its gateway calls. Real
// services choose: a metadata key of their own, the charge description,
// or nothing (the order lives only in their own database, the gateway
// call carrying just the request id). The reference names it in
// metadata[order_id]; the garden's members that choose otherwise are
// correct all the same, and idemcheck must trace their money as they are.
type OrderAt struct {
	// Metadata is the metadata key that carries the order ("" with
	// Description or Nowhere set).
	Metadata string
	// Description names the order only in the description, as
	// "Order <id>".
	Description bool
	// Nowhere sends nothing of the order.
	Nowhere bool
}

// DefaultOrderAt is metadata[order_id].
var DefaultOrderAt = OrderAt{Metadata: "order_id"}

// ParseOrderAt reads metadata[KEY], description or none ("" is
// DefaultOrderAt).
func ParseOrderAt(s string) (OrderAt, error) {
	switch s = strings.TrimSpace(s); {
	case s == "":
		return DefaultOrderAt, nil
	case s == "description":
		return OrderAt{Description: true}, nil
	case s == "none":
		return OrderAt{Nowhere: true}, nil
	case strings.HasPrefix(s, "metadata[") && strings.HasSuffix(s, "]") && len(s) > len("metadata[]"):
		return OrderAt{Metadata: s[len("metadata[") : len(s)-1]}, nil
	}
	return OrderAt{}, fmt.Errorf("unknown order place %q (want metadata[KEY], description or none)", s)
}

// put writes the order into a gateway request's form.
func (o OrderAt) put(f url.Values, orderID string) {
	switch {
	case o.Description:
		f.Set("description", "Order "+orderID)
	case o.Nowhere:
	case o.Metadata != "":
		f.Set("metadata["+o.Metadata+"]", orderID)
	default:
		DefaultOrderAt.put(f, orderID)
	}
}

// search is the gateway search query that finds the charges of orderID
// made under requestID: by the order where metadata names it, else by
// the request id the server records in metadata.
func (o OrderAt) search(orderID, requestID string) string {
	key, value := o.Metadata, orderID
	switch {
	case o.Description || o.Nowhere:
		key, value = "request_id", requestID
	case key == "":
		key = DefaultOrderAt.Metadata
	}
	return fmt.Sprintf("metadata['%s']:'%s'", key, strings.ReplaceAll(value, "'", `\'`))
}
