// Package openapi writes starter target files (idemcheck init): a
// commented template that loads, or, from an OpenAPI 3 document read with
// kin-openapi, a target whose protocol section says what the document
// says about one charge operation: its method and path (an order path
// parameter becomes {order_id}), its key header, a body template built
// from the request schema (JSON or a form), and where the success answer
// keeps its id, status, amount, currency and order (protocol.fields).
//
// Properties are matched to the payment's values by name and type: an
// integer amount (amount, amount_minor, or value inside amount), a string
// currency of three letters, a string order reference (order_id, orderId,
// reference, merchant_reference). Two candidates for one value are an
// error that names both and the flag that settles it (Options.Amount,
// Currency, OrderID); so is a document that is not OpenAPI 3, or has no
// operation with an idempotency key header. Every error about the
// document is a *SpecError naming the file, the line when known, and the
// JSON path in the document, and wraps ErrSpec.
//
// What Init writes is checked with target.Parse before it is returned: a
// guess that the loader would refuse is an error here, never a file.
//
// It imports target (rank 1) and kin-openapi; cmd/idemcheck imports it.
package openapi
