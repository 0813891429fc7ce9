package fsm

import (
	"context"
	"errors"
	"slices"
	"testing"

	"edgectl/store"
)

// Every command this binary applies is of a version it claims, and every
// versioned command is one it applies.
func TestCommandVersions(t *testing.T) {
	f := New(store.New())
	for typ := range f.handlers {
		if v := VersionOf(typ); v < 1 || v > CommandVersion {
			t.Errorf("%s: command version %d, this binary applies up to %d", typ, v, CommandVersion)
		}
	}
	newest := 1
	for typ, v := range commandSince {
		if _, ok := f.handlers[typ]; !ok {
			t.Errorf("%s has a command version but no handler", typ)
		}
		newest = max(newest, v)
	}
	if newest != CommandVersion {
		t.Errorf("the newest command is of version %d, CommandVersion is %d", newest, CommandVersion)
	}
}

// The command types of version 1, pinned: a command declared with version
// 1 by mistake would reach a node of an older release, which would stop on
// it in a rolling upgrade; here it shows as a command of version 1 that is
// not in this list. Declare it with the next version (and raise
// CommandVersion); only a command that really shipped in version 1 belongs
// here.
func TestCommandsOfVersionOneArePinned(t *testing.T) {
	pinned := []string{
		"apiSession.create",
		"apiSession.delete",
		"apiSession.touch",
		"apiSessionCertificate.create",
		"apiSessionCertificate.delete",
		"authPolicy.create",
		"authPolicy.delete",
		"authPolicy.update",
		"authenticator.create",
		"authenticator.delete",
		"authenticator.extend",
		"authenticator.extendVerify",
		"authenticator.password",
		"authenticator.reEnroll",
		"authenticator.requestExtend",
		"authenticator.update",
		"authn.login",
		"authn.loginFailed",
		"bootstrap",
		"ca.create",
		"ca.delete",
		"ca.update",
		"ca.verify",
		"config.create",
		"config.delete",
		"config.update",
		"configType.create",
		"configType.delete",
		"configType.update",
		"controller.register",
		"controller.remove",
		"edgeRouter.create",
		"edgeRouter.delete",
		"edgeRouter.reEnroll",
		"edgeRouter.update",
		"enrollment.ca",
		"enrollment.consume",
		"enrollment.create",
		"enrollment.delete",
		"enrollment.refresh",
		"externalJwtSigner.create",
		"externalJwtSigner.delete",
		"externalJwtSigner.update",
		"failedRequest.record",
		"identity.create",
		"identity.delete",
		"identity.disable",
		"identity.enable",
		"identity.trace",
		"identity.update",
		"identityServiceConfigs.add",
		"identityServiceConfigs.remove",
		"integrity.fix",
		"joinToken.consume",
		"joinToken.create",
		"mfa.accept",
		"mfa.create",
		"mfa.delete",
		"mfa.recoveryCodes",
		"mfa.verify",
		"policy.create",
		"policy.delete",
		"policy.update",
		"posture.responses",
		"posture.sweep",
		"postureCheck.create",
		"postureCheck.delete",
		"postureCheck.update",
		"router.create",
		"router.delete",
		"router.enroll",
		"router.extend",
		"router.update",
		"service.create",
		"service.delete",
		"service.update",
		"session.create",
		"session.delete",
		"terminator.create",
		"terminator.delete",
		"terminator.update",
	}
	f := New(store.New())
	for typ := range f.handlers {
		if VersionOf(typ) == 1 && !slices.Contains(pinned, string(typ)) {
			t.Errorf("command %s has no version: declare it with command(name, N), N the next version, and raise CommandVersion", typ)
		}
	}
	for _, typ := range pinned {
		if _, ok := f.handlers[CommandType(typ)]; !ok {
			t.Errorf("command %s of version 1 is gone: a cluster of an older release may still send it", typ)
		} else if VersionOf(CommandType(typ)) != 1 {
			t.Errorf("command %s shipped in version 1 but is now of version %d", typ, VersionOf(CommandType(typ)))
		}
	}
}

// countingProposer counts the commands proposed through it and fails them.
type countingProposer struct{ n int }

var errProposed = errors.New("proposed")

func (p *countingProposer) Apply(context.Context, []byte) ([]byte, uint64, error) {
	p.n++
	return nil, 0, errProposed
}

// The Writer asks its gate before proposing a command newer than version
// 1, and proposes nothing the gate refuses; commands of version 1 go
// without asking.
func TestWriter_TheGateRefusesBeforeProposing(t *testing.T) {
	p := &countingProposer{}
	w := NewWriter(p, nil)
	var asked []CommandType
	refusal := &VersionError{Command: CmdLoginFailedAudit, Need: VersionOf(CmdLoginFailedAudit), NodeID: "n2", NodeVersion: "v0.0.9", NodeCommandVersion: 1}
	w.SetGate(func(t CommandType) error {
		asked = append(asked, t)
		return refusal
	})
	if _, err := w.Do(context.Background(), CmdLoginFailedAudit, struct{}{}); !errors.Is(err, refusal) || p.n != 0 {
		t.Fatalf("a refused command: %v, %d proposed", err, p.n)
	}
	if _, err := w.Do(context.Background(), CmdIdentityCreate, struct{}{}); !errors.Is(err, errProposed) || p.n != 1 {
		t.Fatalf("a command of version 1: %v, %d proposed", err, p.n)
	}
	if !slices.Equal(asked, []CommandType{CmdLoginFailedAudit}) {
		t.Errorf("the gate was asked about %v", asked)
	}
}
