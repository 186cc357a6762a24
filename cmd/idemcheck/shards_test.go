package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/checker"
)

// TestCLI_FourShardsMergeIntoSumsAndWorst runs the nightly's shape on a
// small scale: the reference certified as 4 shards (`certify --shard k/4`,
// the real binary, each shard with its own PostgreSQL and replicas, two
// cheap families, a short budget each), then `idemcheck merge` of the four.
// The merged report.json is read back and checked field by field against
// the shards' own report.json files, read as plain JSON (not through the
// merge code): every count is the shards' sum, every verdict the worst of
// theirs, the level the lowest, the duration the longest, the peak memory
// the largest.
func TestCLI_FourShardsMergeIntoSumsAndWorst(t *testing.T) {
	needPostgres(t)
	dir := t.TempDir()
	const shards = 4
	var dirs []string
	var reps jsonRows
	for k := 1; k <= shards; k++ {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d", k))
		code, stdout, stderr := idemcheck(t, dir, "certify", "--target", "reference", "--families", "protocol,key-reuse",
			"--budget", "5s", "--shard", fmt.Sprintf("%d/%d", k, shards), "--report-dir", out)
		if code != exitPass {
			t.Fatalf("shard %d/%d: exit %d\n%s%s", k, shards, code, stdout, stderr)
		}
		rep := readJSONReport(t, out)
		if rep["shard"] != fmt.Sprintf("%d/%d", k, shards) {
			t.Fatalf("shard %d: report says shard %v", k, rep["shard"])
		}
		dirs, reps = append(dirs, out), append(reps, rep)
	}
	out := filepath.Join(dir, "merged")
	code, stdout, stderr := idemcheck(t, dir, append([]string{"merge", "--report-dir", out}, dirs...)...)
	if code != exitPass || !strings.Contains(stdout, "over 4 shards") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	m := readJSONReport(t, out)

	// The run as a whole.
	want := map[string]any{"target": "reference", "verdict": reps.worst("verdict", reportRank), "level": reps.lowest("level"),
		"complete": reps.all("complete"), "duration": reps.longest(t, "duration"), "peak_rss_bytes": reps.largest("peak_rss_bytes")}
	for field, w := range want {
		if got := m[field]; !reflect.DeepEqual(got, w) {
			t.Errorf("merged %s = %v, want %v", field, got, w)
		}
	}
	if _, ok := m["shard"]; ok {
		t.Errorf("merged report names a shard: %v", m["shard"])
	}
	if got, w := len(jsonList(m, "violations")), len(reps.table("violations")); got != w {
		t.Errorf("merged violations: %d, want the shards' %d", got, w)
	}

	// Coverage: every counter summed, every per-kind count summed per kind.
	cov := map[string]any{}
	for _, r := range reps {
		for k, v := range r["coverage"].(map[string]any) {
			switch v := v.(type) {
			case float64:
				cov[k] = num(cov[k]) + v
			case map[string]any:
				acc, _ := cov[k].(map[string]any)
				if acc == nil {
					acc = map[string]any{}
				}
				for kind, n := range v {
					acc[kind] = num(acc[kind]) + num(n)
				}
				cov[k] = acc
			default: // the stores: postgres, in every shard
				cov[k] = v
			}
		}
	}
	if got := m["coverage"]; !reflect.DeepEqual(got, cov) {
		t.Errorf("merged coverage:\n %v\nwant the shards' sums:\n %v", got, cov)
	}
	if num(cov["histories"]) == 0 || num(cov["ops"]) == 0 {
		t.Errorf("the shards judged nothing: %v", cov)
	}

	// Families: counts summed, the worst verdict, the longest duration,
	// the pace the shards' ops over that duration.
	fams := jsonRows{m}.table("families").index("name")
	for _, name := range []string{"protocol", "key-reuse"} {
		got, of := fams[name], reps.table("families").where("name", name)
		if got == nil || len(of) != shards || len(fams) != 2 {
			t.Fatalf("family %s: merged %v (of %d families), in %d of %d shards", name, got, len(fams), len(of), shards)
		}
		for _, f := range []string{"scenarios", "seeds", "ops"} {
			if g, w := num(got[f]), of.sum(f); g != w || w == 0 {
				t.Errorf("family %s %s = %v, want the shards' sum %v", name, f, g, w)
			}
		}
		if g, w := got["verdict"], of.worst("verdict", checkRank); g != w {
			t.Errorf("family %s verdict %v, want the worst of the shards' %v", name, g, w)
		}
		if g, w := got["duration"], of.longest(t, "duration"); g != w {
			t.Errorf("family %s duration %v, want the longest shard's %v", name, g, w)
		}
		if d, _ := time.ParseDuration(got["duration"].(string)); math.Abs(num(got["ops_per_second"])-of.sum("ops")/d.Seconds()) > 0.1 {
			t.Errorf("family %s: %v ops/s, want %v ops over %v", name, got["ops_per_second"], of.sum("ops"), d)
		}
	}

	// Checks: one row per check and family, the worst verdict, exercised
	// when any shard exercised it.
	checks, perShard := jsonRows{m}.table("checks").index("id", "family"), reps[:1].table("checks").index("id", "family")
	if len(checks) != len(perShard) || len(checks) == 0 {
		t.Errorf("merged %d check rows, a shard has %d", len(checks), len(perShard))
	}
	for key, got := range checks {
		of := reps.table("checks").where("id", got["id"]).where("family", got["family"])
		if len(of) != shards {
			t.Errorf("check %s in %d of %d shards", key, len(of), shards)
			continue
		}
		if g, w := got["verdict"], of.worst("verdict", checkRank); g != w {
			t.Errorf("check %s verdict %v, want the worst of the shards' %v", key, g, w)
		}
		if g, w := got["exercised"], of.any("exercised"); g != w {
			t.Errorf("check %s exercised %v, want %v", key, g, w)
		}
	}
}

func readJSONReport(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return m
}

// jsonRows are reports, or rows of a table of them, read as plain JSON.
type jsonRows []map[string]any

func num(v any) float64 { f, _ := v.(float64); return f }

func jsonList(m map[string]any, field string) []any { l, _ := m[field].([]any); return l }

// table is every row of field in every report, as jsonRows.
func (rs jsonRows) table(field string) jsonRows {
	var out jsonRows
	for _, r := range rs {
		for _, row := range jsonList(r, field) {
			out = append(out, row.(map[string]any))
		}
	}
	return out
}

// where is the rows whose key is value.
func (rs jsonRows) where(key string, value any) jsonRows {
	var out jsonRows
	for _, r := range rs {
		if r[key] == value {
			out = append(out, r)
		}
	}
	return out
}

// index is the rows by the values of keys, joined by "/".
func (rs jsonRows) index(keys ...string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, r := range rs {
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprint(r[k]))
		}
		out[strings.Join(parts, "/")] = r
	}
	return out
}

func (rs jsonRows) sum(field string) (s float64) {
	for _, r := range rs {
		s += num(r[field])
	}
	return s
}

func (rs jsonRows) largest(field string) any {
	var best any
	for _, r := range rs {
		if v, ok := r[field]; ok && (best == nil || num(v) > num(best)) {
			best = v
		}
	}
	return best
}

// longest is the longest of the Go duration strings in field.
func (rs jsonRows) longest(t *testing.T, field string) any {
	t.Helper()
	var best string
	var bestD time.Duration
	for _, r := range rs {
		s, _ := r[field].(string)
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		if best == "" || d > bestD {
			best, bestD = s, d
		}
	}
	return best
}

// lowest is the lowest level ("L0".."L5") in field.
func (rs jsonRows) lowest(field string) any {
	low, _ := rs[0][field].(string)
	for _, r := range rs {
		s, _ := r[field].(string)
		low = min(low, s)
	}
	return low
}

func (rs jsonRows) all(field string) any {
	for _, r := range rs {
		if r[field] != true {
			return false
		}
	}
	return true
}

func (rs jsonRows) any(field string) any {
	for _, r := range rs {
		if r[field] == true {
			return true
		}
	}
	return false
}

// worst is the worst verdict in field, by rank.
func (rs jsonRows) worst(field string, rank func(string) int) any {
	worst, _ := rs[0][field].(string)
	for _, r := range rs {
		if v, _ := r[field].(string); rank(v) > rank(worst) {
			worst = v
		}
	}
	return worst
}

// reportRank orders a report's verdicts, fail worst.
func reportRank(v string) int { return map[string]int{"pass": 0, "unknown": 1, "fail": 2}[v] }

// checkRank orders a check's or family's verdicts as the checker does.
func checkRank(v string) int { return checker.Verdict(v).Rank() }
