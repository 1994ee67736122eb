//go:build !race

package bge

const raceEnabled = false
