// Copyright 2026 The edgectl authors
// This Source Code Form is subject to the terms of the Mozilla Public License, v. 2.0. If a copy of the MPL
// was not distributed with this file, You can obtain one at https://mozilla.org/MPL/2.0/.

package iradix

import "sync/atomic"

// edgectl patch: lazy watch channels.
//
// Upstream gives every node and every leaf its own channel, made when the node
// is made and closed when a tracked transaction replaces it. A channel is a
// 96-byte allocation the collector must scan; with two or more per inserted
// key they were about half of a large tree's memory and a fifth of a write's
// allocations, and a program that never watches pays all of it.
//
// A lazyWatch makes its channel on the first GetWatch or SeekPrefixWatch that
// lands on it. fire is the close: it leaves the watch pointing at a channel
// that is already closed, so a watch taken from an old snapshot after the
// transaction that replaced its node has committed fires at once, as upstream's
// closed channel would. Load, CompareAndSwap and Swap make the first watcher
// and the notifier agree on one channel, and close it at most once, whatever
// their order.

// closedChannel is the channel of every watch that has fired.
var closedChannel = func() *chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return &ch
}()

// lazyWatch is a node's or a leaf's mutation channel, made on first use.
type lazyWatch struct {
	ch atomic.Pointer[chan struct{}]
}

// channel returns the watch's channel, making it if no one asked before.
func (w *lazyWatch) channel() <-chan struct{} {
	if p := w.ch.Load(); p != nil {
		return *p
	}
	ch := make(chan struct{})
	if w.ch.CompareAndSwap(nil, &ch) {
		return ch
	}
	return *w.ch.Load()
}

// fire closes the watch's channel, or marks it closed if none was made yet.
func (w *lazyWatch) fire() {
	if p := w.ch.Swap(closedChannel); p != nil && p != closedChannel {
		close(*p)
	}
}

// closed reports whether the watch has fired (for tests).
func (w *lazyWatch) closed() bool {
	return w.ch.Load() == closedChannel
}

// LazyWatch is the watch of a seek, whose channel is made only when Channel
// is called (edgectl patch, for go-memdb's iterators, which hand a seek's
// watch to their callers but are mostly read without it).
type LazyWatch struct {
	w *lazyWatch
}

// Channel returns the watch's channel (nil for the zero LazyWatch, which
// never fires, as upstream's iterators without a watch).
func (lw LazyWatch) Channel() <-chan struct{} {
	if lw.w == nil {
		return nil
	}
	return lw.w.channel()
}

// SeekPrefixLazyWatch is SeekPrefixWatch returning the watch unmade.
func (i *Iterator) SeekPrefixLazyWatch(prefix []byte) LazyWatch {
	return LazyWatch{i.seekPrefix(prefix)}
}

// SeekPrefixLazyWatch is SeekPrefixWatch returning the watch unmade.
func (ri *ReverseIterator) SeekPrefixLazyWatch(prefix []byte) LazyWatch {
	return LazyWatch{ri.i.seekPrefix(prefix)}
}
