// Command sdkecho hosts and dials a service with OpenZiti's Go SDK
// (sdk-golang v1.7.0), so that edgectl's data plane is tested with the SDK
// applications use, not only with the tunnelers. It lives in a module of
// its own: edgectl's main module never requires OpenZiti's.
//
//	sdkecho host -i host.json[,host2.json,...] [-identities DIR] [-parallel N] [-retry D] -s echo[,echo2,...]
//	    each identity (those -i names and every *.json in DIR), with a
//	    context of its own as if it were its own process, listens on each
//	    service (all at once: each listener is a terminator its router
//	    creates, through up to 3 routers: sdk-golang's default) and echoes
//	    every connection; N identities start at a time (default 16); a
//	    failed Listen is tried again for -retry; prints one "listening"
//	    line once every listener is made, runs until killed
//	sdkecho dial -i client.json -s echo[,echo2,...] [-bytes N] [-sequential N] [-concurrent N]
//	    dials each service in turn: one connection with N random bytes,
//	    then N sequential and N concurrent ones with small payloads, each
//	    echoed byte for byte; exits 0 when all came back, 1 with the first
//	    error
//
// The integration test TestTraffic_SDKListenAndDial builds and runs it.
package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openziti/sdk-golang/ziti"
	"github.com/openziti/sdk-golang/ziti/edge/posture"
	"github.com/sirupsen/logrus"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "host" && os.Args[1] != "dial") {
		fmt.Fprintln(os.Stderr, "usage: sdkecho host|dial -i IDENTITY -s SERVICE [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet("sdkecho "+mode, flag.ExitOnError)
	identity := fs.String("i", "", "the enrolled identity file (host: or files separated by commas)")
	dir := fs.String("identities", "", "host: also every *.json identity file in this directory")
	parallel := fs.Int("parallel", 16, "host: identities starting to listen at a time")
	retry := fs.Duration("retry", 0, "host: try a failed Listen again (each 1 s, then up to 10 s apart) for this long; 0: exit at once")
	service := fs.String("s", "", "the service, or services separated by commas")
	size := fs.Int("bytes", 1<<20, "dial: the size of the first connection's payload")
	sequential := fs.Int("sequential", 20, "dial: sequential connections after the first")
	concurrent := fs.Int("concurrent", 8, "dial: concurrent connections after those")
	_ = fs.Parse(os.Args[2:])
	files, err := identityFiles(*identity, *dir)
	switch {
	case err != nil:
		usage(err.Error())
	case len(files) == 0 || *service == "":
		usage("-s and an identity (-i, or -identities with host) are required")
	case mode == "dial" && (len(files) != 1 || *dir != ""):
		usage("dial takes one identity (-i)")
	case *parallel < 1:
		usage(fmt.Sprintf("-parallel must be at least 1, not %d", *parallel))
	case *retry < 0:
		usage(fmt.Sprintf("-retry must not be negative, not %s", *retry))
	}
	logrus.SetLevel(logrus.WarnLevel)
	dumpOnSignal()
	ctxs := make([]ziti.Context, len(files))
	for i, f := range files {
		if ctxs[i], err = ziti.NewContextFromFile(f); err != nil {
			fail(fmt.Errorf("load the identity %s: %w", f, err))
		}
		defer ctxs[i].Close()
	}
	shareOsInfo(ctxs)
	services := strings.Split(*service, ",")
	if mode == "host" {
		fail(host(ctxs, files, services, *parallel, *retry))
	}
	for _, s := range services {
		if err := dial(ctxs[0], s, *size, *sequential, *concurrent); err != nil {
			fail(fmt.Errorf("%s: %w", s, err))
		}
	}
	fmt.Println("ok")
}

// dumpOnSignal writes every goroutine's stack to stderr at each SIGUSR1,
// between two marker lines, and goes on: a test that finds the host stuck
// reads where it waits.
func dumpOnSignal() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
			fmt.Fprintf(os.Stderr, "---- goroutines ----\n%s---- end of goroutines ----\n", b.String())
		}
	}()
}

// identityFiles are the files list names (separated by commas) and the
// *.json files in dir, in order.
func identityFiles(list, dir string) ([]string, error) {
	var files []string
	if list != "" {
		files = strings.Split(list, ",")
	}
	if dir != "" {
		more, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			return nil, fmt.Errorf("-identities %s: %w", dir, err)
		}
		if len(more) == 0 {
			return nil, fmt.Errorf("-identities %s: no *.json identity file there", dir)
		}
		files = append(files, more...)
	}
	for _, f := range files {
		if f == "" {
			return nil, fmt.Errorf("-i %q: an empty identity file name", list)
		}
	}
	return files, nil
}

func usage(msg string) {
	fmt.Fprintln(os.Stderr, "sdkecho:", msg)
	os.Exit(2)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sdkecho:", err)
	os.Exit(1)
}

// shareOsInfo gives every context of a process hosting several the OS
// facts read once. sdk-golang's posture cache reads them at each Listen
// and every 10 s per context, and gopsutil runs /usr/bin/lsb_release for
// them where /etc/lsb-release is missing (Debian): a thousand contexts in
// a few processes would fork a hundred a second on one machine, where a
// thousand real hosts read each its own machine's. What they report is
// the same.
func shareOsInfo(ctxs []ziti.Context) {
	if len(ctxs) < 2 {
		return
	}
	info := posture.NewOsProvider().GetOsInfo()
	for _, c := range ctxs {
		if impl, ok := c.(*ziti.ContextImpl); ok && impl.CtrlClt != nil && impl.CtrlClt.PostureCache != nil {
			impl.CtrlClt.PostureCache.OsProvider = posture.OsProviderFunc(func() posture.OsInfo { return info })
		}
	}
}

// host makes every context (of the identity file files names) listen on
// every service, parallel contexts at a time, a failed Listen tried again
// for retry, then echoes every connection until a listener fails.
func host(ctxs []ziti.Context, files, services []string, parallel int, retry time.Duration) error {
	lns := make([]net.Listener, len(ctxs)*len(services))
	errs := make([]error, len(lns))
	slots := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for c, ctx := range ctxs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			var each sync.WaitGroup
			for s, svc := range services {
				each.Add(1)
				go func() {
					defer each.Done()
					k := c*len(services) + s
					start, wait := time.Now(), time.Second
					for {
						if lns[k], errs[k] = ctx.Listen(svc); errs[k] == nil {
							return
						}
						errs[k] = fmt.Errorf("%s: listen on %s: %w", files[c], svc, errs[k])
						if time.Since(start)+wait > retry {
							return
						}
						fmt.Fprintf(os.Stderr, "sdkecho: %v (again in %s)\n", errs[k], wait)
						time.Sleep(wait)
						wait = min(2*wait, 10*time.Second)
					}
				}()
			}
			each.Wait()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Println("listening")
	failed := make(chan error, len(lns))
	for _, ln := range lns {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					failed <- fmt.Errorf("accept: %w", err)
					return
				}
				go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
			}
		}()
	}
	return <-failed
}

func dial(ctx ziti.Context, service string, size, sequential, concurrent int) error {
	once := func(n int) error {
		data := make([]byte, n)
		_, _ = rand.Read(data)
		return echo(ctx, service, data)
	}
	if err := once(size); err != nil {
		return fmt.Errorf("%d bytes: %w", size, err)
	}
	for i := range sequential {
		if err := once(64); err != nil {
			return fmt.Errorf("sequential connection %d: %w", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, concurrent)
	for i := range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := once(64 << 10); err != nil {
				errs <- fmt.Errorf("concurrent connection %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// echo dials the service, sends data and checks it comes back byte for byte.
func echo(ctx ziti.Context, service string, data []byte) error {
	c, err := ctx.Dial(service)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	werr := make(chan error, 1)
	go func() { _, err := c.Write(data); werr <- err }()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(c, got); err != nil {
		return fmt.Errorf("read back %d bytes: %w", len(data), err)
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if !bytes.Equal(got, data) {
		return errors.New("the bytes came back changed")
	}
	return nil
}
