package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idemcheck/idemcheck/reports"
)

// BenchmarkSoak certifies the reference with the built binary for
// IDEMCHECK_SOAK (a duration; `make bench` sets 5m) and reports what the
// run held and did: peak_MB, the idemcheck process's peak resident
// memory (report.json's peak_rss_bytes); ops, the requests its examples
// sent, and ops/s; and peak_KB/kop, that peak per thousand ops, which a
// run in flat memory drives down as it goes on. Skipped without
// IDEMCHECK_SOAK: a soak takes minutes.
func BenchmarkSoak(b *testing.B) {
	budget, err := time.ParseDuration(os.Getenv("IDEMCHECK_SOAK"))
	if err != nil {
		b.Skip("IDEMCHECK_SOAK is not a duration (make bench sets 5m)")
	}
	needPostgres(b)
	binaries(b)
	b.ResetTimer()
	for range b.N {
		dir := b.TempDir()
		out := filepath.Join(dir, "report")
		code, stdout, stderr := idemcheck(b, dir, "certify", "--target", "reference", "--budget", budget.String(), "--report-dir", out)
		if code != exitPass {
			b.Errorf("certify --budget %s: exit %d\n%s%s", budget, code, stdout, stderr)
		}
		rep, err := reports.ReadDir(out)
		if err != nil {
			b.Fatal(err)
		}
		ops := rep.Coverage.Ops
		b.ReportMetric(float64(rep.PeakRSS)/(1<<20), "peak_MB")
		b.ReportMetric(float64(ops), "ops")
		b.ReportMetric(float64(ops)/time.Duration(rep.Duration).Seconds(), "ops/s")
		if ops > 0 {
			b.ReportMetric(float64(rep.PeakRSS)/1024/float64(ops)*1000, "peak_KB/kop")
		}
	}
}
