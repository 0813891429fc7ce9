// Command sdkecho hosts and dials a service with OpenZiti's Go SDK
// (sdk-golang v1.7.0), so that edgectl's data plane is tested with the SDK
// applications use, not only with the tunnelers. It lives in a module of
// its own: edgectl's main module never requires OpenZiti's.
//
//	sdkecho host -i host.json -s echo[,echo2,...]
//	    listens on each service (all at once: each listener is a terminator
//	    its router creates) and echoes every connection; prints
//	    "listening" once the listeners are made, runs until killed
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
	"strings"
	"sync"
	"time"

	"github.com/openziti/sdk-golang/ziti"
	"github.com/sirupsen/logrus"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "host" && os.Args[1] != "dial") {
		fmt.Fprintln(os.Stderr, "usage: sdkecho host|dial -i IDENTITY -s SERVICE [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet("sdkecho "+mode, flag.ExitOnError)
	identity := fs.String("i", "", "the enrolled identity file")
	service := fs.String("s", "", "the service, or services separated by commas")
	size := fs.Int("bytes", 1<<20, "dial: the size of the first connection's payload")
	sequential := fs.Int("sequential", 20, "dial: sequential connections after the first")
	concurrent := fs.Int("concurrent", 8, "dial: concurrent connections after those")
	_ = fs.Parse(os.Args[2:])
	if *identity == "" || *service == "" {
		fmt.Fprintln(os.Stderr, "sdkecho: -i and -s are required")
		os.Exit(2)
	}
	logrus.SetLevel(logrus.WarnLevel)
	ctx, err := ziti.NewContextFromFile(*identity)
	if err != nil {
		fail(fmt.Errorf("load the identity %s: %w", *identity, err))
	}
	defer ctx.Close()
	services := strings.Split(*service, ",")
	if mode == "host" {
		fail(host(ctx, services))
	}
	for _, s := range services {
		if err := dial(ctx, s, *size, *sequential, *concurrent); err != nil {
			fail(fmt.Errorf("%s: %w", s, err))
		}
	}
	fmt.Println("ok")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sdkecho:", err)
	os.Exit(1)
}

// host listens on every service at once and echoes every connection until
// a listener fails.
func host(ctx ziti.Context, services []string) error {
	lns := make([]net.Listener, len(services))
	errs := make([]error, len(services))
	var wg sync.WaitGroup
	for i, s := range services {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lns[i], errs[i] = ctx.Listen(s); errs[i] != nil {
				errs[i] = fmt.Errorf("listen on %s: %w", s, errs[i])
			}
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
