package main

import (
	"testing"

	"github.com/openziti/sdk-golang/ziti"
	"github.com/openziti/sdk-golang/ziti/edge/posture"
)

// TestShareOsInfo_ContextsOfOneProcessReadTheOSOnce: contexts hosted in
// one process report the OS facts read once, not each through gopsutil
// (a fork of /usr/bin/lsb_release per context every 10 s on Debian); one
// context alone keeps sdk-golang's own provider.
func TestShareOsInfo_ContextsOfOneProcessReadTheOSOnce(t *testing.T) {
	newCtx := func() *ziti.ContextImpl {
		ctx, err := ziti.NewContext(&ziti.Config{ZtAPI: "https://127.0.0.1:1/edge/client/v1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(ctx.Close)
		return ctx.(*ziti.ContextImpl)
	}
	alone := newCtx()
	shareOsInfo([]ziti.Context{alone})
	if _, ok := alone.CtrlClt.PostureCache.OsProvider.(*posture.DefaultOsProvider); !ok {
		t.Fatalf("one context: its OS provider is %T, not sdk-golang's own", alone.CtrlClt.PostureCache.OsProvider)
	}
	want := posture.NewOsProvider().GetOsInfo()
	ctxs := []ziti.Context{newCtx(), newCtx(), newCtx()}
	shareOsInfo(ctxs)
	for i, c := range ctxs {
		p := c.(*ziti.ContextImpl).CtrlClt.PostureCache.OsProvider
		if _, ok := p.(posture.OsProviderFunc); !ok {
			t.Fatalf("context %d: its OS provider is %T, not the shared answer", i, p)
		}
		if got := p.GetOsInfo(); got != want {
			t.Fatalf("context %d reports %+v, the machine %+v", i, got, want)
		}
	}
}
