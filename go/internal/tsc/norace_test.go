//go:build !race

package tsc

const raceEnabled = false
