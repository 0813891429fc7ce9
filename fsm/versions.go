package fsm

import "fmt"

// Command versions make rolling upgrades safe. Every binary knows the
// newest command version it can apply (CommandVersion) and publishes it in
// its controller record; a command type's version is that of the first
// binary able to apply it. The Writer's gate refuses to propose a command
// that some member cannot apply, so no node ever meets a command it does
// not know (it would have to stop: skipping it would diverge).
//
// Adding a command type: declare it with command(name, version), the
// version being the next one, and raise CommandVersion to it. Changing what
// an existing command means is a new command type, never an edit of the
// old one. TestCommandsOfVersionOneArePinned and TestCommandVersions check
// the set.

// CommandVersion is the newest command version this binary applies.
const CommandVersion = 9

// commandSince holds every command type and its version, as declared.
var commandSince = map[CommandType]int{}

// command declares a command type and the command version that introduced
// it: 1 for the command set of the binaries that did not publish a command
// version yet.
func command(name string, version int) CommandType {
	t := CommandType(name)
	if _, dup := commandSince[t]; dup || version < 1 {
		panic(fmt.Sprintf("fsm: command %q declared twice or with version %d", name, version))
	}
	commandSince[t] = version
	return t
}

// VersionOf is the command version of t (1 for a type never declared).
func VersionOf(t CommandType) int {
	if v, ok := commandSince[t]; ok {
		return v
	}
	return 1
}

// VersionError: a member of the cluster cannot apply a command yet.
type VersionError struct {
	Command            CommandType
	Need               int    // the command's version
	NodeID             string // the member that lacks it
	NodeVersion        string // its release ("" = not known: it has published no controller record yet)
	NodeCommandVersion int
}

func (e *VersionError) Error() string {
	release := e.NodeVersion
	if release == "" {
		release = "a release not known yet (no controller record)"
	}
	return fmt.Sprintf("member %s runs %s (command version %d), which cannot apply %s (command version %d): upgrade it first",
		e.NodeID, release, e.NodeCommandVersion, e.Command, e.Need)
}
