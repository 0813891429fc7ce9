package controller

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestConfigRefusesBadEventAndProfileFlags: each bad value is refused
// before anything starts, with the flag named.
func TestConfigRefusesBadEventAndProfileFlags(t *testing.T) {
	t.Parallel()
	for flag, c := range map[string]Config{
		"--enable-pprof":           {EnablePprof: true},
		"--events-file-max-size":   {EventsFileMaxSize: 100},
		"--events-file-keep":       {EventsFileKeep: -1},
		"--event-retention-count":  {EventRetentionCount: -5},
		"--event-retention":        {EventRetention: time.Second},
		"--raft-segment-size":      {RaftSegmentSize: 100},
		"--smart-reroute-interval": {SmartRerouteInterval: -time.Second},
		"--router-grace":           {RouterGrace: time.Millisecond},
		"--max-terminator-creates": {MaxTerminatorCreates: -1},
	} {
		c.AdminPassword = "a-long-password"
		c.Defaults()
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming the flag", flag, err)
		}
	}
	for _, o := range []string{"*", "https://*.example", "zac.example", "https://zac.example/console", "ftp://zac.example", "https://ZAC.example"} {
		c := Config{AdminPassword: "a-long-password", CORSOrigins: []string{o}}
		c.Defaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--cors-origins") {
			t.Errorf("--cors-origins %s: error %v, want one naming the flag", o, err)
		}
	}
	ok := Config{EnablePprof: true, MetricsAddr: "127.0.0.1:0", EventsFileMaxSize: 4096, AdminPassword: "a-long-password",
		CORSOrigins: []string{"https://zac.example:8443", "http://127.0.0.1:4200"}}
	ok.Defaults()
	if err := ok.Validate(); err != nil {
		t.Fatalf("good values refused: %v", err)
	}
}

// TestConfigRefusesOnePortForTwoListeners: the API and the cluster port
// must differ, or the second bind fails after a join has spent its token.
func TestConfigRefusesOnePortForTwoListeners(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]string{{"127.0.0.1:4000", "127.0.0.1:4000"}, {":4000", "127.0.0.1:4000"}, {"127.0.0.1:4000", "0.0.0.0:4000"}} {
		c := Config{APIAddr: pair[0], ClusterAddr: pair[1], AdminPassword: "a-long-password"}
		c.Defaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--api-addr") || !strings.Contains(err.Error(), "--cluster-addr") {
			t.Errorf("%v: error %v, want one naming both flags", pair, err)
		}
	}
	for _, pair := range [][2]string{{"127.0.0.1:0", "127.0.0.1:0"}, {"127.0.0.1:4000", "127.0.0.2:4000"}, {"127.0.0.1:4000", "127.0.0.1:4001"}} {
		c := Config{APIAddr: pair[0], ClusterAddr: pair[1], AdminPassword: "a-long-password"}
		c.Defaults()
		if err := c.Validate(); err != nil {
			t.Errorf("%v refused: %v", pair, err)
		}
	}
}

// TestCheckListenable: a held port is refused, a free one and port 0 pass.
func TestCheckListenable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := ln.Addr().String()
	if err := checkListenable(held); err == nil {
		t.Error("a held port passed")
	}
	ln.Close()
	if err := checkListenable(held); err != nil {
		t.Errorf("a free port refused: %v", err)
	}
	if err := checkListenable("127.0.0.1:0"); err != nil {
		t.Errorf("port 0 refused: %v", err)
	}
}

// TestConfigGivenZeroIsCheckedAsGiven: a zero left out is the default (the
// library's Config{} and a flag not given), but a zero given is a value:
// refused where it would silently become the default, kept where zero has a
// meaning.
func TestConfigGivenZeroIsCheckedAsGiven(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"data-dir", "api-addr", "cluster-addr", "router-grace", "max-terminator-creates",
		"gc-percent", "gc-headroom", "admin-username", "read-consistency", "event-retention-count", "event-retention",
		"snapshot-threshold", "snapshot-interval", "trailing-logs", "raft-segment-size", "events-file-max-size",
		"session-timeout", "data-plane-events-format", "data-plane-event-retention-count", "data-plane-event-retention"} {
		c := Config{AdminPassword: "a-long-password"}
		if err := c.ValidateGiven(func(f string) bool { return f == flag }); err == nil || !strings.Contains(err.Error(), "--"+flag+" ") {
			t.Errorf("--%s given as zero: error %v, want one naming the flag", flag, err)
		}
		c.Defaults()
		if err := c.Validate(); err != nil {
			t.Errorf("--%s left out: refused: %v", flag, err)
		}
	}
	for _, flag := range []string{"smart-reroute-interval", "events-file-keep"} {
		c := Config{AdminPassword: "a-long-password"}
		if err := c.ValidateGiven(func(f string) bool { return f == flag }); err != nil {
			t.Errorf("--%s 0 (it has a meaning) refused: %v", flag, err)
		}
	}
}
