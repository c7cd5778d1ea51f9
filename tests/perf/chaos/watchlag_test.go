package main

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

func TestLaggedBodyHoldsEachChunkForTheLagOfItsArrival(t *testing.T) {
	src, w := io.Pipe()
	lag := &watchLag{}
	lag.set(150 * time.Millisecond)
	b := newLaggedBody(src, lag.get)
	defer func() { _ = b.Close() }()

	start := time.Now()
	go func() {
		_, _ = w.Write([]byte("first "))
		time.Sleep(50 * time.Millisecond) // the pump stamps the chunk meanwhile
		lag.set(0)
		_, _ = w.Write([]byte("second")) // due at once, but after the first

		_ = w.Close()
	}()
	var got bytes.Buffer
	buf := make([]byte, 4)
	var firstAt time.Duration
	for {
		n, err := b.Read(buf)
		if n > 0 && firstAt == 0 {
			firstAt = time.Since(start)
		}
		got.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != "first second" {
		t.Errorf("read %q, want the chunks in order", got.String())
	}
	if firstAt < 150*time.Millisecond {
		t.Errorf("the first chunk came after %s, before its lag of 150ms", firstAt)
	}
}

func TestLaggedBodyCloseEndsAWait(t *testing.T) {
	src, w := io.Pipe()
	defer func() { _ = w.Close() }()
	lag := &watchLag{}
	lag.set(time.Hour)
	b := newLaggedBody(src, lag.get)
	go func() { _, _ = w.Write([]byte("held")) }()
	done := make(chan error)
	go func() {
		_, err := b.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	_ = b.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a read ended by Close returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the held read")
	}
}
