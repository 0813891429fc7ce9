// Package atomicfile writes files that appear whole or not at all.
package atomicfile

import (
	"io"
	"os"
)

// Copy writes r to the file tmp (mode 0600), syncs it and renames it to
// path, so path never holds part of r; on an error before the rename tmp is
// removed. It returns the number of bytes written.
func Copy(path, tmp string, r io.Reader) (int64, error) {
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return n, os.Rename(tmp, path)
}
