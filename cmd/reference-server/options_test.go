package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// envOf is a getenv over a map.
func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The store is selected by --store (or STORE); each store needs its own
// URL, and a bad value is a usage error naming the flag or variable.
func TestOptions_StoreSelection(t *testing.T) {
	base := map[string]string{"GATEWAY_URL": "http://gw", "GATEWAY_API_KEY": "sk"}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string // "" = accepted; else a substring of the error
	}{
		{"postgres by default", nil, map[string]string{"DATABASE_URL": "postgres://x/db"}, ""},
		{"redis by flag", []string{"--store=redis", "--redis-url=redis://127.0.0.1:6379/2"}, nil, ""},
		{"redis by env", nil, map[string]string{"STORE": "redis", "REDIS_URL": "redis://127.0.0.1:6379/0"}, ""},
		{"mysql by flag", []string{"--store=mysql", "--mysql-dsn=root@tcp(127.0.0.1:3306)/db?parseTime=true"}, nil, ""},
		{"mysql by env", nil, map[string]string{"STORE": "mysql", "MYSQL_DSN": "root@tcp(127.0.0.1:3306)/db"}, ""},
		{"unknown store", []string{"--store=mongo"}, nil, `--store: unknown store "mongo": expected postgres, redis or mysql`},
		{"mysql without dsn", []string{"--store=mysql"}, map[string]string{"DATABASE_URL": "postgres://x/db"}, "missing MYSQL_DSN"},
		{"bad mysql dsn", []string{"--store=mysql", "--mysql-dsn=mysql://root@h/db"}, nil, "--mysql-dsn (MYSQL_DSN)"},
		{"redis without url", []string{"--store=redis"}, map[string]string{"DATABASE_URL": "postgres://x/db"}, "missing REDIS_URL"},
		{"postgres without url", nil, map[string]string{"REDIS_URL": "redis://h:1/0"}, "missing DATABASE_URL"},
		{"bad redis url", []string{"--store=redis", "--redis-url=http://h/0"}, nil, "--redis-url (REDIS_URL)"},
		{"a skewed clock", nil, map[string]string{"DATABASE_URL": "postgres://x/db", "FAKETIME": "-2s"}, ""},
		{"an absolute FAKETIME", nil, map[string]string{"DATABASE_URL": "postgres://x/db", "FAKETIME": "@2026-01-01 00:00:00"}, "FAKETIME"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			_, err := parseOptions(tc.args, envOf(env), io.Discard)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, errUsage):
				t.Fatalf("error %v is not a usage error (exit 2)", err)
			}
		})
	}
}
