package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopy_WritesThroughTmpAndRenames(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "f"), filepath.Join(dir, "f.part")
	n, err := Copy(path, tmp, strings.NewReader("hello"))
	if err != nil || n != 5 {
		t.Fatalf("Copy: %d, %v", n, err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "hello" {
		t.Fatalf("path holds %q, %v", got, err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tmp left behind: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

func TestCopy_AReadErrorLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path, tmp := filepath.Join(dir, "f"), filepath.Join(dir, "f.tmp")
	if _, err := Copy(path, tmp, failingReader{}); err == nil {
		t.Fatal("Copy of a failing reader succeeded")
	}
	for _, p := range []string{path, tmp} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists after a failed copy: %v", p, err)
		}
	}
}
