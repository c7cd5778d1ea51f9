package perfkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100 on every
// Linux architecture the programs run on.
const clockTicks = 100

// Usage is a process's resource usage at one instant.
type Usage struct {
	// RSS is the resident set size (VmRSS), PeakRSS its high-water mark (VmHWM), in bytes.
	RSS, PeakRSS int64
	// CPU is the user and system CPU time used since the process started.
	CPU time.Duration
}

// ReadUsage reads the usage of process pid from /proc/<pid>/status and /proc/<pid>/stat.
func ReadUsage(pid int) (Usage, error) {
	var u Usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 || fields[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "VmRSS:":
			u.RSS = kb * 1024
		case "VmHWM:":
			u.PeakRSS = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// The fields after the command name, which is in parentheses and may hold spaces; utime
	// and stime are fields 14 and 15 of the whole line.
	s := string(stat)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(rest) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var ticks int64
	for _, f := range rest[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return u, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	u.CPU = time.Duration(ticks) * time.Second / clockTicks
	return u, nil
}

// MiB formats a byte count in mebibytes.
func MiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
