package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Seal is what lets a report.json be checked later (idemcheck verify):
// a digest of the report itself, with what it was made from beside the
// tool and the seed the report records anyway.
type Seal struct {
	// Digest is "sha256:" and the hex SHA-256 of the report's canonical
	// form (Canonical) without Digest and Fields.
	Digest string `json:"digest"`
	// TargetSHA256 is the hex SHA-256 of the target file the run read
	// ("" for a built-in target, which the tool's commit names).
	TargetSHA256 string `json:"target_sha256,omitempty"`
	// Images are the container images a container-mode run ran, by tag,
	// each with its image id ("sha256:…").
	Images map[string]string `json:"images,omitempty"`
	// Fields is, for each field of the report down to one level inside
	// an object or a list ("verdict", "tool.commit", "checks[12]"), the
	// first 16 hex digits of its canonical form's SHA-256: what lets
	// verify name the field that was edited.
	Fields map[string]string `json:"fields,omitempty"`
}

// ErrNoSeal is a report without a seal: written before reports carried
// one, or with it removed.
var ErrNoSeal = errors.New("the report carries no seal (seal.digest)")

// ErrEdited is a report whose content does not match its seal.
var ErrEdited = errors.New("the report was edited after the run")

// sealedJSON is the report as WriteJSON writes it, with its seal
// computed over exactly those bytes.
func sealedJSON(r *Report) ([]byte, error) {
	c := *r
	s := Seal{}
	if r.Seal != nil {
		s = *r.Seal
	}
	s.Digest, s.Fields = "", nil
	c.Seal = &s
	raw, err := encodeIndented(&c)
	if err != nil {
		return nil, err
	}
	digest, fields, err := digests(raw)
	if err != nil {
		return nil, err
	}
	s.Digest, s.Fields = digest, fields
	return encodeIndented(&c)
}

func encodeIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Canonical is a report.json's canonical form: its JSON with the seal's
// digest and fields left out, object keys sorted, no insignificant
// space, numbers and strings as written. Whitespace and key order in the
// file do not change it; any other edit does.
func Canonical(data []byte) ([]byte, error) {
	doc, err := decodeSealed(data)
	if err != nil {
		return nil, err
	}
	return canonical(doc)
}

// decodeSealed parses a report.json generically (numbers kept as
// written) and drops the seal's digest and fields.
func decodeSealed(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if s, ok := doc["seal"].(map[string]any); ok {
		s = maps.Clone(s)
		delete(s, "digest")
		delete(s, "fields")
		doc["seal"] = s
	}
	return doc, nil
}

func canonical(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// digests is the seal's digest and field digests of a report.json.
func digests(data []byte) (string, map[string]string, error) {
	doc, err := decodeSealed(data)
	if err != nil {
		return "", nil, err
	}
	whole, err := canonical(doc)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(whole)
	fields := map[string]string{}
	add := func(path string, v any) error {
		b, err := canonical(v)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		fields[path] = hex.EncodeToString(h[:8])
		return nil
	}
	for k, v := range doc {
		var err error
		switch v := v.(type) {
		case map[string]any:
			for sub, sv := range v {
				err = errors.Join(err, add(k+"."+sub, sv))
			}
			if len(v) == 0 {
				err = add(k, v)
			}
		case []any:
			for i, e := range v {
				err = errors.Join(err, add(k+"["+strconv.Itoa(i)+"]", e))
			}
			if len(v) == 0 {
				err = add(k, v)
			}
		default:
			err = add(k, v)
		}
		if err != nil {
			return "", nil, err
		}
	}
	return "sha256:" + hex.EncodeToString(sum[:]), fields, nil
}

// Verification is what Verify found.
type Verification struct {
	// Digest is the digest the report's seal records.
	Digest string
	// Edited names the fields whose content differs from the seal's
	// (with the check or family a row is about), sorted; empty when the
	// report is as it was written.
	Edited []string
	// Tool is the build the report says wrote it.
	Tool Tool
	// Seal is the report's seal.
	Seal Seal
}

// Verify recomputes the seal of a report.json's bytes: ErrNoSeal without
// one, ErrEdited (with Edited naming the fields) when the content is not
// what was sealed, nil when it is.
func Verify(name string, data []byte) (Verification, error) {
	var probe struct {
		Seal *Seal `json:"seal"`
		Tool Tool  `json:"tool"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return Verification{}, locateJSON(name, data, err)
	}
	if probe.Seal == nil || probe.Seal.Digest == "" {
		return Verification{}, fmt.Errorf("%s: %w", name, ErrNoSeal)
	}
	v := Verification{Digest: probe.Seal.Digest, Tool: probe.Tool, Seal: *probe.Seal}
	digest, fields, err := digests(data)
	if err != nil {
		return v, locateJSON(name, data, err)
	}
	if digest == probe.Seal.Digest {
		return v, nil
	}
	doc, _ := decodeSealed(data)
	for _, path := range slices.Sorted(maps.Keys(mergeKeys(fields, probe.Seal.Fields))) {
		got, want := fields[path], probe.Seal.Fields[path]
		switch {
		case got == want:
		case want == "":
			v.Edited = append(v.Edited, path+" (added)")
		case got == "":
			v.Edited = append(v.Edited, path+" (removed)")
		default:
			v.Edited = append(v.Edited, path+about(doc, path))
		}
	}
	if len(v.Edited) == 0 {
		v.Edited = []string{"the seal itself (seal.fields no longer match seal.digest)"}
	}
	return v, fmt.Errorf("%s: %w: %s", name, ErrEdited, strings.Join(v.Edited, ", "))
}

func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// about says which check, family or violation a list element is: "
// (check T1 of family run)".
func about(doc map[string]any, path string) string {
	name, idx, ok := strings.Cut(strings.TrimSuffix(path, "]"), "[")
	if !ok {
		return ""
	}
	list, _ := doc[name].([]any)
	i, err := strconv.Atoi(idx)
	if err != nil || i >= len(list) {
		return ""
	}
	row, _ := list[i].(map[string]any)
	var parts []string
	for _, k := range []string{"id", "name", "family", "invariant"} {
		if s, ok := row[k].(string); ok && s != "" {
			parts = append(parts, k+" "+s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
