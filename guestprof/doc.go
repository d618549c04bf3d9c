// Package guestprof profiles guest programs: placeholder doc, rewritten below.
package guestprof
