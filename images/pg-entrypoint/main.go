// Command pg-entrypoint is the entrypoint of the idemcheck/postgres image,
// a PostgreSQL assembled from the host's Debian packages with no shell in
// it. It initialises a throwaway cluster on first start (trust
// authentication from anywhere: the image only ever runs on a private test
// network) and then replaces itself with the postmaster, so that docker
// stop and docker kill reach PostgreSQL directly.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pg-entrypoint:", err)
		os.Exit(1)
	}
}

func run(extra []string) error {
	bin := os.Getenv("PGBIN")
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
	}
	data := os.Getenv("PGDATA")
	if data == "" {
		data = "/var/lib/postgresql/data/pgdata"
	}
	if os.Getuid() == 0 {
		if err := dropRoot(filepath.Dir(data)); err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if err := initdb(bin, data); err != nil {
			return err
		}
	}
	// Durability is not under test here (the SUT's database is never
	// crashed, only the SUT), so trade it for speed.
	args := []string{filepath.Join(bin, "postgres"), "-D", data, "-c", "listen_addresses=*", "-c", "unix_socket_directories=/tmp",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "jit=off"}
	return syscall.Exec(filepath.Join(bin, "postgres"), append(args, extra...), os.Environ())
}

// The postgres user of the image's /etc/passwd (images/build.sh).
const uid, gid = 101, 104

// dropRoot hands the data directory's parent to postgres and becomes
// postgres: PostgreSQL refuses to run as root, and a tmpfs mounted over the
// data directory belongs to root whatever mode= asked for on some engines.
func dropRoot(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return err
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(gid); err != nil {
		return fmt.Errorf("setgid: %w", err)
	}
	if err := syscall.Setuid(uid); err != nil {
		return fmt.Errorf("setuid: %w", err)
	}
	return os.Setenv("HOME", "/var/lib/postgresql")
}

func initdb(bin, data string) error {
	cmd := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb: %w", err)
	}
	hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = hba.WriteString("host all all 0.0.0.0/0 trust\nhost all all ::/0 trust\n")
	return errors.Join(err, hba.Close())
}
