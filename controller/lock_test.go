package controller

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second node on a data dir that a running node holds fails at once,
// naming the dir and the holder; once the first has shut down, the dir can
// be used again.
func TestDataDirLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := Config{DataDir: dir, APIAddr: "127.0.0.1:0", ClusterAddr: "127.0.0.1:0",
		AdminPassword: "admin-password-1", MaintenanceInterval: time.Hour}
	ctx := context.Background()
	first, err := Start(ctx, cfg, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	second, err := Start(ctx, cfg, nil, io.Discard)
	if err == nil {
		_ = second.Shutdown(ctx)
		_ = first.Shutdown(ctx)
		t.Fatal("a second node started on a data dir in use")
	}
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second start: %v, want ErrDataDirInUse", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("second start took %v to fail", took)
	}
	for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}

	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := Start(ctx, cfg, nil, io.Discard)
	if err != nil {
		t.Fatalf("start after shutdown: %v", err)
	}
	if err := again.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
