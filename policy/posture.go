package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// MFAGrace is how long an MFA check keeps passing after a wake or unlock
// event before it needs a new TOTP code (spec: five minutes).
const MFAGrace = 5 * time.Minute

// OSRule is one operating system a check accepts, with version statements.
type OSRule struct {
	Type     string
	Versions []string
}

// ProcessRule is one process a check looks for.
type ProcessRule struct {
	OSType             string
	Path               string
	Hashes             []string
	SignerFingerprints []string
}

// Check is a posture check as the evaluator needs it.
type Check struct {
	ID, Name, TypeID string
	OperatingSystems []OSRule
	MacAddresses     []string
	TimeoutSeconds   int64
	PromptOnWake     bool
	PromptOnUnlock   bool
	Semantic         string // AllOf or OneOf, for PROCESS_MULTI
	Processes        []ProcessRule
	Domains          []string
}

// OSData is the operating system an endpoint reported.
type OSData struct {
	Type, Version, Build string
}

// ProcessData is what an endpoint reported about one process.
type ProcessData struct {
	IsRunning          bool
	Hash               string
	SignerFingerprints []string
}

// MFAData is the TOTP state of an API session.
type MFAData struct {
	PassedMfa      bool
	PassedAt       *time.Time
	PassedOnWake   bool
	PassedOnUnlock bool
}

// Data is the posture an API session reported, plus its MFA state.
type Data struct {
	OS         *OSData
	MACs       []string
	Domain     *string
	Processes  map[string]ProcessData // by path
	MFA        MFAData
	UnlockedAt *time.Time
	WokenAt    *time.Time
}

// Result is the verdict on one check.
type Result struct {
	Passing bool
	// Timeout and TimeoutRemaining are seconds, -1 when the check does not time out.
	Timeout, TimeoutRemaining int64
	Actual, Expected          map[string]any
}

// Evaluate judges a check against reported data at now. The clock is passed
// in, so tests move it and every caller judges with its own request time.
func Evaluate(c *Check, d *Data, now time.Time) Result {
	r := Result{Timeout: -1, TimeoutRemaining: -1, Actual: map[string]any{}, Expected: map[string]any{}}
	judge(c, d, now, &r)
	return r
}

// Judge is Evaluate without the Actual and Expected details (both nil): the
// verdict and the timeouts only, for callers that show no failure details.
// The Client API's posture queries judge every check on every service list,
// and building the details was most of the cost of a judgement.
func Judge(c *Check, d *Data, now time.Time) Result {
	r := Result{Timeout: -1, TimeoutRemaining: -1}
	judge(c, d, now, &r)
	return r
}

// note records a detail of a judgement; details are off when m is nil.
func note(m map[string]any, k string, v any) {
	if m != nil {
		m[k] = v
	}
}

func judge(c *Check, d *Data, now time.Time, r *Result) {
	if d == nil {
		d = &Data{}
	}
	if t, ok := LookupCheckType(c.TypeID); ok {
		r.Passing = t.judge(c, d, now, r)
	}
}

// NormalizeOS makes OS type spellings comparable: "Windows Server", "WINDOWS_SERVER" and "windowsserver" agree.
func NormalizeOS(s string) string {
	s = strings.ToUpper(osSeparators.Replace(s))
	if s == "MAXOC" || s == "DARWIN" || s == "MACOSX" {
		return "MACOS"
	}
	return s
}

func evalOS(c *Check, d *Data, _ time.Time, r *Result) bool {
	note(r.Expected, "operatingSystems", c.OperatingSystems)
	if d.OS == nil {
		return false
	}
	note(r.Actual, "type", d.OS.Type)
	note(r.Actual, "version", d.OS.Version)
	note(r.Actual, "build", d.OS.Build)
	for _, rule := range c.OperatingSystems {
		if NormalizeOS(rule.Type) != NormalizeOS(d.OS.Type) {
			continue
		}
		if len(rule.Versions) == 0 {
			return true
		}
		v, err := osVersion(d.OS.Version, d.OS.Build)
		if err != nil {
			return false
		}
		for _, stmt := range rule.Versions {
			if con, err := parsedConstraint(stmt); err == nil && con.Check(v) {
				return true
			}
		}
	}
	return false
}

// osVersion reads a reported OS version. A version without a patch level
// takes the build number as its patch (spec: compared by its build number).
func osVersion(version, build string) (*semver.Version, error) {
	version = strings.TrimSpace(version)
	if parts := strings.Split(version, "."); len(parts) == 2 && build != "" {
		version = fmt.Sprintf("%s.%s", version, strings.TrimSpace(build))
	}
	return parsedVersion(version)
}

func normMAC(s string) string {
	return strings.ToUpper(macSeparators.Replace(s))
}

// The replacers are built once: posture checks run on every session create and response.
var (
	osSeparators  = strings.NewReplacer(" ", "", "_", "", "-", "")
	macSeparators = strings.NewReplacer(":", "", "-", "", ".", "")
)

func anyMAC(allowed, reported []string) bool {
	for _, a := range allowed {
		for _, m := range reported {
			if normMAC(a) == normMAC(m) {
				return true
			}
		}
	}
	return false
}

func processOK(rule ProcessRule, d *Data) (bool, ProcessData) {
	p, ok := d.Processes[rule.Path]
	if !ok || !p.IsRunning {
		return false, p
	}
	if len(rule.Hashes) > 0 && !containsFold(rule.Hashes, p.Hash) {
		return false, p
	}
	if len(rule.SignerFingerprints) > 0 {
		found := false
		for _, f := range p.SignerFingerprints {
			found = found || containsFold(rule.SignerFingerprints, f)
		}
		if !found {
			return false, p
		}
	}
	return true, p
}

func containsFold(l []string, s string) bool {
	for _, x := range l {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func evalProcesses(c *Check, d *Data, _ time.Time, r *Result) bool {
	note(r.Expected, "semantic", c.Semantic)
	note(r.Expected, "processes", c.Processes)
	var actual []any
	if r.Actual != nil {
		actual = []any{}
	}
	passed := 0
	for _, rule := range c.Processes {
		ok, p := processOK(rule, d)
		if ok {
			passed++
		}
		if actual != nil {
			actual = append(actual, map[string]any{"path": rule.Path, "isRunning": p.IsRunning, "hash": p.Hash, "signerFingerprints": p.SignerFingerprints})
		}
	}
	note(r.Actual, "processes", actual)
	if c.TypeID == CheckProcessMulti && (c.Semantic == "OneOf" || c.Semantic == "AnyOf") {
		return passed > 0
	}
	return len(c.Processes) > 0 && passed == len(c.Processes)
}

func evalMFA(c *Check, d *Data, now time.Time, r *Result) bool {
	note(r.Expected, "passedMfa", true)
	note(r.Actual, "passedMfa", d.MFA.PassedMfa)
	if c.PromptOnWake {
		note(r.Expected, "passedOnWake", true)
		note(r.Actual, "passedOnWake", d.MFA.PassedOnWake)
	}
	if c.PromptOnUnlock {
		note(r.Expected, "passedOnUnlock", true)
		note(r.Actual, "passedOnUnlock", d.MFA.PassedOnUnlock)
	}
	if !d.MFA.PassedMfa || d.MFA.PassedAt == nil {
		return false
	}
	passedAt := *d.MFA.PassedAt
	remaining := int64(-1)
	if c.TimeoutSeconds > 0 {
		r.Timeout = c.TimeoutSeconds
		left := passedAt.Add(time.Duration(c.TimeoutSeconds) * time.Second).Sub(now)
		if left <= 0 {
			r.TimeoutRemaining = 0
			return false
		}
		remaining = int64(left / time.Second)
	}
	// A wake or unlock after the last TOTP gives five minutes, then needs a new code.
	for _, ev := range []struct {
		on bool
		at *time.Time
	}{{c.PromptOnWake, d.WokenAt}, {c.PromptOnUnlock, d.UnlockedAt}} {
		// An event at the very instant of the code counts as after it: the safe side asks for a new code.
		if !ev.on || ev.at == nil || ev.at.Before(passedAt) {
			continue
		}
		left := ev.at.Add(MFAGrace).Sub(now)
		if left <= 0 {
			r.TimeoutRemaining = 0
			return false
		}
		if r.Timeout < 0 {
			r.Timeout = int64(MFAGrace / time.Second)
		}
		if secs := int64(left / time.Second); remaining < 0 || secs < remaining {
			remaining = secs
		}
	}
	r.TimeoutRemaining = remaining
	return true
}
