package policy

import (
	"slices"
	"strings"
	"time"
)

// Posture check types.
const (
	CheckOS           = "OS"
	CheckMAC          = "MAC"
	CheckMFA          = "MFA"
	CheckProcess      = "PROCESS"
	CheckProcessMulti = "PROCESS_MULTI"
	CheckDomain       = "DOMAIN"
)

// ResponseEndpointState is the posture response type of wake and unlock
// events, which feed MFA checks (no check type is named after it).
const ResponseEndpointState = "ENDPOINT_STATE"

// CheckType describes one posture check type, once: its name, the operating
// systems its type record lists, the posture response that carries the data
// it judges, and its judge. The bootstrap records, the API's list of valid
// types and the evaluator all read this table, so they cannot disagree; the
// API adds the writable fields and the view of each type (api/posturechecks.go),
// and a test there checks that every type here has both.
type CheckType struct {
	Name string
	// OperatingSystems are the systems the type's record lists; nil for a
	// type that is not tied to an operating system.
	OperatingSystems []string
	// Response is the typeId of the posture response that feeds the check.
	Response string
	judge    func(c *Check, d *Data, now time.Time, r *Result) bool
}

// allOS are the operating systems of the types that list them.
var allOS = []string{"Windows", "WindowsServer", "Linux", "macOS", "iOS", "Android"}

// checkTypes is the table, in the order of the bootstrap records.
var checkTypes = []CheckType{
	{Name: CheckOS, OperatingSystems: allOS, Response: CheckOS, judge: evalOS},
	{Name: CheckMAC, Response: CheckMAC, judge: evalMAC},
	{Name: CheckMFA, Response: ResponseEndpointState, judge: evalMFA},
	{Name: CheckProcess, OperatingSystems: allOS, Response: CheckProcess, judge: evalProcesses},
	{Name: CheckProcessMulti, OperatingSystems: allOS, Response: CheckProcess, judge: evalProcesses},
	{Name: CheckDomain, Response: CheckDomain, judge: evalDomain},
}

// CheckTypes returns every posture check type, in bootstrap order.
func CheckTypes() []CheckType { return slices.Clone(checkTypes) }

// LookupCheckType returns the type named name.
func LookupCheckType(name string) (CheckType, bool) {
	for _, t := range checkTypes {
		if t.Name == name {
			return t, true
		}
	}
	return CheckType{}, false
}

// CheckTypeNames lists the type names, in bootstrap order.
func CheckTypeNames() []string {
	names := make([]string, len(checkTypes))
	for i, t := range checkTypes {
		names[i] = t.Name
	}
	return names
}

// ResponseOf is the posture response type that feeds checks of type name
// ("" for an unknown type).
func ResponseOf(name string) string {
	t, _ := LookupCheckType(name)
	return t.Response
}

func evalMAC(c *Check, d *Data, _ time.Time, r *Result) bool {
	note(r.Expected, "macAddresses", c.MacAddresses)
	note(r.Actual, "macAddresses", d.MACs)
	return anyMAC(c.MacAddresses, d.MACs)
}

func evalDomain(c *Check, d *Data, _ time.Time, r *Result) bool {
	note(r.Expected, "domains", c.Domains)
	if d.Domain == nil {
		return false
	}
	note(r.Actual, "domain", *d.Domain)
	for _, want := range c.Domains {
		if strings.EqualFold(want, *d.Domain) {
			return true
		}
	}
	return false
}
