package controller

import (
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// AdminSocket is the name of the local admin socket in the data dir.
const AdminSocket = "admin.sock"

// startAdminSocket serves the Management API on a Unix socket in the data
// dir, readable by the owner only, for `edgectl cluster ...` on this machine.
func (n *Node) startAdminSocket() error {
	path := filepath.Join(n.cfg.DataDir, AdminSocket)
	// A socket left by a crashed run would make Listen fail; nothing else uses this name.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	old := umask(0o177)
	ln, err := net.Listen("unix", path)
	umask(old)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	n.adminSrv = &http.Server{Handler: n.API.LocalAdminHandler(), ReadHeaderTimeout: 10 * time.Second}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := n.adminSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.log.Error("admin socket stopped", "error", err)
		}
	}()
	return nil
}
