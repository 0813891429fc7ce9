// Command edgectl runs and operates the controller; everything it does is in
// package cli (docs/cli.md).
package main

import (
	"os"

	"edgectl/cli"
)

// Set at build time with -ldflags "-X main.version=...".
var (
	version   = "v0.1.0"
	revision  = "unknown"
	buildDate = "unknown"
)

func main() {
	os.Exit(cli.Main(cli.Build{Version: version, Revision: revision, Date: buildDate}))
}
