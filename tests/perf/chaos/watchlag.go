package main

import (
	"io"
	"sync"
	"time"
)

// watchLag is the delay the API proxy adds to the replicas' pod watches: zero, except during a
// slow spell, when their pod caches fall behind the API server as they do behind a slow one.
// Safe for concurrent use.
type watchLag struct {
	mu sync.Mutex
	d  time.Duration
}

func (l *watchLag) set(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = d
}

func (l *watchLag) get() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.d
}

// laggedBody hands over a watch's body as it came, each chunk held until the lag current when it
// arrived has passed. Chunks keep their order: when the lag shrinks, the held ones come in a burst.
type laggedBody struct {
	src    io.ReadCloser
	chunks chan lagChunk
	done   chan struct{}
	once   sync.Once
	err    error // the source's error, set before chunks is closed
	cur    []byte
}

type lagChunk struct {
	data []byte
	due  time.Time
}

func newLaggedBody(src io.ReadCloser, lag func() time.Duration) *laggedBody {
	b := &laggedBody{src: src, chunks: make(chan lagChunk, 256), done: make(chan struct{})}
	go b.pump(lag)
	return b
}

// pump reads the source as fast as it delivers and stamps each chunk with its due time.
func (b *laggedBody) pump(lag func() time.Duration) {
	defer close(b.chunks)
	for {
		buf := make([]byte, 32<<10)
		n, err := b.src.Read(buf)
		if n > 0 {
			select {
			case b.chunks <- lagChunk{data: buf[:n], due: time.Now().Add(lag())}:
			case <-b.done:
				return
			}
		}
		if err != nil {
			b.err = err
			return
		}
	}
}

func (b *laggedBody) Read(p []byte) (int, error) {
	if len(b.cur) == 0 {
		c, ok := <-b.chunks
		if !ok {
			return 0, b.err
		}
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-b.done:
				t.Stop()
				return 0, io.ErrClosedPipe
			}
		}
		b.cur = c.data
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

func (b *laggedBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return b.src.Close()
}
