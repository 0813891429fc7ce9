package fsm

import "fmt"

// Command versions make rolling upgrades safe. Every binary knows the
// newest command version it can apply (CommandVersion) and publishes it in
// its controller record; a command type's version is that of the first
// binary able to apply it. The Writer's gate refuses to propose a command
// that some member cannot apply, so no node ever meets a command it does
// not know (it would have to stop: skipping it would diverge).
//
// Adding a command type: give it the next version here, and raise
// CommandVersion to it. Changing what an existing command means is a new
// command type, never an edit of the old one.

// CommandVersion is the newest command version this binary applies.
const CommandVersion = 8

// commandSince holds the command types newer than version 1 (the command
// set of the binaries that did not publish a command version yet).
var commandSince = map[CommandType]int{
	CmdJoinTokenDelete: 2,
	CmdBuiltinsEnsure:  3,
	CmdJWTsReissue:     3,
	CmdEventsEnable:    4,

	CmdEventSubscriptionCreate:    5,
	CmdEventSubscriptionUpdate:    5,
	CmdEventSubscriptionDelete:    5,
	CmdEventSubscriptionDelivered: 5,
	CmdEventsCluster:              5,
	CmdClusterEvent:               5,

	CmdDataPlaneKeysEnsure: 6,
	CmdRouterReport:        6,
	CmdRouterExtendPending: 6,
	CmdRouterExtendVerify:  6,
	CmdRouterEvent:         6,

	CmdTerminatorCreateByRouter:  6,
	CmdTerminatorUpdateByRouter:  6,
	CmdTerminatorsDeleteByRouter: 6,
	CmdEdgeRouterDeleteAll:       6,
	CmdRouterDeleteAll:           6,

	CmdSessionKeyRotate: 7,

	CmdLoginFailedAudit: 8,
}

// VersionOf is the command version of t.
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
