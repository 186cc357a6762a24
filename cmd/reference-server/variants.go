package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idemcheck/idemcheck/reference/garden"
	"github.com/idemcheck/idemcheck/reference/zoo"
)

// lookupVariant finds --variant in the zoo (the reference and the broken
// servers) or in the garden (correct servers that choose differently).
func lookupVariant(name string) (zoo.Variant, error) {
	v, err := zoo.Lookup(name)
	if !errors.Is(err, zoo.ErrUnknown) {
		return v, err
	}
	if v, gerr := garden.Lookup(name); gerr == nil {
		return v, nil
	}
	return zoo.Variant{}, fmt.Errorf("%w %q: expected one of %s", zoo.ErrUnknown, name, strings.Join(append(zoo.Names(), garden.Names()...), ", "))
}
