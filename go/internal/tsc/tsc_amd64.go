//go:build gc && !purego

package tsc

import (
	"os"
	"runtime"
	"strings"
)

// counter is RDTSC.
//
//go:noescape
func counter() uint64

// cpuid runs CPUID with leaf in EAX and 0 in ECX.
//
//go:noescape
func cpuid(leaf uint32) (eax, edx uint32)

// invariant: CPUID leaf 0x8000_0007, EDX bit 8 — and, on Linux, the kernel
// keeps the TSC as its clock source (it switches away when it finds the
// counters of its CPUs out of step, which the CPUID bit does not promise).
var invariant = func() bool {
	max, _ := cpuid(0x8000_0000)
	if max < 0x8000_0007 {
		return false
	}
	_, edx := cpuid(0x8000_0007)
	return edx&(1<<8) != 0 && kernelTrusts()
}()

func kernelTrusts() bool {
	if runtime.GOOS != "linux" {
		return true
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	return err != nil || strings.TrimSpace(string(b)) == "tsc"
}

// Read is the time-stamp counter, if the CPU says it is invariant.
func Read() (uint64, bool) {
	if !invariant {
		return 0, false
	}
	return counter(), true
}
