package gdbstub

import (
	"bufio"
	"errors"
	"io"
)

// Framing of the GDB remote serial protocol ("Overview" and "Binary data"
// in gdb's manual, appendix E):
//
//	$payload#cc     cc: two hex digits, the sum of the payload bytes mod 256
//	+ / -           acknowledgements (not sent after QStartNoAckMode)
//	0x03            an interrupt request (^C) outside any packet
//
// Inside a payload '}' escapes the next byte (which is then XORed with
// 0x20), and "X*n" repeats X n-29 times (run-length encoding). Escapes
// are what lets binary data (X packets, qXfer replies) hold '$', '#', '}'
// and '*'.

// DefaultPacketSize is the largest payload the stub accepts and sends
// (advertised as PacketSize in qSupported). Incoming packets whose raw or
// decoded payload is longer are refused with an error reply; the reader
// never allocates more than this per packet.
const DefaultPacketSize = 0x4000

// frameKind says what readFrame found.
type frameKind uint8

const (
	framePacket    frameKind = iota // a packet with a good checksum
	frameBadSum                     // a complete packet whose checksum is wrong
	frameTooLong                    // a packet longer than the limit (skipped to its end)
	frameBadEncode                  // a malformed escape or run length
	frameInterrupt                  // a 0x03 byte outside a packet
	frameAck                        // '+'
	frameNak                        // '-'
)

// errTooLong and errBadEncoding are decodePayload's failures.
var (
	errTooLong     = errors.New("gdbstub: packet too long")
	errBadEncoding = errors.New("gdbstub: malformed escape or run-length encoding")
)

// frameReader reads frames from the client. buf is reused between
// packets: a payload is valid until the next call.
type frameReader struct {
	r   *bufio.Reader
	max int
	raw []byte // the undecoded payload, capacity max
	out []byte // the decoded payload, capacity max
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 4096), max: max,
		raw: make([]byte, 0, max), out: make([]byte, 0, max)}
}

// next returns the next frame. Bytes outside packets other than '+', '-'
// and 0x03 are line noise and skipped. The payload of framePacket is
// decoded (escapes and run lengths expanded). An error is the reader's
// (io.EOF when the client went away, also in the middle of a packet).
func (f *frameReader) next() (frameKind, []byte, error) {
	for {
		c, err := f.r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		switch c {
		case '+':
			return frameAck, nil, nil
		case '-':
			return frameNak, nil, nil
		case 0x03:
			return frameInterrupt, nil, nil
		case '$':
			return f.packet()
		}
	}
}

// packet reads the rest of a packet after '$'.
func (f *frameReader) packet() (frameKind, []byte, error) {
	f.raw = f.raw[:0]
	var sum byte
	tooLong := false
	for {
		c, err := f.r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		if c == '#' {
			break
		}
		if c == '$' {
			// A new packet starts before this one ended (gdb resends
			// after a timeout): drop the partial one.
			f.raw = f.raw[:0]
			sum = 0
			tooLong = false
			continue
		}
		sum += c
		if len(f.raw) == f.max {
			tooLong = true
			continue
		}
		f.raw = append(f.raw, c)
	}
	var hx [2]byte
	for i := range hx {
		c, err := f.r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		hx[i] = c
	}
	if tooLong {
		return frameTooLong, nil, nil
	}
	want, ok := hexByte(hx[0], hx[1])
	if !ok || want != sum {
		return frameBadSum, nil, nil
	}
	out, err := decodePayload(f.out[:0], f.raw, f.max)
	if err != nil {
		if err == errTooLong {
			return frameTooLong, nil, nil
		}
		return frameBadEncode, nil, nil
	}
	f.out = out
	return framePacket, out, nil
}

// decodePayload expands escapes and run lengths of raw into dst, which
// never grows past max bytes.
func decodePayload(dst, raw []byte, max int) ([]byte, error) {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch c {
		case '}':
			if i+1 >= len(raw) {
				return dst, errBadEncoding
			}
			i++
			c = raw[i] ^ 0x20
		case '*':
			if len(dst) == 0 || i+1 >= len(raw) {
				return dst, errBadEncoding
			}
			i++
			n := int(raw[i]) - 29
			// gdb never uses '#' or '$' as counts (they would end or
			// start a packet); the range is 3 .. 97 repeats.
			if n < 3 || n > 126-29 {
				return dst, errBadEncoding
			}
			if len(dst)+n > max {
				return dst, errTooLong
			}
			last := dst[len(dst)-1]
			for ; n > 0; n-- {
				dst = append(dst, last)
			}
			continue
		}
		if len(dst) == max {
			return dst, errTooLong
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// encodePacket frames payload with escapes for '$', '#', '}' and '*' and
// the checksum.
func encodePacket(dst, payload []byte) []byte {
	dst = append(dst, '$')
	var sum byte
	for _, c := range payload {
		switch c {
		case '$', '#', '}', '*':
			dst = append(dst, '}', c^0x20)
			sum += '}' + (c ^ 0x20)
		default:
			dst = append(dst, c)
			sum += c
		}
	}
	return append(dst, '#', hexDigits[sum>>4], hexDigits[sum&15])
}

const hexDigits = "0123456789abcdef"

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func hexByte(a, b byte) (byte, bool) {
	h, ok1 := unhex(a)
	l, ok2 := unhex(b)
	return h<<4 | l, ok1 && ok2
}

// appendHex appends b as lower-case hex.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// decodeHex decodes an even-length hex string into dst.
func decodeHex(dst, s []byte) ([]byte, bool) {
	if len(s)%2 != 0 {
		return dst, false
	}
	for i := 0; i < len(s); i += 2 {
		b, ok := hexByte(s[i], s[i+1])
		if !ok {
			return dst, false
		}
		dst = append(dst, b)
	}
	return dst, true
}

// parseHex parses a hex number of at most 16 digits (no sign, no prefix).
func parseHex(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		d, ok := unhex(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}
