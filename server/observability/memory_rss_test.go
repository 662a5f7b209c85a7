package observability

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// rssBound is the resident set the memory tests allow the whole test process: the live-heap bound plus the
// runtime's own overhead (stacks, GC metadata, the test binary's code and the request bodies). Without the
// byte bound on the buffer, the decoded metadata alone (~330 MB) would pass it.
const rssBound = memoryBound + 96<<20

// residentBytes returns the process's resident set size (VmRSS) after returning freed memory to the OS,
// and false where /proc/self/status is not available (not Linux).
func residentBytes() (int64, bool) {
	debug.FreeOSMemory() // a GC, then freed spans go back to the OS: RSS measures what is still held
	f, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte("VmRSS:")) {
			continue
		}
		fields := bytes.Fields(line[len("VmRSS:"):])
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(fields[0]), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// checkResident fails the test when the process's RSS is over rssBound. The race detector multiplies
// memory use (shadow memory), so under -race the figure is logged, not checked.
func checkResident(t *testing.T, when string) {
	t.Helper()
	rss, ok := residentBytes()
	if !ok {
		t.Logf("%s: RSS not measured (no /proc/self/status)", when)
		return
	}
	t.Logf("%s: RSS %d MiB (bound %d MiB)", when, rss>>20, rssBound>>20)
	if !raceEnabled && rss > rssBound {
		t.Fatalf("%s: the process RSS is %d MiB, over the bound of %d MiB", when, rss>>20, rssBound>>20)
	}
}
