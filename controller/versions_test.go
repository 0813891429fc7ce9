package controller

import (
	"errors"
	"strings"
	"testing"

	"edgectl/fsm"
	"edgectl/store"
)

// The gate refuses a command that a member cannot apply, by the command
// version in that member's controller record, naming the member and its
// release; it takes it once every other member can; it never asks about
// this node; and a member without a record yet counts as version 1.
func TestCommandGate_RefusesACommandAMemberCannotApply(t *testing.T) {
	// The newest command this binary applies, and a member one version
	// behind it.
	newest := fsm.CmdEdgeRouterCreateWithIdentity
	if fsm.VersionOf(newest) != fsm.CommandVersion {
		t.Fatalf("no command of version %d to try the gate with: name the newest in this test", fsm.CommandVersion)
	}
	records := map[string]*store.Controller{
		"self":   nil,
		"new":    {Version: "v9.9.9", CommandVersion: fsm.CommandVersion},
		"behind": {Version: "v0.0.9", CommandVersion: fsm.CommandVersion - 1},
	}
	record := func(id string) *store.Controller { return records[id] }

	err := gateCommand(newest, "self", []string{"self", "new", "behind"}, record)
	var ve *fsm.VersionError
	if !errors.As(err, &ve) {
		t.Fatalf("a member one version behind: %v, want a *fsm.VersionError", err)
	}
	if ve.NodeID != "behind" || ve.NodeVersion != "v0.0.9" || ve.NodeCommandVersion != fsm.CommandVersion-1 || ve.Need != fsm.CommandVersion {
		t.Errorf("refusal %+v", ve)
	}
	for _, want := range []string{"behind", "v0.0.9", string(newest)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not name %q", err, want)
		}
	}
	// A command that member applies passes.
	if err := gateCommand(fsm.CmdJoinTokenDelete, "self", []string{"self", "new", "behind"}, record); err != nil {
		t.Errorf("a command of version %d: %v", fsm.VersionOf(fsm.CmdJoinTokenDelete), err)
	}
	// Once upgraded, the newest command passes; this node needs no record.
	records["behind"] = &store.Controller{Version: "v9.9.9", CommandVersion: fsm.CommandVersion}
	if err := gateCommand(newest, "self", []string{"self", "new", "behind"}, record); err != nil {
		t.Errorf("every member upgraded: %v", err)
	}
	// A member that has written no record yet counts as version 1.
	err = gateCommand(fsm.CmdJoinTokenDelete, "self", []string{"self", "joining"}, record)
	if !errors.As(err, &ve) || ve.NodeID != "joining" || ve.NodeCommandVersion != 1 || !strings.Contains(err.Error(), "not known yet") {
		t.Errorf("a member without a record: %v", err)
	}
}
