package sdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	bin       string
	buildErr  error
)

// cauriBinary builds cmd/cauri once per test run; the suites start it.
func cauriBinary(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cauri-sdk-")
		if err != nil {
			buildErr = err
			return
		}
		bin = filepath.Join(dir, "cauri")
		if out, err := exec.Command("go", "build", "-o", bin, "../cmd/cauri").CombinedOutput(); err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// suite runs one library's tests in dir with the given command, passing
// CAURI_BIN (the built service) and CAURI_SDK_VECTORS (the shared webhook
// vectors). A missing toolchain skips locally and fails under CI=true.
func suite(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (CI installs it in .ci/run)", name)
		}
		t.Skipf("%s not installed: skipped (CI installs it)", name)
	}
	vectors, err := filepath.Abs("testdata/webhook-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CAURI_BIN="+cauriBinary(t), "CAURI_SDK_VECTORS="+vectors)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	if testing.Verbose() {
		t.Logf("%s", out)
	}
}

func TestNode(t *testing.T) { suite(t, "node", "npm", "test", "--silent") }
func TestPHP(t *testing.T)  { suite(t, "php", "phpunit", "--colors=never") }
func TestPython(t *testing.T) {
	suite(t, "python", "python3", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
}
