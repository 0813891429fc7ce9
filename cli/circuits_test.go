package cli

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAgeInWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		300 * time.Millisecond:        "under a second",
		time.Second:                   "1 second",
		42 * time.Second:              "42 seconds",
		3*time.Minute + 5*time.Second: "3 minutes 5 seconds",
		time.Hour:                     "1 hour",
		time.Hour + 5*time.Minute:     "1 hour 5 minutes",
		50*time.Hour + 10*time.Minute: "2 days 2 hours",
		-time.Second:                  "under a second",
	} {
		if got := ageInWords(d); got != want {
			t.Errorf("ageInWords(%s) = %q, want %q", d, got, want)
		}
	}
}

func TestDataPlaneWhat_SaysWhoWhatAndWhy(t *testing.T) {
	for raw, want := range map[string]string{
		`{"namespace":"circuit","action":"failed","circuitId":"c1","identityName":"alice","serviceName":"web","cause":"noTerminator","reason":"no host"}`:                                "c1 alice → web cause noTerminator (no host)",
		`{"namespace":"circuit","action":"ended","circuitId":"c2","identityName":"alice","serviceName":"web","pathNames":["r1","r2"],"durationMillis":65000,"bytesIn":10,"bytesOut":20}`: "c2 alice → web via r1 > r2 after 1 minute 5 seconds 10 bytes in, 20 out",
		`{"namespace":"usage","action":"service","serviceName":"web","routerName":"r1","bytesIn":5,"bytesOut":6}`:                                                                        "web at r1 5 bytes in, 6 out",
		`{"namespace":"link","action":"down","linkId":"l1","srcRouterId":"a","dstRouterId":"b"}`:                                                                                         "l1 a → b",
	} {
		var e map[string]any
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			t.Fatal(err)
		}
		if got := dataPlaneWhat(e); got != want {
			t.Errorf("dataPlaneWhat(%s)\n got %q\nwant %q", raw, got, want)
		}
	}
}
