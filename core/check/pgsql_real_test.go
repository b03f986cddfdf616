package check

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startPostgres runs the installed PostgreSQL server on a free loopback
// port, as the postgres system user, with hba rules that reject the user
// "rejectme" and ask everyone else for a SCRAM password.
func startPostgres(t *testing.T) int {
	if testing.Short() {
		t.Skip("short")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 || os.Getuid() != 0 {
		t.Skip("postgresql not installed, or not root")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Skip("no postgres user")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cred := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	dir, err := os.MkdirTemp("", "pgcheck")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chown(dir, uid, gid)
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust")
	initdb.SysProcAttr = cred
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Skipf("initdb: %v\n%s", err, out)
	}
	hba := "host all rejectme 127.0.0.1/32 reject\nhost all all 127.0.0.1/32 scram-sha-256\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid)
	port := closedPort(t)
	pg := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-k", dir, "-c", "listen_addresses=127.0.0.1")
	pg.SysProcAttr = cred
	pg.Dir = dir
	if err := pg.Start(); err != nil {
		t.Skip("postgres:", err)
	}
	t.Cleanup(func() {
		pg.Process.Signal(syscall.SIGINT)
		pg.Wait()
	})
	// The port opens before the server accepts sessions ("the database
	// system is starting up"): wait for pg_isready.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			c.Close()
			ready := exec.Command(filepath.Join(bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port))
			if ready.Run() == nil {
				return port
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("postgres did not start")
	return 0
}

func TestPgSQLCheckRealServer(t *testing.T) {
	port := startPostgres(t)
	tg := &Target{Addr: "127.0.0.1", Port: port}
	// SCRAM (SASL) authentication request: the server is alive.
	ok := backendRules(t, w("option", "pgsql-check", "user", "postgres"))
	wantOutcome(t, run(t, ok, tg, shortTO), StatusL7OK, 0, "PostgreSQL server is ok")
	// Rejected by pg_hba: an error packet, reported with its severity.
	rej := backendRules(t, w("option", "pgsql-check", "user", "rejectme"))
	wantOutcome(t, run(t, rej, tg, shortTO), StatusL7Rsp, 0, "FATAL")
}
