package controller

import (
	"strings"
	"testing"
	"time"
)

// TestConfigRefusesBadEventAndProfileFlags: each bad value is refused
// before anything starts, with the flag named.
func TestConfigRefusesBadEventAndProfileFlags(t *testing.T) {
	t.Parallel()
	for flag, c := range map[string]Config{
		"--enable-pprof":          {EnablePprof: true},
		"--events-file-max-size":  {EventsFileMaxSize: 100},
		"--events-file-keep":      {EventsFileKeep: -1},
		"--event-retention-count": {EventRetentionCount: -5},
		"--event-retention":       {EventRetention: time.Second},
		"--raft-segment-size":     {RaftSegmentSize: 100},
	} {
		c.AdminPassword = "a-long-password"
		c.Defaults()
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming the flag", flag, err)
		}
	}
	ok := Config{EnablePprof: true, MetricsAddr: "127.0.0.1:0", EventsFileMaxSize: 4096, AdminPassword: "a-long-password"}
	ok.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
}
