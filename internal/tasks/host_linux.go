//go:build linux

package tasks

const hostIsLinux = true
