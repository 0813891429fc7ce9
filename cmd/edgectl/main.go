// Command edgectl runs and operates the controller; everything it does is in
// package cli (docs/cli.md).
package main

import (
	"os"

	"edgectl"
	"edgectl/cli"
)

// Set at build time with -ldflags "-X main.version=..."; an empty version
// is the release in the file VERSION (edgectl.Version).
var (
	version   = ""
	revision  = "unknown"
	buildDate = "unknown"
)

func main() {
	if version == "" {
		version = edgectl.Version
	}
	os.Exit(cli.Main(cli.Build{Version: version, Revision: revision, Date: buildDate}))
}
