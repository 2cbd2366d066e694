package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cauri-pay/cauri/internal/gateway/pawapay"
)

// TestDocs_ShellExamplesRun runs every shell example of the README and
// docs/ that calls the API (a ```sh block with a curl in it) against a real
// server, as a reader would paste it: each must succeed, every curl with a
// 2xx. The README's tour runs whole (its workspace, session, settle,
// status, webhook address), and so does docs/payment-links.md's way to a
// paid link; the other pages' examples get what their text assumes: $CAURI
// the service, $SECRET and $LIVE_SECRET a verified workspace's live secret
// key, with a pawaPay account for Senegal. The pawaPay simulator runs where
// `cauri simulate pawapay` would, settling in 100 ms rather than 3 s. So no example can rot unnoticed (issue 21, point 6).
func TestDocs_ShellExamplesRun(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is not installed; the docs' examples must run in CI")
		}
		t.Skip("curl is not installed")
	}
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	env := map[string]string{
		"CAURI_ADDR": addr, "CAURI_BASE_URL": base, "CAURI_DATABASE_URL": filepath.Join(dir, "cauri.db"),
		"CAURI_MASTER_KEY": "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=", "CAURI_WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8",
	}
	startServer(t, env)
	sim := &pawapay.Simulator{Token: "sim-token", SettleAfter: 100 * time.Millisecond}
	simSrv := httptest.NewServer(sim)
	defer simSrv.Close()

	// The shell the examples run in: `cauri` and `go run ./cmd/cauri` are
	// this test binary as the command line; curl fails on a 4xx or 5xx.
	prologue := `set -euo pipefail
cauri() { CAURI_TEST_CLI=1 "$CAURI_TEST_BIN" "$@"; }
go() { if [ "$1 $2" = "run ./cmd/cauri" ]; then shift 2; cauri "$@"; else echo "go $*: not run by the docs test" >&2; return 1; fi; }
curl() { command curl --fail-with-body --max-time 20 "$@"; }
`
	shell := func(script, workdir string, vars map[string]string) (string, error) {
		cmd := exec.Command("bash", "-c", prologue+script)
		cmd.Dir = workdir
		cmd.Env = append(os.Environ(), "CAURI_TEST_BIN="+os.Args[0])
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		for k, v := range vars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	// The verified workspace with its Senegalese pawaPay account.
	var out bytes.Buffer
	getenv := func(k string) string { return env[k] }
	if err := run(context.Background(), []string{"workspace", "create", "--name", "Docs", "--verified"}, getenv, nil, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	secret, wsID := jsonField(t, out.Bytes(), "keys", "live_secret"), jsonField(t, out.Bytes(), "id")
	out.Reset()
	if err := run(context.Background(), []string{"gateway", "add", "--workspace", wsID, "--provider", "pawapay", "--countries", "SN",
		"--live", "--credentials", "-", "--api-url", simSrv.URL}, getenv, strings.NewReader(`{"api_token": "sim-token"}`), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	sim.CallbackURL = base + "/callbacks/" + jsonField(t, out.Bytes(), "id")
	vars := map[string]string{"CAURI": base, "SECRET": secret, "LIVE_SECRET": secret}

	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```")
	answer := regexp.MustCompile(`(?m)^# \{.*$`)
	state := regexp.MustCompile(`"\w+":(true|false|"[A-Z_]+")`)
	ran := 0
	for _, f := range append([]string{"../../README.md"}, files...) {
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllSubmatch(doc, -1) {
			script := string(m[1])
			if !strings.Contains(script, "curl ") {
				continue
			}
			ran++
			script = strings.ReplaceAll(script, "http://localhost:8080", base)
			script = strings.ReplaceAll(script, "http://127.0.0.1:8090", simSrv.URL) // `cauri simulate pawapay`
			script = strings.ReplaceAll(script, "sleep 4", "sleep 1")
			t.Run(filepath.Base(f)+"#"+string(rune('1'+i)), func(t *testing.T) {
				out, err := shell(script, t.TempDir(), vars)
				if err != nil {
					t.Fatalf("the example fails (%v):\n%s\noutput:\n%s", err, script, out)
				}
				// An answer the text shows ("# {...}") must hold in its
				// states: its true, false and upper-case values are in the
				// output.
				for _, shown := range answer.FindAllString(script, -1) {
					for _, kv := range state.FindAllString(shown, -1) {
						if !strings.Contains(out, kv) {
							t.Errorf("the example shows %s, which its output lacks:\n%s", kv, out)
						}
					}
				}
			})
		}
	}
	if ran < 4 {
		t.Fatalf("%d examples ran; the README's tour and docs' curl examples were not found", ran)
	}
}
