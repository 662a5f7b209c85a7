package batcher

import (
	"testing"
	"time"
)

func TestDropLogLogsAtMostOncePerInterval(t *testing.T) {
	var d DropLog
	if n := d.Add(3, time.Hour); n != 3 {
		t.Fatalf("first drops: log %d, want 3", n)
	}
	if n := d.Add(2, time.Hour); n != 0 {
		t.Fatalf("within the interval: log %d, want 0", n)
	}
	if n := d.Add(4, time.Hour); n != 0 {
		t.Fatalf("within the interval: log %d, want 0", n)
	}
	d.last = d.last.Add(-time.Hour) // the interval has passed
	if n := d.Add(1, time.Hour); n != 7 {
		t.Fatalf("after the interval: log %d, want the 7 not logged yet", n)
	}
	if n := d.Add(1, time.Hour); n != 0 {
		t.Fatalf("right after logging: log %d, want 0", n)
	}
}
