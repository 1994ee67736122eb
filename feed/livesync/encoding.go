package livesync

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// compressedMarker starts the data of a chunk compressed by the writer's
// enableCompression setting (commonlib compress.ts).
const compressedMarker = "\x0eLZ\x1d"

// inflate undoes the writer's compression: after the marker, an optional "~"
// (the original data was base64, so re-encode it), then base64 of raw DEFLATE,
// or, from builds of 2024-04-19, "%" and a latin-1 string of those bytes.
func inflate(s string) (string, error) {
	body := strings.TrimPrefix(s, compressedMarker)
	rebase64 := strings.HasPrefix(body, "~")
	if rebase64 {
		body = body[1:]
	}
	var packed []byte
	var err error
	if latin1, ok := strings.CutPrefix(body, "%"); ok {
		packed, err = decodeLatin1(latin1)
	} else {
		packed, err = decodeBase64(body)
	}
	if err != nil {
		return "", fmt.Errorf("%w: compressed chunk: %w", ErrMalformed, err)
	}
	if len(packed) == 0 {
		return "", nil
	}
	out, err := io.ReadAll(flate.NewReader(bytes.NewReader(packed)))
	if err != nil {
		return "", fmt.Errorf("%w: inflate: %w", ErrMalformed, err)
	}
	if rebase64 {
		return base64.StdEncoding.EncodeToString(out), nil
	}
	return string(out), nil
}

// decodeBase64 reads standard base64 with or without padding, as atob does.
func decodeBase64(s string) ([]byte, error) {
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

func decodeLatin1(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("character %U is not latin-1", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// decodeBinary turns the pieces of a binary file into its bytes. Each piece
// is base64 on its own (padding may sit inside the joined string), except the
// 0.20.x encoding: a leading "%" on the first piece marks every piece as one
// code unit per byte (octagonal-wheels encodedUTF16.ts).
func decodeBinary(pieces []string) ([]byte, error) {
	if len(pieces) > 0 && strings.HasPrefix(pieces[0], "%") {
		var out []byte
		for i, p := range pieces {
			if i == 0 {
				p = p[1:]
			}
			b, err := decodeUTF16Binary(p)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		return out, nil
	}
	var out []byte
	for _, p := range pieces {
		b, err := decodeBase64(p)
		if err != nil {
			return nil, fmt.Errorf("%w: binary chunk: %w", ErrMalformed, err)
		}
		out = append(out, b...)
	}
	return out, nil
}

// decodeUTF16Binary: printable ASCII other than ':' stands for itself, every
// other byte b was written as the code unit 0xC0+b.
func decodeUTF16Binary(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r >= 0x26 && r <= 0x7e && r != ':':
			out = append(out, byte(r))
		case r >= 0xc0 && r <= 0x1bf:
			out = append(out, byte(r-0xc0))
		default:
			return nil, fmt.Errorf("%w: binary chunk: code unit %U", ErrMalformed, r)
		}
	}
	return out, nil
}
